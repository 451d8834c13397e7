"""The one answer scorer: the official SQuAD v2.0 normalisation (evaluate-v2.0.py: lowercase, ASCII punctuation
removed, the articles a/an/the removed as whole words, whitespace collapsed) and its exact match and token F1.

`eventbot eval --squad` scores with it as it is. `eventbot eval` on the development sets (`bot.eval.metrics`) and the
reader's card (`bot.training.calibration`) pass `unicode_punctuation=True`: Unicode punctuation (curly quotes, dashes)
is dropped too, so that "Sakamoto’s" (the article's typography) matches an accepted "Sakamoto's".
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

ASCII_PUNCTUATION = frozenset(string.punctuation)  # what the official script drops
ARTICLES = re.compile(r"\b(a|an|the)\b")


def _punctuation(ch: str, unicode_punctuation: bool) -> bool:
    return ch in ASCII_PUNCTUATION or (unicode_punctuation and unicodedata.category(ch).startswith("P"))


def answer_tokens(text: str, unicode_punctuation: bool = False) -> list[str]:
    """The normalised answer split into tokens. Punctuation is dropped, not spaced: "25-year-old" → "25yearold"."""
    text = "".join(ch for ch in text.lower() if not _punctuation(ch, unicode_punctuation))
    return ARTICLES.sub(" ", text).split()


def normalize_answer(text: str, unicode_punctuation: bool = False) -> str:
    """Lowercase, punctuation removed, articles a/an/the removed, whitespace collapsed."""
    return " ".join(answer_tokens(text, unicode_punctuation))


def compute_exact(gold: str, prediction: str, unicode_punctuation: bool = False) -> int:
    return int(answer_tokens(gold, unicode_punctuation) == answer_tokens(prediction, unicode_punctuation))


def compute_f1(gold: str, prediction: str, unicode_punctuation: bool = False) -> float:
    """Token-bag F1; a no-answer on either side (no tokens) scores 1 when both are, else 0."""
    gold_tokens = answer_tokens(gold, unicode_punctuation)
    pred_tokens = answer_tokens(prediction, unicode_punctuation)
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    same = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
    if not same:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)
