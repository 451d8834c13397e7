"""Performance benchmark (`eventbot bench`): where the time goes on this machine, measured end to end on the
real model and a real embedded Chroma in a temporary folder (the user's index is never touched).

Figures: model load; indexing the bundled corpus cold (every chunk embedded) and again unchanged (nothing
embedded); embedding throughput (chunks per second in batches, and one question); answering latency over the
article's evaluation questions, warm, as p50/p95/max with the share spent in retrieval and in answering."""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.eval.evaluation import DEFAULT_DATASETS_DIR, load_dataset
from bot.settings import Settings


@dataclass
class BenchResult:
    figures: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def run_bench(quick: bool = False) -> BenchResult:
    from bot.service import EventBot, build_index, shared_embedder
    from index.chunking import split_documents
    from index.loaders import load_documents

    result = BenchResult()
    f = result.figures
    started = time.perf_counter()
    embedder = shared_embedder()
    f["model_load_s"] = round(time.perf_counter() - started, 2)

    with tempfile.TemporaryDirectory(prefix="eventbot-bench-") as tmp:
        settings = Settings(index_dir=Path(tmp) / "index", chroma_url=None, collection="bench")
        cold = build_index(settings)
        warm = build_index(settings)
        f["index_cold_s"] = round(cold.seconds, 2)
        f["index_unchanged_s"] = round(warm.seconds, 3)
        f["chunks"] = cold.chunks

        chunks = split_documents(load_documents(settings.corpus), settings.chunk_size, settings.chunk_overlap)
        texts = [c.page_content for c in chunks] * (2 if quick else 8)
        t0 = time.perf_counter()
        embedder.embed_documents(texts)
        f["embed_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
        reps = 20 if quick else 100
        t0 = time.perf_counter()
        for i in range(reps):
            embedder.embed_query(f"Who won the gold medal? {i}")
        f["embed_question_ms"] = _ms((time.perf_counter() - t0) / reps)

        t0 = time.perf_counter()
        bot = EventBot(settings)
        f["bot_open_s"] = round(time.perf_counter() - t0, 2)
        questions = [
            item.question for item in load_dataset(DEFAULT_DATASETS_DIR / "event_qa.jsonl") if not item.history
        ]
        questions = questions[:10] if quick else questions
        for q in questions:  # warm-up: first sight of each sentence and word embeds it once
            bot.ask(q)
        totals, retrieve, answer = [], [], []
        for _ in range(1 if quick else 3):
            for q in questions:
                a = bot.ask(q)
                totals.append(a.timings_ms["total"])
                retrieve.append(a.timings_ms["retrieve"])
                answer.append(a.timings_ms["answer"])
        f["questions"] = len(totals)
        f["ask_p50_ms"] = round(float(np.percentile(totals, 50)), 1)
        f["ask_p95_ms"] = round(float(np.percentile(totals, 95)), 1)
        f["ask_max_ms"] = round(max(totals), 1)
        f["retrieve_mean_ms"] = round(statistics.mean(retrieve), 1)
        f["answer_mean_ms"] = round(statistics.mean(answer), 1)
    result.notes["machine"] = "CPU only; figures vary with load, compare runs made back to back"
    return result


LABELS = {
    "model_load_s": "embedding model load (s)",
    "index_cold_s": "index bundled corpus, cold (s)",
    "index_unchanged_s": "re-index unchanged corpus (s)",
    "chunks": "chunks",
    "embed_chunks_per_s": "embedding throughput (chunks/s)",
    "embed_question_ms": "embed one question (ms)",
    "bot_open_s": "open bot over the index (s)",
    "questions": "questions answered (warm)",
    "ask_p50_ms": "answer latency p50 (ms)",
    "ask_p95_ms": "answer latency p95 (ms)",
    "ask_max_ms": "answer latency max (ms)",
    "retrieve_mean_ms": "  of which retrieval, mean (ms)",
    "answer_mean_ms": "  of which answering, mean (ms)",
}
