"""Concurrent requests share model passes. A server answers requests in parallel threads; each would run its own
forward pass of the embedder and of the reader, and passes running side by side on two cores only fight over them.
A `Batcher` runs one pass at a time in a thread of its own and gives each pass everything that queued while the
previous one ran: alone, a request waits for nothing (no timer); under load, requests ride one pass together. The
queue is bounded: when it is full a request fails at once with BusyError (HTTP 503), instead of waiting behind
work it cannot finish in time."""

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from queue import Empty, Full, Queue
from typing import Any, Generic, TypeVar

from langchain_core.embeddings import Embeddings

from bot.errors import BusyError
from bot.reader.model import SpanGuess, SpanReader

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class _Job(Generic[Item, Result]):
    items: Sequence[Item]
    done: Future = field(default_factory=Future)


class Batcher(Generic[Item, Result]):
    """`batcher(items)` → `run(items)` for the caller's items, run together with other callers' in one call of `run`
    (at most `max_items` items per call, unless one caller brings more). `run` maps a list of items to a list of
    results, one each, in order."""

    def __init__(
        self, run: Callable[[list[Item]], list[Result]], name: str, max_items: int = 64, max_waiting: int = 64
    ):
        self.run, self.name, self.max_items = run, name, max_items
        self._queue: Queue[_Job] = Queue(maxsize=max_waiting)
        self.passes = 0  # calls of `run` so far
        self.items = 0  # items they ran
        threading.Thread(target=self._work, name=f"batcher-{name}", daemon=True).start()

    def __call__(self, items: Sequence[Item]) -> list[Result]:
        if not items:
            return []
        job: _Job = _Job(items)
        try:
            self._queue.put_nowait(job)
        except Full:
            raise BusyError(
                f"the server is busy ({self._queue.maxsize} requests wait for the {self.name}): retry"
            ) from None
        return job.done.result()

    def _work(self) -> None:
        while True:
            jobs = [self._queue.get()]
            size = len(jobs[0].items)
            while size < self.max_items:  # what queued meanwhile rides along; nothing is waited for
                try:
                    job = self._queue.get_nowait()
                except Empty:
                    break
                jobs.append(job)
                size += len(job.items)
            self._run(jobs)

    def _run(self, jobs: list[_Job]) -> None:
        items = [item for job in jobs for item in job.items]
        self.passes += 1
        self.items += len(items)
        try:
            results = self.run(items)
        except BaseException as exc:  # every caller of the pass gets its error
            for job in jobs:
                job.done.set_exception(exc)
            return
        at = 0
        for job in jobs:
            job.done.set_result(results[at : at + len(job.items)])
            at += len(job.items)


class BatchedEmbeddings(Embeddings):
    """An embedder whose calls from concurrent requests share passes."""

    def __init__(self, embedder: Embeddings, max_items: int = 64, max_waiting: int = 64):
        self.embedder = embedder
        self.batcher: Batcher[str, list[float]] = Batcher(embedder.embed_documents, "embedder", max_items, max_waiting)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.batcher(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.batcher([text])[0]


class BatchedReader:
    """A SpanReader whose reads from concurrent requests share passes (SpanReader.read_many)."""

    def __init__(self, reader: SpanReader, max_items: int = 16, max_waiting: int = 64):
        self.reader = reader
        self.batcher: Batcher[tuple[str, list[str], str], list[SpanGuess]] = Batcher(
            reader.read_many, "reader", max_items, max_waiting
        )

    def read(self, question: str, texts: list[str], history: str = "") -> list[SpanGuess]:
        return self.batcher([(question, texts, history)])[0] if texts else []

    def __getattr__(self, name: str) -> Any:  # tokenizer, model, max_tokens: the reader's own
        return getattr(self.reader, name)
