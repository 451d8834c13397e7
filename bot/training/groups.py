"""Training questions read the way the bot serves them: a question's document is cut into sentences, the sentences
that share most of the question's words are read each with its neighbours (as bot.answer.read ranks and reads them),
and the reader learns over all of a question's windows at once (shared normalization, Clark & Gardner 2018: one
softmax over every window's spans and the no-answer position), so that a span's score means the same in every window
and the no-answer score is weighed against all of them.

Hard unanswerables come from answerable questions: the windows holding the answer's sentence are left out (as when
retrieval misses it), so the question must be declined from the windows that are left."""

import math
import random
from collections import Counter
from dataclasses import replace
from functools import cache, lru_cache
from pathlib import Path

from tqdm import tqdm

from bot.answer.terms import terms_of
from bot.answer.understand import question_terms
from bot.training.examples import (
    SQUAD_DIR,
    Example,
    boolq_examples,
    by_paragraph,
    follow_ups,
    squad_examples,
    squad_train_examples,
    train_titles,
    user_question_examples,
)
from bot.training.fine_tune import TrainConfig
from bot.training.objective import Group, Window
from index.text.pipeline import paragraphs

WINDOWS = 4  # the sentences the bot reads per question (Settings.reader_windows)


@cache
def _sentencizer():
    """spaCy's rule-based sentence splitter: the serving path's parser is too slow for 100,000 paragraphs."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@lru_cache(maxsize=4096)
def sentences_of(text: str) -> list[tuple[int, int]]:
    """Character spans of the text's sentences (paragraph breaks always end one)."""
    spans = []
    for start, paragraph in paragraphs(text):
        doc = _sentencizer()(paragraph)
        spans += [(start + s.start_char, start + s.end_char) for s in doc.sents if s.text.strip()]
    return spans


def window_spans(text: str, question: str, k: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """(sentence index, start, end) of the k windows the bot would read, and of every window: the sentences whose window (with the
    sentence before and after) holds most of the question's terms, IDF-weighted within the text (the serving path's
    terms, bot.answer.read's coverage; its other half, the cosine, is left out: embedding every training window
    would cost more than the training)."""
    sents = sentences_of(text)
    if not sents:
        return [], []
    windows = [(sents[max(0, i - 1)][0], sents[min(len(sents) - 1, i + 1)][1]) for i in range(len(sents))]
    held = [terms_of(text[a:b]) for a, b in windows]
    df = Counter(t for terms in held for t in terms)
    asked = question_terms(question)
    score = [sum(math.log(1 + len(held) / df[t]) for t in asked & terms) for terms in held]
    order = sorted(range(len(sents)), key=lambda i: -score[i])
    return [(i, *windows[i]) for i in order[:k]], [(i, *windows[i]) for i in range(len(sents))]


def group_of(
    question: str,
    document: str,
    answer: tuple[int, int] | None,
    rng: random.Random,
    history: str = "",
    drop_answer: bool = False,
    k: int = WINDOWS,
    source: str = "",
) -> Group | None:
    """The windows read for a question over `document`; `answer`: its character span there (None: unanswerable).
    Where ranking misses the answer's sentence it is put in place of the last window (retrieval finds most answers);
    with `drop_answer`, every window holding it is left out instead, and the group is unanswerable. None when the
    answer's words are in the windows left but not at the gold place (the label would be wrong)."""
    ranked, every = window_spans(document, question, k)
    if not ranked:
        return None
    chosen = list(ranked)
    if answer is not None:
        holding = [w for w in every if w[1] <= answer[0] and answer[1] <= w[2]]
        if drop_answer:
            chosen = [w for w in every if w not in holding]
            chosen = [w for w in ranked if w in chosen] + [w for w in chosen if w not in ranked]
            chosen = chosen[:k]
        elif holding and not any(w in holding for w in chosen):
            chosen[-1] = rng.choice(holding)
    if not chosen:  # a document of a sentence or two, all of it holding the answer: nothing is left to decline from
        return None
    rng.shuffle(chosen)
    windows = []
    for _, a, b in chosen:
        spans = ()
        if answer is not None and not drop_answer and a <= answer[0] and answer[1] <= b:
            spans = ((answer[0] - a, answer[1] - a),)
        windows.append(Window(document[a:b], spans))
    if answer is not None:
        said = document[answer[0] : answer[1]].lower()
        if not any(w.answers for w in windows) and any(said in w.text.lower() for w in windows):
            return None
    return Group(question, history, tuple(windows), source=source)


def groups_from_examples(
    examples: list[Example], documents: dict[str, str], drop_share: float, rng: random.Random
) -> list[Group]:
    """Span examples as groups over their documents (`documents[ex.context]`: the text the example's context sits in,
    e.g. its paragraph with others of its article); a `drop_share` of the answerable ones lose the answer's windows.
    Yes/no examples become one-window rows for the yes/no head."""
    groups = []
    for ex in tqdm(examples, desc="choosing each question's windows", unit="question", disable=len(examples) < 1000):
        if ex.yes_no is not None:
            groups.append(Group(ex.question, ex.history, (Window(ex.context),), yes_no=ex.yes_no, source=ex.article))
            continue
        document = documents.get(ex.context, ex.context)
        offset = document.find(ex.context)
        answer = None
        if ex.answer_start is not None and offset >= 0:
            answer = (offset + ex.answer_start, offset + ex.answer_start + len(ex.answer))
        elif ex.answer_start is not None:
            continue
        drop = answer is not None and rng.random() < drop_share
        group = group_of(ex.question, document, answer, rng, ex.history, drop, source=ex.article)
        if group:
            groups.append(group)
    return groups


def article_documents(articles: list[list[list[Example]]], others: int, rng: random.Random) -> dict[str, str]:
    """For each SQuAD paragraph, a document of it and `others` other paragraphs of its article in random order: the
    several chunks of one document retrieval brings."""
    documents = {}
    for article in articles:
        contexts = [questions[0].context for questions in article if questions]
        for context in contexts:
            rest = [c for c in contexts if c != context]
            picked = rng.sample(rest, min(others, len(rest))) + [context]
            rng.shuffle(picked)
            documents[context] = "\n".join(picked)
    return documents


def typed_like_chat(question: str, rng: random.Random) -> str:
    """A well-written question as people type it in a chat box: lowercase, no question mark, now and then a letter
    swapped or dropped in one longer word (the noise users' questions have and SQuAD's do not)."""
    if rng.random() < 0.6:
        question = question.lower()
    if rng.random() < 0.5:
        question = question.rstrip(" ?")
    words = question.split()
    long = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if long and rng.random() < 0.3:
        i = rng.choice(long)
        w, at = words[i], rng.randrange(1, len(words[i]) - 1)
        words[i] = w[:at] + w[at + 1 :] if rng.random() < 0.5 else w[: at - 1] + w[at] + w[at - 1] + w[at + 1 :]
    return " ".join(words)


def training_groups(config: TrainConfig, squad_dir: Path = SQUAD_DIR) -> list[Group]:
    """Every training question as the windows the bot would read for it, shuffled by the seed: SQuAD (1.1 train and
    the dev articles' train part, never a held-out or test article; a sample of `squad_questions`) over its
    paragraph and others of its article, follow-ups made from them, BoolQ's training titles for the yes/no head, and
    the questions typed as users type them over their whole documents. The development sets stay out: they judge."""
    rng = random.Random(config.seed)
    articles = by_paragraph(squad_examples(train_titles(squad_dir), squad_dir))
    if config.squad_train:
        articles += squad_train_examples(squad_dir)
    examples = [ex for paragraphs in articles for questions in paragraphs for ex in questions]
    examples += follow_ups(articles, config.follow_up_share, rng)
    wanted = min(config.squad_questions or len(examples), config.limit or len(examples))
    examples = rng.sample(examples, min(wanted, len(examples)))
    examples = [
        replace(ex, question=typed_like_chat(ex.question, rng)) if rng.random() < config.chat_typed_share else ex
        for ex in examples
    ]
    documents = article_documents(articles, config.other_paragraphs, rng)
    examples += boolq_examples(held_out=False) * config.boolq_repeats
    examples += user_question_examples() * config.user_question_repeats
    groups = groups_from_examples(examples, documents, config.drop_share, rng)
    rng.shuffle(groups)
    return groups[: config.limit] if config.limit else groups
