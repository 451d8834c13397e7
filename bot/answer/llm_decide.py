"""Decide whether the LLM's grounded answer is given: one learnt probability over both readers.

The LLM reads better than the trained span reader and invents answers where the documents are silent; neither
signal alone tells its right answers from its wrong ones on every kind of set. So the decision is gradient-boosted
trees over general signals of both: the LLM's token log-probabilities, its probability of opening with "Not in
the documents" and (a reply opening with Yes or No) its P(Yes) share and whether that share overruled its word, the
span reader's learnt probability and whether it answered, whether the two agree, how much of the question the cited
sentences hold, the span reader's second reading of only what the LLM cites (does it find an answer there, and is it
the one the LLM gave), retrieval's best score, and what the question asks. It is fitted by
`eventbot train-reader --calibrate-llm` (bot.training.llm_calibration) on the development sets, out of fold by set,
a wrong answer costing two right ones; below its threshold the span reader's own reply (answer, unsure or decline)
stands. The same fit sets the share at which a yes/no answer opens with Yes (`yes_threshold`). An answer whose
names, numbers or quotes its cited sentences lack never gets this far (bot.answer.guard)."""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.answer.terms import terms_of
from bot.answer.understand import KINDS
from bot.types import Decision, Draft, Passage, Question

LLM_CALIBRATION_FILE = "llm_decision.json"
LLM_MODEL_FILE = "llm_decision.joblib"

LLM_FEATURES = [
    "llm_mean_logprob", "llm_min_logprob", "llm_first_logprob", "llm_p_not_in_documents", "llm_log_tokens",
    "llm_yes_share", "llm_yes_overruled",
    "reader_probability", "reader_answered", "reader_unsure", "reader_phrase_in_answer", "reader_phrase_missing",
    "cited_sentences", "recited", "question_in_cited", "answer_words_in_cited", "best_passage_score",
    "reader_margin_in_cited", "reader_span_said", *(f"kind_{k}" for k in KINDS),
]  # fmt: skip


def llm_features(
    token_logprobs: list[float] | None,
    p_not_in_documents: float | None,
    yes_share: float | None,
    llm_draft: Draft,
    extractive: Draft,
    decision: Decision | None,
    asked: Question,
    passages: list[Passage],
    phrase_agrees: bool | None,
    recited: bool = False,
    cited_reading: tuple[float, float] | None = None,
    yes_overruled: bool = False,
) -> list[float]:
    """The decision's inputs, in LLM_FEATURES order; NaN where a backend gives no log-probabilities (the trees
    route a missing value as they learnt to). `yes_share`: the LLM's P(Yes) / (P(Yes) + P(No)) on its first token,
    kept only where its answer opens with Yes or No; `yes_overruled`: whether that share overruled its Yes or No
    (`overruling_word`). `phrase_agrees`: whether the LLM's answer says the precise phrase the span reader found
    (None when it found none); `recited`: whether the guard pointed a sentence's citation at another passage than
    the one the LLM named; `cited_reading`: the span reader's second reading, of only the sentences the LLM cites
    (its best margin there, and the share of its span's words the LLM's answer says)."""
    nan = float("nan")
    logprobs = token_logprobs or []
    cited = " ".join(q.text for q in llm_draft.quotes)
    cited_terms = terms_of(cited)
    answer_terms = terms_of(llm_draft.text)
    return [
        float(np.mean(logprobs)) if logprobs else nan,
        float(min(logprobs)) if logprobs else nan,
        logprobs[0] if logprobs else nan,
        nan if p_not_in_documents is None else p_not_in_documents,
        math.log1p(len(logprobs)) if logprobs else nan,
        yes_share if yes_share is not None and opening_yes_or_no(llm_draft.text) else nan,
        float(yes_overruled),
        decision.confidence if decision is not None else 0.0,
        float(not extractive.abstained),
        float(decision is not None and decision.unsure and extractive.abstained),
        float(phrase_agrees is True),
        float(phrase_agrees is False),
        float(len(llm_draft.quotes)),
        float(recited),
        len(asked.terms & cited_terms) / len(asked.terms) if asked.terms else 1.0,
        len(answer_terms & cited_terms) / len(answer_terms) if answer_terms else 1.0,
        max((p.score for p in passages), default=0.0),
        *(cited_reading or (nan, nan)),
        *(float(asked.kind == k) for k in KINDS),
    ]


def opening_yes_or_no(text: str) -> str | None:
    """Yes or No (lower case) where the answer's first word is Yes or No, else None."""
    words = text.split(maxsplit=1)
    word = words[0].strip(",.;:!—-–\"'“”‘’").lower() if words else ""
    return word if word in ("yes", "no") else None


def overruling_word(text: str, yes_share: float | None, threshold: float | None) -> str | None:
    """The word, Yes or No, where the LLM's P(Yes) share on its first token, read at `threshold` ("Yes" at or above it),
    chooses the other word than the one its answer to a yes/no question opens with; else None (they agree, or there
    is no share, no threshold, no Yes or No). The 1.5B model opens with "Yes" at chance, but the share it gives "Yes"
    tells true from false far better (241 yes/no questions of the development sets, each set's threshold fitted on
    the others: right 174 against its own word's 128)."""
    said = opening_yes_or_no(text)
    if said is None or yes_share is None or threshold is None:
        return None
    chosen = "yes" if yes_share >= threshold else "no"
    return None if chosen == said else chosen.capitalize()


@dataclass
class LLMDecision:
    """P(the LLM's grounded answer is right): trees over LLM_FEATURES; the answer is given at `threshold` or above."""

    model: object  # a fitted sklearn classifier with predict_proba
    threshold: float
    yes_threshold: float | None = None  # the P(Yes) share at which a yes/no answer opens with Yes (None: its word)

    @classmethod
    def load(cls, path: Path) -> "LLMDecision":
        """`path` (llm_decision.json: the features, the threshold and the figures) and the trees beside it."""
        import joblib

        raw = json.loads(path.read_text())
        if raw["features"] != LLM_FEATURES:
            raise ValueError(f"{path} was fitted on other features: run `eventbot train-reader --calibrate-llm`")
        return cls(joblib.load(path.with_name(LLM_MODEL_FILE)), raw["threshold"], raw.get("yes_threshold"))

    def probability(self, features: list[float]) -> float:
        return float(self.model.predict_proba(np.array([features], dtype=float))[0, 1])
