"""What every part of the bench shares: the result (figures and notes), how much a run measures (`Sizes`: the
full run or `quick`), a part that cannot run here, and how figures are rounded: milliseconds to the microsecond, a
ratio to a floor to three significant digits, a percentile (a cached answer on a fast CPU takes a few microseconds:
rounded to a tenth of a millisecond it read 0.0, and so did its ratio)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

FULL_CHUNKS = 20_000  # the large corpus of the full run: at least this many chunks, the article among them


class SectionSkipped(Exception):
    """A part of the bench that cannot run here (the reason is noted; its figures stay None)."""


@dataclass
class BenchResult:
    figures: dict[str, float | int | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class Sizes:
    """How much each part measures: the full run, or `quick`."""

    quick: bool
    corpus_chunks: int  # large corpus: at least this many chunks (documents are added until it is reached)
    big_document_bytes: int
    latency_passes: int  # warm passes over the article's questions
    requests: dict[int, int]  # concurrency → requests sent
    workers_requests: int  # concurrency 12 with 2 workers; 0: not measured
    healthz_requests: int

    @classmethod
    def of(cls, quick: bool) -> Sizes:
        if quick:
            return cls(True, 0, 20_000, 1, {1: 10, 4: 20, 12: 36}, 0, 20)
        return cls(False, FULL_CHUNKS, 320_000, 3, {1: 60, 4: 120, 12: 300}, 300, 100)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def ratio(value: float | None, floor: float | None, digits: int = 3) -> float | None:
    """value / floor to `digits` significant digits (None without a floor)."""
    if value is None or not floor:
        return None
    return float(f"{value / floor:.{digits}g}")


def pct(values: Sequence[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)
