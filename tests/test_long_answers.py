"""Answers of several sentences (issue 59): the learnt form of a question, the overview without an LLM (the
document's opening, quoted), and the guard holding an LLM's long answer sentence by sentence, through the real chain
(real index, embedder, span reader) with fixed LLM texts from a fake chat model."""

import copy
import json
import time

import httpx
import numpy as np
from langchain_core.language_models import FakeListChatModel
from sklearn.feature_extraction.text import CountVectorizer

from bot.answer.forms import FORMS, FORMS_FILE, FormModel, word_features
from bot.answer.generative import Generator
from bot.answer.guard import Guard
from bot.answer.overview import asks_for_people
from bot.answer.sentence_guard import SentenceGuard
from bot.answer.understand import understand
from bot.chain import draft_chain
from bot.models import shared_embedder, shared_forms
from bot.serving import ServedBot
from tests.conftest import ARTICLE
from tests.test_api import running
from tests.test_guard import GIVES_EVERY_GROUNDED_ANSWER, bot_chain
from ui.server import create_app

ARTICLE_TEXT = ARTICLE.read_text(encoding="utf-8")


def test_word_features_are_the_ones_the_classifier_was_trained_on():
    """The form model's word features, computed at ask time without scikit-learn, equal scikit-learn's binary
    counts (L2-normalized) over the same vocabulary: a drift here would feed the weights other columns."""
    questions = ["what's this about?", "List the medal winners, pls", "why did Glenn block the camera", "tldr"]
    vocabulary = shared_forms().vocabulary
    counts = CountVectorizer(binary=True, ngram_range=(1, 2), vocabulary=vocabulary).transform(questions).toarray()
    for question, row in zip(questions, counts, strict=True):
        expected = row / np.linalg.norm(row) if row.any() else row
        assert np.allclose(word_features(question, vocabulary), expected)


def test_the_form_model_file_has_its_card_and_every_form():
    data = json.loads(FORMS_FILE.read_text())
    assert tuple(data["forms"]) == FORMS and len(data["weights"]) == len(FORMS)
    card = data["card"]
    assert card["facts_taken_for_a_longer_form"] <= 0.03, "the threshold lets too many single facts leave their path"
    assert 0.5 < card["long_threshold"] < 1


def test_questions_people_ask_first_get_their_form():
    """Questions of each form as a user types them (not in the training file) and single facts: single facts stay
    single facts, and an overview or a list is told from them."""
    forms, embedder = shared_forms(), shared_embedder(False)
    written = [
        line
        for f in (FORMS_FILE.parents[2] / "data/train").glob("question_forms*.jsonl")
        for line in f.read_text().splitlines()
    ]
    asked = {
        "what is this article about?": "overview",
        "give me a quick summary of the story": "overview",
        "who won the gold medal": "fact",
        "how many points behind was sakamoto": "fact",
        "did glenn win a medal?": "fact",
        "where were the games held": "fact",
    }
    assert not any(json.loads(line)["question"] in asked for line in written), "a test question is a training one"
    got = {q: forms.form_of(q, np.asarray(embedder.embed_query(q))) for q in asked}
    assert got == asked


def test_a_model_that_never_reaches_the_threshold_keeps_every_question_a_fact():
    """The threshold decides: with it at 1, nothing leaves the single-fact path."""
    model = shared_forms()
    strict = FormModel(model.forms, model.vocabulary, model.weights, model.bias, long_threshold=1.0 + 1e-6)
    vector = np.asarray(shared_embedder(False).embed_query("summarize the article"))
    assert model.form_of("summarize the article", vector) == "overview"
    assert strict.form_of("summarize the article", vector) == "fact"


def test_an_overview_of_something_no_document_names_is_a_single_fact():
    """ "summarize the story about the cafe" is an overview when the documents name a cafe, and a single fact (which
    the reader then declines or answers) when no document does: the summary of another story is no answer to it."""
    model = shared_forms()
    question = "summarize the story about the cafe"
    vector = np.asarray(shared_embedder(False).embed_query(question))
    assert model.form_of(question, vector) == "overview"
    assert model.form_of(question, vector, lambda term: term != "cafe") == "fact"
    assert {"summari", "tldr", "gist"} <= model.overview_terms


def test_words_that_name_nothing_keep_an_overview_an_overview():
    """Words people ask with name no topic: "hey", "lines", "mean" are in no document, and the overview stays an
    overview (it was read as a single fact and declined); the cafe is a topic."""
    model, embedder = shared_forms(), shared_embedder(False)
    knows_nothing = lambda term: False  # noqa: E731
    for question in (
        "hey whats the gist of it",
        "can u summarise it in a few lines",
        "tldr, what does it all mean",
        "summarise what happend pls",  # a word people ask with, mistyped
    ):
        vector = np.asarray(embedder.embed_query(question))
        assert model.form_of(question, vector, knows_nothing) == "overview", question
    assert model.topics("summarize the story about the cafe") == ["cafe"]
    assert model.topics("summarize the story about the caffe") == ["caff"], "a topic mistyped is still a topic"
    assert model.topics("summarise what happend to grace") == ["grace"], "a name like a word is still a name"


def long_chain(bot, form: str, llm_text: str | None, second_reading: bool = True):
    """The bot's own chain told that every question has `form`, with a fake LLM writing `llm_text` (None: no LLM)."""
    generate = Generator(FakeListChatModel(responses=[llm_text]), "fake") if llm_text is not None else None
    reader = bot.read.reader.read if second_reading else None
    guard = SentenceGuard(Guard(GIVES_EVERY_GROUNDED_ANSWER, reader)) if generate else None
    return bot_chain(
        bot,
        generate,
        guard,
        llm_reads=bot.llm_reads,
        question_form=lambda text: form,
        summaries=lambda: bot.knowledge.summaries,
        choose=bot.read.closest,
    )


def ask(chain, question: str):
    return chain.invoke({"question": question, "history": [], "timings_ms": {}})


def test_an_overview_without_an_llm_quotes_the_documents_key_sentences(bot):
    """Without an LLM, "what is this article about?" is answered with the article's key sentences (chosen at
    indexing), each quoted verbatim and cited, in the order the article has them; not declined."""
    answer = ask(long_chain(bot, "overview", None), "what is this article about?")
    assert not answer.abstained
    assert 2 <= len(answer.citations) <= 4
    starts = [ARTICLE_TEXT.index(c.quote) for c in answer.citations]
    assert starts == sorted(starts) and starts[0] < 300, "not the article's opening, in order"
    assert "Amber Glenn" in answer.answer and "Sakamoto" in answer.answer
    for c in answer.citations:
        assert f"“{c.quote.strip()}” [{c.n}]" in answer.answer


def test_an_overview_quotes_the_key_sentences_even_with_an_llm(bot):
    """With an LLM configured, an overview question is still answered by the document's key sentences, quoted: the
    LLM's text (here naming someone the article lacks) is not asked for."""
    answer = ask(long_chain(bot, "overview", "Yuzuru Hanyu won the gold medal. [1]"), "give me a summary")
    assert answer.backend == "extractive" and "Hanyu" not in answer.answer
    (summary,) = bot.knowledge.summaries.values()
    assert [c.quote for c in answer.citations] == [p.text for p in summary.sentences]


def test_the_served_bot_answers_an_overview_question(bot):
    """Through EventBot.ask, with its learnt form: the summary question gets the quoted opening."""
    answer = bot.ask("what is this article about?")
    assert not answer.abstained and len(answer.citations) >= 2
    assert all(c.quote in ARTICLE_TEXT for c in answer.citations)


def test_a_list_of_the_people_named_quotes_the_sentences_that_first_name_each(bot):
    """ "which people are mentioned in the article?" (a list, with an LLM that would name someone the article lacks):
    the sentences that first name each person in full, quoted in the article's order, name Amber Glenn, Kaori
    Sakamoto and Alysa Liu; the LLM is not asked. A role of one named person is not such a list."""
    answer = ask(
        long_chain(bot, "list", "Yuzuru Hanyu was mentioned. [1]"), "which people are mentioned in the article?"
    )
    assert answer.backend == "extractive" and "Hanyu" not in answer.answer
    assert not answer.abstained and len(answer.citations) <= 6
    people = ("Amber Glenn", "Kaori Sakamoto", "Alysa Liu")
    for name in people:
        assert name in answer.answer, name
    starts = [ARTICLE_TEXT.index(c.quote) for c in answer.citations]
    assert starts == sorted(starts)
    for c, start in zip(answer.citations, starts, strict=True):
        assert any(name in c.quote and name not in ARTICLE_TEXT[:start] for name in people), f"no one first: {c.quote}"
    assert not asks_for_people(understand("What part did Glenn play?", "role"))
    assert asks_for_people(understand("who was on the team and what did each of them do?", "role"))
    assert not asks_for_people(understand("who are the people mentioned?", "fact")), "a single fact"
    assert asks_for_people(understand("which skaters are mentioned in the article?", "list")), "a noun for a person"
    assert not asks_for_people(understand("what did the coach say about the jumps?", "list")), "the coach's words"
    assert not asks_for_people(understand("who put in the planning application?", "list")), "one person"


def test_a_long_answer_loses_the_sentence_that_does_not_hold_and_keeps_the_rest(bot):
    """An LLM's answer of three sentences (what happened, in order), one naming someone its cited passage lacks:
    that sentence is dropped, the two that hold are the answer, each with a verbatim quote."""
    passages = bot.llm_reads(bot.retriever("what is this article about?"))
    n_liu = next(n for n, p in enumerate(passages, 1) if "Alysa Liu, who would go on to win" in p.text)
    n_block = next(n for n, p in enumerate(passages, 1) if "block the camera" in p.text)
    text = (
        f"Sakamoto was consoled by American Alysa Liu, who would go on to win the gold medal. [{n_liu}] "
        f"Glenn waved her hands in front of the lens to block the camera's view. [{n_block}] "
        f"Yuzuru Hanyu also skated a clean program. [{n_block}]"
    )
    chain = long_chain(bot, "sequence", text)
    answer = ask(chain, "what happened, in order?")
    assert answer.guard == "passed" and answer.backend == "fake"
    assert "Hanyu" not in answer.answer
    assert "Alysa Liu" in answer.answer and "block the camera" in answer.answer
    assert len(answer.citations) == 2 and all(c.quote in ARTICLE_TEXT for c in answer.citations)


def test_a_fact_tied_to_the_wrong_person_is_dropped(bot):
    """ "Glenn won the gold medal" cited to the sentence that says Alysa Liu would win it: every name is in the
    passage, most of its words too, but the span reader, asked "Who won the gold medal?" there, finds Liu."""
    passages = bot.llm_reads(bot.retriever("who won the medals"))
    n_liu = next(n for n, p in enumerate(passages, 1) if "Alysa Liu, who would go on to win" in p.text)
    wrong = f"Glenn won the gold medal. [{n_liu}] Liu won the gold medal. [{n_liu}]"
    answer = ask(long_chain(bot, "list", wrong), "list the medal winners")
    assert "Glenn won" not in answer.answer
    assert "Liu won the gold medal" in answer.answer
    unchecked = ask(long_chain(bot, "list", wrong, second_reading=False), "list the medal winners")
    assert "Glenn won the gold medal" in unchecked.answer, "without the reader the relation is not checked"


def test_a_long_answer_where_nothing_holds_quotes_the_closest_sentences(bot):
    """The LLM answers, but no sentence of its answer holds: the four sentences closest to the question are the
    answer, quoted verbatim in the article's order: each says something of Glenn, among them that she stepped in to
    comfort Sakamoto."""
    answer = ask(long_chain(bot, "role", "Yuzuru Hanyu coached Glenn. [1]"), "what part did glenn play?")
    assert answer.guard == "fallback" and answer.backend == "extractive" and not answer.abstained
    assert "Hanyu" not in answer.answer and answer.answer.startswith("The article says: ")
    assert len(answer.citations) == 4
    starts = [ARTICLE_TEXT.index(c.quote) for c in answer.citations]
    assert starts == sorted(starts), "not in the article's order"
    assert all("Glenn" in c.quote for c in answer.citations)
    assert any("Glenn stepped in to comfort her" in c.quote for c in answer.citations)
    for c in answer.citations:
        assert f"“{c.quote.strip()}” [{c.n}]" in answer.answer


def test_a_long_answer_of_one_sentence_is_followed_by_the_closest_sentences_it_does_not_cite(bot):
    """One sentence of the LLM's answer holds: it stays first, then the sentences closest to the question that it
    does not cite are quoted after it, up to four cited sentences in all, each verbatim, none repeating its quote."""
    passages = bot.llm_reads(bot.retriever("why did glenn block the camera?"))
    n_block = next(n for n, p in enumerate(passages, 1) if "block the camera" in p.text)
    text = f"Glenn waved her hands in front of the lens to block the camera's view. [{n_block}]"
    answer = ask(long_chain(bot, "explain", text), "why did glenn block the camera?")
    assert answer.guard == "passed" and answer.backend == "fake"
    held, _, quoted = answer.answer.partition(" The article also says: ")
    assert held == "Glenn waved her hands in front of the lens to block the camera's view [1]."
    assert quoted and len(answer.citations) == 4
    assert "block the camera" in answer.citations[0].quote
    assert not any("block the camera" in c.quote for c in answer.citations[1:]), "the held sentence's quote again"
    for c in answer.citations[1:]:
        assert c.quote in ARTICLE_TEXT and f"“{c.quote.strip()}” [{c.n}]" in quoted


def test_a_long_answer_the_llm_declines_is_not_quoted(bot):
    """Where the LLM says the documents do not answer, the closest sentences are not offered as an answer: the
    reply step's draft (a decline or an unsure quote) stands."""
    answer = ask(long_chain(bot, "list", "Not in the documents."), "list the judges and the score each one gave")
    assert not answer.answer.startswith("The article says: ")
    assert answer.abstained


def test_the_relation_is_checked_after_an_opening_phrase(bot):
    """ "After the skate, Sakamoto waved …": the subject does not open the sentence, and the deed is Glenn's; the same
    sentence about Glenn holds."""
    passages = bot.llm_reads(bot.retriever("what is this article about?"))
    n_block = next(n for n, p in enumerate(passages, 1) if "block the camera" in p.text)
    for who, kept in (("Sakamoto", False), ("Glenn", True)):
        text = (
            f"After the skate, {who} stood up and waved her hands in front of the lens to block the camera. [{n_block}]"
        )
        answer = ask(long_chain(bot, "sequence", text), "what happened after the skate?")
        assert (f"{who} stood up" in answer.answer) is kept, answer.answer


def test_a_long_answer_is_streamed_sentence_by_sentence_as_each_holds(bot, settings):
    """Over `/v1/chat/completions` with `"stream": true`, an LLM writing a long answer slowly (a fake chat model, a
    pause after each character): the first sentence that holds arrives while the LLM is still writing, the sentence
    that does not hold never shows, and the text streamed is the answer `/api/ask` gives."""
    passages = bot.llm_reads(bot.retriever("what is this article about?"))
    n_liu = next(n for n, p in enumerate(passages, 1) if "Alysa Liu, who would go on to win" in p.text)
    n_block = next(n for n, p in enumerate(passages, 1) if "block the camera" in p.text)
    text = (
        f"Sakamoto was consoled by American Alysa Liu, who would go on to win the gold medal. [{n_liu}] "
        f"Yuzuru Hanyu also skated a clean program. [{n_block}] "
        f"Glenn waved her hands in front of the lens to block the camera's view. [{n_block}]"
    )
    writing_s = 0.02 * len(text)
    llm = Generator(FakeListChatModel(responses=[text] * 3, sleep=0.02), "fake")
    guard = SentenceGuard(Guard(GIVES_EVERY_GROUNDED_ANSWER, bot.read.reader.read))
    slow = copy.copy(bot)
    slow._answered = None  # no answer cache: each ask runs the chain
    stages = (bot.knowledge.lexicon.link, bot._condense, bot.retriever, bot.expand, bot.read, bot.decide)
    slow.drafts = draft_chain(
        *stages, llm, guard, llm_reads=bot.llm_reads, question_form=lambda q: "sequence", hold=guard.hold
    )
    served = ServedBot(slow, settings.model_copy(update={"api_key": None}), warm=False, watch=False)
    body = {"model": "eventbot", "stream": True, "messages": [{"role": "user", "content": "what happened, in order?"}]}
    with running(create_app(served)) as url, httpx.Client(base_url=url, timeout=60) as http:
        arrived: list[tuple[float, str]] = []
        started = time.perf_counter()
        with http.stream("POST", "/v1/chat/completions", json=body) as r:
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    content = json.loads(line[6:])["choices"][0]["delta"].get("content")
                    if content:
                        arrived.append((time.perf_counter() - started, content))
        plain = http.post("/api/ask", json={"question": "what happened, in order?"}).json()
    streamed = "".join(content for _, content in arrived)
    assert streamed == plain["answer"] and plain["guard"] == "passed"
    assert "Hanyu" not in streamed and "Alysa Liu" in streamed and "block the camera" in streamed
    first_s, first = arrived[0]
    assert first.startswith("Sakamoto was consoled") and first.endswith("[1].")  # a whole sentence, renumbered
    assert first_s < writing_s * 0.75, f"the first sentence came at {first_s:.2f}s of {writing_s:.2f}s of writing"


def test_sentences_held_token_by_token_are_those_held_from_the_whole_text(bot):
    """Where the text is cut into sentences does not depend on how it arrives: fed a character at a time, or given
    whole, the same sentences hold, each handed on once, and the pieces handed on are the draft's text."""
    from bot.answer.sentence_guard import HeldSentences

    passages = bot.llm_reads(bot.retriever("what is this article about?"))
    corpus = bot.expand(passages)
    n_liu = next(n for n, p in enumerate(passages, 1) if "Alysa Liu, who would go on to win" in p.text)
    n_block = next(n for n, p in enumerate(passages, 1) if "block the camera" in p.text)
    text = (
        f"Sakamoto was consoled by American Alysa Liu, who would go on to win the gold medal. [{n_liu}] [{n_block}] "
        f"Glenn waved her hands in front of the lens to block the camera's view [{n_block}]. "
        f"Yuzuru Hanyu also skated a clean program. [{n_block}] Not in the documents. [{n_liu}]"
    )
    runs = []
    for by_token in (True, False):
        handed: list[str] = []
        held = HeldSentences(passages, corpus.sentences_in, bot.read.reader.read, handed.append)
        for ch in text if by_token else ():
            held.feed(ch)
        held.finish(text)
        runs.append((handed, held.draft().text, [c.text for c in held.kept]))
    assert runs[0] == runs[1]
    handed, draft_text, kept = runs[0]
    assert "".join(handed) == draft_text and len(kept) == 2
    assert draft_text.startswith("Sakamoto was consoled") and "Hanyu" not in draft_text


def test_a_sentence_citing_a_run_of_passages_cites_the_one_that_holds_it(bot):
    """A small model cites runs of passages ("[2][3][4]"): a sentence that one of them holds alone cites that one, so
    the user sees one quote, the right one."""
    passages = bot.llm_reads(bot.retriever("what is this article about?"))
    n_liu = next(n for n, p in enumerate(passages, 1) if "Alysa Liu, who would go on to win" in p.text)
    others = "".join(f"[{n}]" for n in range(1, len(passages) + 1) if n != n_liu)
    text = f"Sakamoto was consoled by American Alysa Liu, who would go on to win the gold medal. [{n_liu}]{others}"
    answer = ask(long_chain(bot, "role", text), "what part did alysa liu play?")
    held = answer.answer.partition(" The article also says: ")[0]  # the closest sentences follow one that holds
    assert answer.guard == "passed" and held.endswith("gold medal [1].") and "[2]" not in held
    liu = [c for c in answer.citations if "Alysa Liu, who would go on to win the gold medal" in c.quote]
    assert [c.n for c in liu] == [1]
