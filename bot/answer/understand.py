"""Understand: what a question asks, read once from its parse and shared by the stages after it. One taxonomy of
what is asked (KINDS), the entity types that answer each kind, the question's content terms and its names. The
question reaching here already stands alone and is written in the documents' spelling (bot.answer.linking and
bot.answer.condense made it so)."""

from functools import lru_cache

from bot.answer.linking import fold
from bot.answer.terms import WH_WORDS, content_terms
from bot.lang import vocabulary
from bot.types import Question
from index.text.pipeline import parse

KINDS = ("who", "when", "where", "why", "how", "quantity", "what", "yes-no", "describe", "other")
# The entity labels (spaCy, OntoNotes) that answer each kind of question.
EXPECTED = {
    "who": {"PERSON", "ORG", "NORP", "GPE"},
    "when": {"DATE", "TIME"},
    "where": {"GPE", "LOC", "FAC", "ORG"},
    "quantity": {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "DATE", "TIME", "ORDINAL"},
}
VOCABULARY = vocabulary()  # the words questions open with: bot/lang/en/questions.toml
TIME_NOUNS = VOCABULARY.time_nouns
AUXILIARIES = VOCABULARY.question_auxiliaries  # a question opening with one asks yes or no
WH_KINDS = VOCABULARY.wh_kinds  # "whom" asks who, "which" what


@lru_cache(maxsize=1024)
def asked_kind(question: str) -> str:
    """What the question asks for, from its parse: who, when, where, why, how, quantity ("how many", "how old"),
    what, yes-no, describe ("who is X", "tell me about X") or other."""
    doc = parse(question)
    tokens = [t for t in doc if not t.is_punct]
    if not tokens:
        return "other"
    lower = [t.lower_ for t in tokens]
    if any(lower[: len(o.split())] == o.split() for o in VOCABULARY.describe_openings) or (
        lower[0] in VOCABULARY.describe_wh_words
        and len(tokens) > 2
        and tokens[1].lemma_ == "be"
        and all(t.pos_ in {"PROPN", "DET", "PART"} for t in tokens[2:])
    ):
        return "describe"
    wh = next((t for t in tokens if t.lower_ in WH_WORDS), None)
    if wh is None:
        return "yes-no" if lower[0] in AUXILIARIES else "other"
    following = tokens[tokens.index(wh) + 1] if tokens.index(wh) + 1 < len(tokens) else None
    kind = WH_KINDS[wh.lower_]
    if kind == "how":
        return "quantity" if following is not None and following.pos_ in {"ADJ", "ADV"} else "how"
    if kind == "what":
        return "when" if following is not None and following.lemma_ in TIME_NOUNS else "what"
    return kind


@lru_cache(maxsize=1024)
def question_terms(question: str) -> frozenset[str]:
    """The question's comparable content terms (no stop words, no wh-words)."""
    return frozenset(content_terms(question))


def names_of(question: str) -> list[str]:
    """The question's proper nouns, folded (case and accents)."""
    return [fold(t.text) for t in parse(question) if t.pos_ == "PROPN"]


def understand(text: str, form: str = "fact") -> Question:
    """What `text` asks, read from its parse; `form`, the form of answer it asks for (bot.answer.forms), is told
    by the chain from the question's vector."""
    return Question(text, asked_kind(text), question_terms(text), tuple(names_of(text)), form)
