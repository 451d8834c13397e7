"""Scoring answers: one bot answer against one evaluation item (right, wrong or abstained, exact match and F1,
citations, groundedness, where the evidence was retrieved), and the figures over many scored answers.

Metrics, per kind and overall; no LLM judge. Text is compared after `normalize` (lowercase, curly quotes and
apostrophes made straight, whitespace collapsed) with the answer's `[n]` markers removed.

- accuracy: an answerable item is correct when the answer did not abstain and contains one of the accepted strings
  (as whole words); an unanswerable item is correct when the answer abstained. An item with key points (an overview,
  a list, why or how) is correct when the answer names at least `min_points` of them (any alternative, as whole
  words) and names no number, date, name or quote that its cited sentences lack; `key_points` is the mean share of
  an item's key points the answer names (answerable key-point items; 0 for an abstention).
- wrong rate: the share of all items answered (not abstained) but not correct: the confident wrong answers,
  which are worse than an abstention.
- exact match / F1: the official SQuAD normalisation and token-bag F1 (`bot.eval.scoring`), best over the accepted
  strings, on answerable items; an abstention scores 0. Unicode punctuation counts as punctuation too (deliberately:
  the documents' curly quotes and dashes must not part a reply from an accepted string typed with straight ones).
- abstention precision / recall: positive = abstained, truth = not answerable.
- citation precision: over answerable items that were answered, the share whose cited quotes contain the
  evidence (one quote, or the quotes joined, contains the whole evidence). When the evidence spans several
  sentences it is enough that the quotes overlap it: some evidence sentence lies inside a cited quote, or some cited
  quote of at least four words lies inside the evidence. An answer without citations counts as wrong.
- groundedness, over every answered item (answerable or not): `grounded_tokens` is the mean share of the answer's
  SQuAD tokens that occur in its cited quotes; `grounded_names` is the share of answers whose every number, date, name
  and quoted phrase occurs in the cited quotes, found and compared as the guard does (`bot.answer.claims`: spaCy's
  proper nouns, numbers by value).
- retrieval hit@k / MRR, over answerable items with evidence: a context hits when it contains the evidence or one of
  its sentences (of at least four words); hit@k is the share with a hit among the returned contexts (k = top_k),
  MRR the mean of 1/rank of the first hit (0 without one).
- latency p50 / p95 of `timings_ms["total"]`, and the mean answer length in words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.answer.cite import without_markers
from bot.answer.claims import backing_of, facts, occurs
from bot.answer.terms import NUMBER_WORDS
from bot.eval.items import EvalItem
from bot.eval.scoring import answer_tokens, compute_exact, compute_f1
from bot.types import Answer

MIN_SENTENCE_WORDS = 4  # shorter evidence fragments ("Oh no.") would match unrelated text


# -- text -----------------------------------------------------------------------------------------------------

QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "“": '"', "”": '"', "„": '"', "″": '"'})
SENTENCE_BREAK = re.compile(r"\s*\n\s*|(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]])\s+")
WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def normalize(text: str) -> str:
    """Lowercase, curly quotes and apostrophes made straight, whitespace collapsed."""
    return " ".join(text.translate(QUOTES).lower().split())


def counts_as_digits(text: str) -> str:
    """Number words written as digits ("five midwives" → "5 midwives"), so a count matches however it is written."""
    return WORD.sub(lambda m: str(NUMBER_WORDS.get(m.group(), m.group())), text)


def squad_tokens(text: str) -> list[str]:
    """SQuAD's answer normalisation, split into tokens (Unicode punctuation dropped too: see the module's docstring)."""
    return answer_tokens(text, unicode_punctuation=True)


def sentences(text: str) -> list[str]:
    """The sentences of a span worth matching on their own (at least four words); the whole span when none is."""
    parts = [p for p in SENTENCE_BREAK.split(text.strip()) if len(p.split()) >= MIN_SENTENCE_WORDS]
    return parts or [text.strip()]


def contains_word(haystack: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


# -- metrics on one answer ------------------------------------------------------------------------------------


def points_named(answer_text: str, key_points: Sequence[str]) -> int:
    """How many key points the answer names: a point is named when one of its " | " alternatives is in it."""
    text = counts_as_digits(normalize(without_markers(answer_text)))
    return sum(
        any(contains_word(text, counts_as_digits(normalize(a))) for a in point.split(" | ") if a.strip())
        for point in key_points
    )


def is_correct(
    answer: Answer,
    answers: Sequence[str],
    answerable: bool,
    yes_no: bool | None = None,
    key_points: Sequence[str] = (),
    min_points: int = 0,
) -> bool:
    if not answerable:
        return answer.abstained
    if answer.abstained:
        return False
    if key_points:
        grounded = not ungrounded_names(answer.answer, [c.quote for c in answer.citations])
        return grounded and points_named(answer.answer, key_points) >= max(1, min_points)
    text = normalize(without_markers(answer.answer))
    if yes_no is not None:  # a yes/no question is answered by the reply's first word
        return WORD.match(text) is not None and WORD.match(text).group() == ("yes" if yes_no else "no")
    return any(contains_word(counts_as_digits(text), counts_as_digits(normalize(a))) for a in answers if a.strip())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    got = without_markers(prediction)
    return float(any(compute_exact(a, got, unicode_punctuation=True) for a in answers))


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """The best F1 over the accepted strings; one without tokens scores 0 here (officially 1 against an empty reply)."""
    got = without_markers(prediction)
    golds = [a for a in answers if squad_tokens(a)]
    return max((compute_f1(a, got, unicode_punctuation=True) for a in golds), default=0.0)


def citation_supports(evidence: str, quotes: Sequence[str]) -> bool:
    """Do the cited quotes contain the evidence (or, for multi-sentence evidence, overlap it)?"""
    if not quotes or not evidence.strip():
        return False
    ev = normalize(evidence)
    qs = [normalize(q) for q in quotes]
    if any(ev in q for q in qs) or ev in " ".join(qs):
        return True
    parts = sentences(evidence)
    if len(parts) < 2:
        return False
    return any(normalize(p) in q for p in parts for q in qs) or any(
        q in ev for q in qs if len(q.split()) >= MIN_SENTENCE_WORDS
    )


def grounded_token_share(answer_text: str, quotes: Sequence[str]) -> float:
    tokens = squad_tokens(without_markers(answer_text))
    if not tokens:
        return 1.0
    quoted = set(squad_tokens(" ".join(quotes)))
    return sum(t in quoted for t in tokens) / len(tokens)


def ungrounded_names(answer_text: str, quotes: Sequence[str]) -> list[str]:
    """The numbers, dates, names and quoted phrases of the answer that its cited quotes do not hold: the facts the
    guard checks, found and compared as it does (bot.answer.claims)."""
    backing = backing_of(" ".join(quotes))
    return [fact for kind, fact in facts(without_markers(answer_text)) if not occurs(kind, fact, backing)]


def evidence_rank(evidence: str, contexts: Sequence[str]) -> int | None:
    """1-based rank of the first context holding the evidence or one of its sentences; None when none does."""
    if not evidence.strip():
        return None
    targets = {normalize(evidence), *(normalize(s) for s in sentences(evidence))}
    for rank, text in enumerate(contexts, 1):
        ctx = normalize(text)
        if any(t in ctx for t in targets):
            return rank
    return None


@dataclass
class ItemResult:
    id: str
    kind: str
    question: str
    answerable: bool
    expected: list[str]
    answer: str
    abstained: bool
    correct: bool
    exact_match: float | None  # answerable items only
    f1: float | None
    citation_ok: bool | None  # answered answerable items only
    unsure: bool  # abstained, quoting the closest sentence
    unsure_quote_ok: bool | None  # answerable items with an unsure reply: does its quote hold the evidence?
    grounded_tokens: float | None  # answered items only
    grounded_names: bool | None
    ungrounded: list[str]
    evidence_rank: int | None
    retrieval_scored: bool  # answerable with evidence
    latency_ms: float | None
    words: int
    backend: str
    history: list[dict] = field(default_factory=list)
    key_points: float | None = None  # the share of the item's key points named (key-point items only)


def score_item(item: EvalItem, answer: Answer) -> ItemResult:
    quotes = [c.quote for c in answer.citations]
    answered = not answer.abstained
    text = without_markers(answer.answer)
    missing = ungrounded_names(answer.answer, quotes) if answered else []
    return ItemResult(
        id=item.id,
        kind=item.kind,
        question=item.question,
        answerable=item.answerable,
        expected=item.answers,
        answer=answer.answer,
        abstained=answer.abstained,
        correct=is_correct(answer, item.answers, item.answerable, item.yes_no, item.key_points, item.min_points),
        exact_match=(exact_match(text, item.answers) if answered else 0.0) if item.answerable else None,
        f1=(token_f1(text, item.answers) if answered else 0.0) if item.answerable else None,
        citation_ok=citation_supports(item.evidence, quotes) if item.answerable and answered else None,
        unsure=not answered and bool(quotes),
        unsure_quote_ok=citation_supports(item.evidence, quotes)
        if item.answerable and not answered and quotes
        else None,
        grounded_tokens=grounded_token_share(answer.answer, quotes) if answered else None,
        grounded_names=not missing if answered else None,
        ungrounded=missing,
        evidence_rank=evidence_rank(item.evidence, [c.text for c in answer.contexts]),
        retrieval_scored=item.answerable and bool(item.evidence.strip()),
        latency_ms=answer.timings_ms.get("total"),
        words=len(text.split()),
        backend=answer.backend,
        history=[t.model_dump() for t in item.history],
        key_points=(points_named(answer.answer, item.key_points) if answered else 0) / len(item.key_points)
        if item.key_points
        else None,
    )


# -- metrics over many answers --------------------------------------------------------------------------------


def _mean(values: Iterable[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def abstention_precision_recall(results: Sequence[ItemResult]) -> tuple[float | None, float | None]:
    """Positive = abstained, truth = not answerable. None where the ratio is undefined (nothing to divide by)."""
    tp = sum(r.abstained and not r.answerable for r in results)
    abstained = sum(r.abstained for r in results)
    unanswerable = sum(not r.answerable for r in results)
    return (tp / abstained if abstained else None), (tp / unanswerable if unanswerable else None)


def summarize(results: Sequence[ItemResult]) -> dict[str, Any]:
    precision, recall = abstention_precision_recall(results)
    scored = [r for r in results if r.retrieval_scored]
    latencies = [r.latency_ms for r in results if r.latency_ms is not None]
    return {
        "n": len(results),
        "accuracy": _mean(r.correct for r in results),
        "wrong_rate": _mean(not r.abstained and not r.correct for r in results),
        "exact_match": _mean(r.exact_match for r in results),
        "f1": _mean(r.f1 for r in results),
        "abstention_precision": precision,
        "abstention_recall": recall,
        "citation_precision": _mean(r.citation_ok for r in results),
        "unsure_share": _mean(r.unsure for r in results),
        "unsure_quote_holds_evidence": _mean(r.unsure_quote_ok for r in results),
        "grounded_tokens": _mean(r.grounded_tokens for r in results),
        "grounded_names": _mean(r.grounded_names for r in results),
        "hit_at_k": _mean(r.evidence_rank is not None for r in scored),
        "mrr": _mean(1 / r.evidence_rank if r.evidence_rank else 0.0 for r in scored),
        "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
        "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
        "answer_words": _mean(r.words for r in results if not r.abstained),
        "key_points": _mean(r.key_points for r in results),
    }


def summarize_by_kind(results: Sequence[ItemResult]) -> dict[str, Any]:
    kinds = list(dict.fromkeys(r.kind for r in results))  # in the dataset's order
    return {"overall": summarize(results), "kinds": {k: summarize([r for r in results if r.kind == k]) for k in kinds}}
