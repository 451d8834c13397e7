"""How a reply is worded (bot.answer.reply), from the parse indexing stores: no opening connective, a quotation
never cut and said by someone, Yes/No first for a yes/no question."""

import pytest

from bot.answer.reply import quotation_around, quotation_reply, without_connective, yes_no_reply
from bot.types import Sentence, Span
from index.text.pipeline import parse_document


def sentences_of(text: str) -> list[Sentence]:
    return [
        Sentence(path="doc", source="doc", span=Span(text[p.start : p.end], p.start, p.end), index=i, parsed=p)
        for i, p in enumerate(parse_document(text))
    ]


@pytest.mark.parametrize(
    ("sentence", "reply"),
    [
        (
            "However, technical errors on a pair of jumps caused her to finish 1.91 points behind Liu.",
            "Technical errors on a pair of jumps caused her to finish 1.91 points behind Liu.",
        ),
        ("But the judges saw it differently.", "The judges saw it differently."),
        ("Still, she smiled at the end.", "She smiled at the end."),
        ("Amber Glenn finished fifth.", "Amber Glenn finished fifth."),
        ("Slowly the crowd left the arena.", "Slowly the crowd left the arena."),  # an adverb of the clause stays
    ],
)
def test_a_sentence_reply_never_opens_with_a_connective(sentence, reply):
    [s] = sentences_of(sentence)
    assert without_connective(s) == reply


TEXT = (
    "Amber Glenn stood in front of the camera.\n\n"
    "“I just wanted to protect her. She was crying and nobody should film that,” Glenn told reporters on Friday. "
    "The video spread quickly.\n\n"
    "Kaori Sakamoto said: “I wasn’t that nervous.” She will retire."
)


def test_a_span_inside_a_quotation_grows_to_the_whole_quotation_and_names_the_speaker():
    sentences = sentences_of(TEXT)
    at = TEXT.index("nobody should film")
    quotation = quotation_around(TEXT, at, at + len("nobody should film"), sentences)
    assert quotation is not None
    quoted = TEXT[quotation.start : quotation.end]
    assert quoted == "I just wanted to protect her. She was crying and nobody should film that,"
    assert quotation.speaker == "Glenn"
    assert quotation_reply(quoted, quotation.speaker).startswith("Glenn said: “I just wanted")

    at = TEXT.index("that nervous")
    quotation = quotation_around(TEXT, at, at + 4, sentences)
    assert TEXT[quotation.start : quotation.end] == "I wasn’t that nervous."
    assert quotation.speaker == "Kaori Sakamoto"


def test_a_span_outside_quotation_marks_has_no_quotation():
    at = TEXT.index("The video")
    assert quotation_around(TEXT, at, at + 9, sentences_of(TEXT)) is None


def test_yes_no_replies():
    [s] = sentences_of("However, Sakamoto plans to retire after the season.")
    assert yes_no_reply(True, s) == "Yes — Sakamoto plans to retire after the season."
    assert yes_no_reply(False, s).startswith("No — Sakamoto")


def test_a_yes_is_unsure_where_its_sentence_denies_what_is_asked():
    from bot.answer.corpus import Corpus
    from bot.answer.reply import reply_to
    from bot.types import Decision, Question

    sure_yes = Decision(True, 0.9, 0.6, yes=True)
    asked = Question("Was Sakamoto nervous?", "yes-no", frozenset({"sakamoto", "nervous"}), ("Sakamoto",))
    corpus = Corpus([], None)
    denied = reply_to(asked, reading_of("“I wasn’t that nervous,” Sakamoto said.", "nervous"), sure_yes, corpus)
    assert denied.abstained and denied.text.startswith("I'm not sure") and "wasn’t that nervous" in denied.text
    # a denial of something else in the sentence leaves the "Yes"; a "No" on a denying sentence stays
    kept = reply_to(asked, reading_of("Sakamoto was nervous but did not fall.", "nervous"), sure_yes, corpus)
    assert not kept.abstained and kept.text.startswith("Yes")
    sure_no = Decision(True, 0.9, 0.6, yes=False)
    no = reply_to(asked, reading_of("“I wasn’t that nervous,” Sakamoto said.", "nervous"), sure_no, corpus)
    assert not no.abstained and no.text.startswith("No")


def test_a_yes_is_unsure_where_its_sentence_lacks_a_number_of_the_question():
    from bot.answer.corpus import Corpus
    from bot.answer.reply import reply_to
    from bot.types import Decision, Question

    sure_yes = Decision(True, 0.9, 0.6, yes=True)
    corpus = Corpus([], None)
    sentence = "The oak boat is 7.8 metres long and about 3,400 years old."
    wrong = Question("is the boat 9 metres long", "yes-no", frozenset({"boat", "9", "metres", "long"}), ())
    unsure = reply_to(wrong, reading_of(sentence, "7.8 metres"), sure_yes, corpus)
    assert unsure.abstained and unsure.text.startswith("I'm not sure") and "7.8 metres" in unsure.text
    # the same "Yes" where the sentence holds the question's number stands
    right = Question("is the boat 7.8 metres long", "yes-no", frozenset({"boat", "7.8", "metres", "long"}), ())
    kept = reply_to(right, reading_of(sentence, "7.8 metres"), sure_yes, corpus)
    assert not kept.abstained and kept.text.startswith("Yes")
    # a month the question names is there in a date's abbreviation
    flood = Question(
        "did the flood hit in november 2023", "yes-no", frozenset({"flood", "hit", "november", "2023"}), ()
    )
    dated = reply_to(flood, reading_of("Floodwater came in on Nov. 19, 2023.", "Nov. 19"), sure_yes, corpus)
    assert not dated.abstained and dated.text.startswith("Yes")


def reading_of(text: str, span: str):
    from bot.types import Evidence, Reading

    [s] = sentences_of(text)
    at = text.index(span)
    return Reading(span, s, Evidence(question="q", span=span, sentence=text, window=text), 0.5, at, at + len(span))


def test_between_the_floor_and_the_threshold_the_reply_is_unsure_and_quotes_the_closest_sentence():
    from bot.answer.reply import is_decline, unsure
    from bot.types import Decision

    text = "Amber Glenn finished fifth in the women's singles."
    draft = unsure(1, reading_of(text, "fifth"), Decision(False, 0.4, 0.6, False, unsure=True))
    assert draft.abstained and draft.short_answer is None and draft.confidence == 0.4
    assert draft.text == f"I'm not sure; the closest the article comes is: “{text}” [1]"
    assert [q.text for q in draft.quotes] == [text]
    assert is_decline(draft.text) and is_decline("The documents don't say.") and is_decline("The article doesn't say.")
    assert not is_decline("Fifth [1].") and not is_decline("No — The article doesn't say what she wore.")


def test_decide_puts_a_reading_in_the_middle_only_between_floor_and_threshold():
    from bot.answer.decide import Answerability

    class Fixed:  # the trees' probability, fixed
        def __init__(self, p):
            self.p = p

        def predict_proba(self, x):
            import numpy as np

            return np.array([[1 - self.p, self.p]])

    evidence = reading_of("Amber Glenn finished fifth.", "fifth").evidence
    for p, answer, middle in [(0.7, True, True), (0.5, False, True), (0.2, False, False)]:
        decision = Answerability(Fixed(p), threshold=0.6, floor=0.3).decide(evidence, 0.5)
        assert (decision.answer, decision.unsure) == (answer, middle)
    assert not Answerability(Fixed(0.5), threshold=0.6).decide(evidence, 0.5).unsure  # no floor: no middle


def test_a_sentence_reply_has_no_short_answer_a_span_reply_has_its_span():
    from bot.answer.cite import cite
    from bot.answer.reply import compose
    from bot.answer.understand import understand
    from bot.types import Decision

    class OneDocument:
        def __init__(self, text, sentences):
            self.texts, self.sentences = {"doc": text}, {"doc": sentences}

    def answer(question, text, span):
        reading = reading_of(text, span)
        corpus = OneDocument(text, [reading.sentence])
        draft = compose(understand(question), reading, corpus, Decision(True, 0.9, 0.6, True))
        state = {
            "draft": draft,
            "timings_ms": {},
            "question": question,
            "passages": [],
            "standalone_question": question,
        }
        return cite(state)

    text = "Glenn and Liu are known as the Blade Angels, a group of American skaters."
    described = answer("tell me about the blade angels", text, "American")
    assert described.answer == f"{text} [1]" and described.short_answer is None  # a describing sentence
    assert answer("what are glenn and liu known as", text, "the Blade Angels").short_answer == "the Blade Angels"
