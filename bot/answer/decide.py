"""Decide: answer or decline, and every threshold the answer step uses, in one place. The probability that the
reader's best span is right comes from general signals (the reader's span and no-answer scores, how well the sentence
matches the question, whether the span is the kind of thing the question asks for, whether the question's names are
there): gradient-boosted trees learnt by `eventbot train-reader --calibrate-only` on held-out SQuAD articles and the
development sets (bot.training.calibration). The trees live in `answerability.joblib` and the threshold chosen there,
with the figures, in `answerability.json`, beside the reader's weights."""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.answer.linking import fold
from bot.answer.terms import terms_of
from bot.answer.understand import EXPECTED, KINDS, understand
from bot.types import Decision, Evidence, Question

CALIBRATION_FILE = "answerability.json"
MODEL_FILE = "answerability.joblib"  # the fitted trees (joblib, written by this project only)
YES = 0.5  # the yes/no head's probability from which a yes/no reply says "Yes"


def features(e: Evidence, question: Question | None = None) -> list[float]:
    """The classifier's inputs, in FEATURES order; `question`: what `e.question` asks, when the caller has it (the
    chain), else read from its text (readings kept by calibration)."""
    question = question or understand(e.question)
    kind = question.kind
    expected = EXPECTED.get(kind, set())
    span_terms = terms_of(e.span)
    asked = question.terms
    names = question.names
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
    floor: float | None = None  # from here to the threshold the reply says it is unsure (None: no middle)

    @classmethod
    def load(cls, path: Path) -> "Answerability":
        """`path` (answerability.json: the features, the threshold, the floor and the figures) and the trees beside
        it."""
        import joblib

        raw = json.loads(path.read_text())
        if raw["features"] != FEATURES:
            raise ValueError(f"{path} was fitted on other features: run `eventbot train-reader --calibrate-only`")
        return cls(joblib.load(path.with_name(MODEL_FILE)), raw["threshold"], raw.get("floor"))

    def probability(self, e: Evidence, question: Question | None = None) -> float:
        return float(self.model.predict_proba(np.array([features(e, question)], dtype=float))[0, 1])

    def decide(self, e: Evidence, yes: float, question: Question | None = None) -> "Decision":
        """`yes`: the reader's yes/no head on the span's window; `question`: what is asked, as understood."""
        p = self.probability(e, question)
        floor = self.threshold if self.floor is None else min(self.floor, self.threshold)
        return Decision(
            answer=p >= self.threshold, confidence=p, threshold=self.threshold, yes=yes >= YES, unsure=floor <= p
        )
