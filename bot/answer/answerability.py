"""Whether to answer: the probability that the reader's best span is right, from general signals (the reader's span
and no-answer scores, how well the sentence matches the question, whether the span is the kind of thing the question
asks for, whether the question's names are there). Gradient-boosted trees learnt by `eventbot train-reader
--calibrate` on held-out SQuAD articles and the development sets (bot.training.calibration); the trees live in
`answerability.joblib` and the threshold chosen there, with the figures, in `answerability.json`, beside the reader's
weights."""

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from bot.answer.language import WH_WORDS, content_terms, terms_of
from bot.answer.linking import fold
from index.text import parse

CALIBRATION_FILE = "answerability.json"
MODEL_FILE = "answerability.joblib"  # the fitted trees (joblib, written by this project only)
KINDS = ("who", "when", "where", "why", "how", "quantity", "what", "yes-no", "describe", "other")
# The entity labels (spaCy, OntoNotes) that answer each kind of question.
EXPECTED = {
    "who": {"PERSON", "ORG", "NORP", "GPE"},
    "when": {"DATE", "TIME"},
    "where": {"GPE", "LOC", "FAC", "ORG"},
    "quantity": {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "DATE", "TIME", "ORDINAL"},
}
TIME_NOUNS = {"year", "time", "day", "date", "month", "century", "decade", "season", "hour"}
AUXILIARIES = {"is", "are", "was", "were", "did", "does", "do", "has", "have", "had", "can", "could", "will", "would"}


@dataclass
class Evidence:
    """One reading of a question: the span, where it sits, and the reader's and retrieval's scores."""

    question: str
    span: str
    sentence: str
    window: str
    span_entities: list[str] = field(default_factory=list)
    margin: float = 0.0  # span score minus the no-answer score
    null_score: float = 0.0
    runner_up: float = 0.0  # the best margin in the other windows
    agreeing: int = 1  # windows whose best span is the same text
    dense: float = 0.0  # cosine of question and sentence
    coverage: float = 0.0  # IDF-weighted share of the question's terms around the sentence
    sentence_rank: int = 0
    passage_score: float = 0.0
    passage_rank: int = 0


@lru_cache(maxsize=1024)
def asked_kind(question: str) -> str:
    """What the question asks for, from its parse: who, when, where, why, how, quantity ("how many", "how old"),
    what, yes-no, describe ("who is X", "tell me about X") or other."""
    doc = parse(question)
    tokens = [t for t in doc if not t.is_punct]
    if not tokens:
        return "other"
    lower = [t.lower_ for t in tokens]
    if lower[:3] == ["tell", "me", "about"] or (
        lower[0] in {"who", "what"}
        and len(tokens) > 2
        and tokens[1].lemma_ == "be"
        and all(t.pos_ in {"PROPN", "DET", "PART"} for t in tokens[2:])
    ):
        return "describe"
    wh = next((t for t in tokens if t.lower_ in WH_WORDS), None)
    if wh is None:
        return "yes-no" if lower[0] in AUXILIARIES else "other"
    following = tokens[tokens.index(wh) + 1] if tokens.index(wh) + 1 < len(tokens) else None
    if wh.lower_ == "how":
        return "quantity" if following is not None and following.pos_ in {"ADJ", "ADV"} else "how"
    if wh.lower_ in {"who", "whom", "whose"}:
        return "who"
    if wh.lower_ in {"what", "which"}:
        return "when" if following is not None and following.lemma_ in TIME_NOUNS else "what"
    return wh.lower_


@lru_cache(maxsize=1024)
def question_terms(question: str) -> frozenset[str]:
    """The question's comparable content terms (no stop words, no wh-words)."""
    return frozenset(content_terms(question))


def names_of(question: str) -> list[str]:
    """The question's proper nouns, folded (case and accents)."""
    return [fold(t.text) for t in parse(question) if t.pos_ == "PROPN"]


def features(e: Evidence) -> list[float]:
    """The classifier's inputs, in FEATURES order."""
    kind = asked_kind(e.question)
    expected = EXPECTED.get(kind, set())
    span_terms = terms_of(e.span)
    asked = question_terms(e.question)
    names = names_of(e.question)
    window = fold(e.window)
    numeric = any(ch.isdigit() for ch in e.span)
    return [
        e.margin,
        e.null_score,
        e.margin + e.null_score,
        e.margin - e.runner_up,
        float(e.agreeing),
        e.dense,
        e.coverage,
        float(e.sentence_rank),
        e.passage_score,
        float(e.passage_rank),
        math.log1p(len(e.span.split())),
        len(span_terms & asked) / max(1, len(span_terms)),
        float(bool(expected)),
        float(bool(expected & set(e.span_entities)) or (kind == "quantity" and numeric)),
        float(bool(e.span_entities)),
        sum(n in window for n in names) / len(names) if names else 1.0,
        *(float(kind == k) for k in KINDS),
    ]


FEATURES = [
    "margin", "null_score", "span_score", "margin_over_runner_up", "agreeing_windows", "dense", "coverage",
    "sentence_rank", "passage_score", "passage_rank", "log_span_words", "span_echoes_question", "type_expected",
    "type_agrees", "span_is_entity", "question_names_present", *(f"kind_{k}" for k in KINDS),
]  # fmt: skip


@dataclass
class Answerability:
    """The probability that the reader's best span is right: gradient-boosted trees over FEATURES (they learn the
    interactions a linear model misses, e.g. a low span score means little for a yes/no question), fitted and written
    by `eventbot train-reader --calibrate-only` (bot.training.calibration); the reader answers when it reaches the
    threshold chosen there."""

    model: object  # a fitted sklearn classifier with predict_proba
    threshold: float

    @classmethod
    def load(cls, path: Path) -> "Answerability":
        """`path` (answerability.json: the features, the threshold and the figures) and the trees beside it."""
        import joblib

        raw = json.loads(path.read_text())
        if raw["features"] != FEATURES:
            raise ValueError(f"{path} was fitted on other features: run `eventbot train-reader --calibrate-only`")
        return cls(joblib.load(path.with_name(MODEL_FILE)), raw["threshold"])

    def probability(self, e: Evidence) -> float:
        return float(self.model.predict_proba(np.array([features(e)], dtype=float))[0, 1])
