"""Answers, warm, in this process: the floors (the embedding model on one question, one pass of the span reader)
and the answer latency and quality of the article's questions over an index."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from bot.eval.bench.figures import Sizes, ms, pct, ratio
from bot.eval.bench.questions import article_items, warm_up_questions
from bot.eval.metrics import score_item
from bot.settings import Settings


def measure_floor(f: dict, embedder, settings: Settings, sizes: Sizes) -> None:
    from bot.indexing import build_index
    from index.chunking import split_documents
    from index.loaders import load_documents

    cold = build_index(settings)
    warm = build_index(settings)
    f["index_cold_s"] = round(cold.seconds, 2)
    f["index_unchanged_s"] = round(warm.seconds, 3)
    f["chunks"] = cold.chunks

    chunks = split_documents(load_documents(settings.corpus), settings.chunk_size, settings.chunk_overlap)
    texts = [c.page_content for c in chunks] * (2 if sizes.quick else 8)
    t0 = time.perf_counter()
    embedder.embed_documents(texts)
    f["embed_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)

    # The model with torch's default threads (what the bot runs with) and with one thread, interleaved so that
    # both see the same load: on a busy machine two intra-op threads can wait on each other many times over.
    import torch

    default_threads = torch.get_num_threads()
    reps = 10 if sizes.quick else 30
    embedder.embed_query("warm-up")
    samples: dict[int, list[float]] = {default_threads: [], 1: []}
    for round_ in range(2 if sizes.quick else 3):
        for threads, times in samples.items():
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            for i in range(reps):
                embedder.embed_query(f"Who won the gold medal in heat {round_}.{threads}.{i}?")
            times.append((time.perf_counter() - t0) / reps)
    f["torch_threads"] = default_threads
    f["embed_question_ms"] = ms(statistics.median(samples[default_threads]))
    f["embed_question_1thread_ms"] = ms(statistics.median(samples[1]))
    f["floor_embed_ms"] = min(f["embed_question_ms"], f["embed_question_1thread_ms"])
    f["embed_only_serial_rps"] = round(1000 / f["floor_embed_ms"], 1)
    # The same model asked by 12 threads at once (torch computes outside the GIL): both cores busy.
    for threads in samples:
        torch.set_num_threads(threads)
        questions = [f"Who won the gold medal in race {threads}.{i}?" for i in range(sizes.requests[12])]
        t0 = time.perf_counter()
        with ThreadPoolExecutor(12) as pool:
            list(pool.map(embedder.embed_query, questions))
        rate = round(len(questions) / (time.perf_counter() - t0), 1)
        f["embed_only_c12_rps"] = max(rate, f.get("embed_only_c12_rps") or 0.0)
    torch.set_num_threads(default_threads)
    f["embed_only_rps"] = max(f["embed_only_serial_rps"], f["embed_only_c12_rps"])
    _measure_reader_floor(f, settings, reps)


def _measure_reader_floor(f: dict, settings: Settings, reps: int) -> None:
    """What an answer cannot cost less than: embedding the question plus one pass of the span reader over as many
    windows of three sentences of the article as the answerer reads."""
    from bot.models import shared_reader
    from index.text.pipeline import parse_document

    reader = shared_reader(settings.reader_weights, settings.reader_max_tokens, settings.reader_bf16)
    text = settings.corpus[0].read_text(encoding="utf-8")
    sentences = [s.text(text) for s in parse_document(text)]
    windows = [" ".join(sentences[i : i + 3]) for i in range(0, 3 * settings.reader_windows, 3)]
    reader.read("warm-up?", windows)
    t0 = time.perf_counter()
    for i in range(reps):
        reader.read(f"Who won the gold medal in heat {i}?", windows)
    f["reader_pass_ms"] = ms((time.perf_counter() - t0) / reps)
    f["floor_answer_ms"] = round(f["floor_embed_ms"] + f["reader_pass_ms"], 3)


def measure_article(f: dict, settings: Settings, sizes: Sizes, prefix: str) -> list[tuple[bool, str]]:
    """Open a bot; warm it on other questions about the article; then answer the article's questions once, each
    new to the process (timed as `ask_new_*`, and scored), then again in warm passes (`ask_*`: repeated
    questions, which caches may serve). Returns (abstained, answer) of the scored pass."""
    from bot.event_bot import EventBot

    t0 = time.perf_counter()
    bot = EventBot(settings)
    f[f"{prefix}bot_open_s"] = round(time.perf_counter() - t0, 2)
    warm_up = warm_up_questions()[: 10 if sizes.quick else None]
    t0 = time.perf_counter()
    for q in warm_up:
        bot.ask(q)
    f[f"{prefix}first_pass_mean_ms"] = ms((time.perf_counter() - t0) / len(warm_up))
    items = article_items()
    first = [bot.ask(i.question) for i in items]
    new = [a.timings_ms["total"] for a in first]
    f[f"{prefix}ask_new_p50_ms"] = pct(new, 50)
    f[f"{prefix}ask_new_p95_ms"] = pct(new, 95)
    f[f"{prefix}ask_new_max_ms"] = round(max(new), 3)
    f[f"{prefix}ask_new_p50_ratio"] = ratio(f[f"{prefix}ask_new_p50_ms"], f["floor_embed_ms"])
    f[f"{prefix}ask_new_p50_answer_ratio"] = ratio(f[f"{prefix}ask_new_p50_ms"], f["floor_answer_ms"])
    scored = [score_item(i, a) for i, a in zip(items, first, strict=True)]
    record_quality(f, scored, prefix)
    f[f"{prefix}scored_questions"] = len(scored)

    questions = [i.question for i in items]
    questions = questions[:10] if sizes.quick else questions
    totals, retrieve, answer = [], [], []
    for _ in range(sizes.latency_passes):
        for q in questions:
            a = bot.ask(q)
            totals.append(a.timings_ms["total"])
            retrieve.append(a.timings_ms.get("retrieve", 0.0))
            answer.append(a.timings_ms.get("answer", 0.0))
    if not prefix:
        f["questions"] = len(totals)
    f[f"{prefix}ask_p50_ms"] = pct(totals, 50)
    f[f"{prefix}ask_p95_ms"] = pct(totals, 95)
    f[f"{prefix}ask_max_ms"] = round(max(totals), 3)
    f[f"{prefix}retrieve_mean_ms"] = round(statistics.mean(retrieve), 3)
    f[f"{prefix}answer_mean_ms"] = round(statistics.mean(answer), 3)
    del bot
    return [(a.abstained, "" if a.abstained else a.answer) for a in first]


def record_quality(f: dict, scored: list, prefix: str) -> None:
    """hit@k and accuracy of the article's questions, as `eventbot eval` scores them."""
    retrieval = [r for r in scored if r.retrieval_scored]
    f[f"{prefix}hit_at_k"] = round(sum(r.evidence_rank is not None for r in retrieval) / len(retrieval), 3)
    f[f"{prefix}accuracy"] = round(sum(r.correct for r in scored) / len(scored), 3)
