"""Concurrent requests share model passes (bot.batching): each caller gets its own results, as if it had run alone;
callers that arrive while a pass runs ride the next one together; a full queue refuses at once with BusyError."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bot.batching import BatchedReader, Batcher
from bot.errors import BusyError
from bot.reader.model import SpanReader
from bot.settings import Settings
from tests.conftest import ROOT


def test_each_caller_gets_its_own_results_and_waiting_callers_share_a_pass():
    started, release = threading.Event(), threading.Event()
    calls: list[list[int]] = []

    def square(items: list[int]) -> list[int]:
        calls.append(list(items))
        if len(calls) == 1:  # the first pass holds until the others have queued
            started.set()
            release.wait(5)
        return [i * i for i in items]

    batcher: Batcher[int, int] = Batcher(square, "test")
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(batcher, [1])
        started.wait(5)
        rest = [pool.submit(batcher, [n, n + 100]) for n in range(2, 7)]
        time.sleep(0.2)  # all five are queued behind the running pass
        release.set()
        assert first.result() == [1]
        assert [f.result() for f in rest] == [[n * n, (n + 100) ** 2] for n in range(2, 7)]
    assert len(calls) == 2 and sorted(calls[1]) == sorted(i for n in range(2, 7) for i in (n, n + 100))
    assert batcher.passes == 2 and batcher.items == 11  # counted before the results go out


def test_a_failing_pass_fails_every_caller_of_it_and_the_batcher_goes_on():
    def run(items: list[int]) -> list[int]:
        if 0 in items:
            raise ValueError("zero")
        return items

    batcher: Batcher[int, int] = Batcher(run, "test")
    with pytest.raises(ValueError, match="zero"):
        batcher([0, 1])
    assert batcher([2]) == [2]


def test_a_full_queue_refuses_at_once_with_busy():
    release = threading.Event()
    batcher: Batcher[int, int] = Batcher(lambda items: release.wait(5) and items, "test", max_waiting=1)
    with ThreadPoolExecutor(3) as pool:
        running = pool.submit(batcher, [1])
        time.sleep(0.1)  # the first pass holds the worker
        waiting = pool.submit(batcher, [2])  # fills the queue
        time.sleep(0.1)
        started = time.perf_counter()
        with pytest.raises(BusyError, match="busy"):
            batcher([3])
        assert time.perf_counter() - started < 0.5
        release.set()
        assert running.result() == [1] and waiting.result() == [2]


def test_reads_batched_together_equal_reads_alone():
    reader = SpanReader(Settings().reader_weights)
    batched = BatchedReader(reader)
    article = (ROOT / "data/event-article.txt").read_text(encoding="utf-8")
    paragraphs = [p for p in article.split("\n") if len(p) > 100][:4]
    assert len(paragraphs) == 4
    questions = ["Who won the gold medal?", "How old is Kaori Sakamoto?", "Who shielded Sakamoto?", "Who won silver?"]
    alone = [reader.read(q, paragraphs[i % 2 : i % 2 + 3]) for i, q in enumerate(questions)]
    with ThreadPoolExecutor(4) as pool:
        together = list(
            pool.map(lambda iq: batched.read(iq[1], paragraphs[iq[0] % 2 : iq[0] % 2 + 3]), enumerate(questions))
        )
    for a, b in zip(alone, together, strict=True):
        assert [(g.text_index, g.start, g.end) for g in a] == [(g.text_index, g.start, g.end) for g in b]
        assert [g.margin for g in a] == pytest.approx([g.margin for g in b], abs=1e-3)
    assert batched.batcher.items == len(questions)
