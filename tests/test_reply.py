"""How a reply is worded (bot.answer.reply), from the parse indexing stores: no opening connective, a quotation
never cut and said by someone, Yes/No first for a yes/no question."""

import pytest

from bot.answer.reply import quotation_around, quotation_reply, without_connective, yes_no_reply
from bot.types import Sentence, Span
from index.text.parse import parse_document


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
