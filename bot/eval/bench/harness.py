"""The run: every part of `eventbot bench` in order, in a temporary folder (or `workdir`), each part's failure noted
while the run goes on, and every figure's key present at the end (None when not measured)."""

from __future__ import annotations

import functools
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bot.eval.bench.answers import measure_article, measure_floor
from bot.eval.bench.corpora import (
    ARTICLE,
    generate_corpus,
    measure_big_document,
    measure_corpus_size,
    measure_ingest,
)
from bot.eval.bench.figures import BenchResult, SectionSkipped, Sizes, ratio
from bot.eval.bench.labels import ALL_LABELS
from bot.eval.bench.llm import DOCUMENTS_SECTION as LLM_DOCUMENTS_SECTION
from bot.eval.bench.llm import SECTION as LLM_SECTION
from bot.eval.bench.llm import SERVER_SECTION as LLM_SERVER_SECTION
from bot.eval.bench.llm import measure_llm_documents, measure_llm_floor, measure_llm_server
from bot.eval.bench.processes import stop_on_termination
from bot.eval.bench.questions import article_items
from bot.eval.bench.serving import (
    measure_chroma_server,
    measure_cold_ask,
    measure_large_server,
    measure_server,
    measure_workers,
)
from bot.eval.bench.upload import (
    DOCX_TEXT_MB,
    OCR_PAGES,
    UPLOAD_PDF_PAGES,
    measure_docx,
    measure_ocr,
    measure_upload_pdf,
)
from bot.settings import Settings

log = logging.getLogger(__name__)

Say = Callable[[str], None]


def run_bench(quick: bool = False, workdir: Path | None = None, progress: Say | None = None) -> BenchResult:
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


def _measure(sizes: Sizes, root: Path, result: BenchResult, say: Say) -> None:
    from bot.models import shared_embedder

    f = result.figures
    started = time.perf_counter()
    embedder = shared_embedder(Settings().embed_bf16)
    f["model_load_s"] = round(time.perf_counter() - started, 2)

    say("floor: embedding one question, warm")
    one = Settings(index_dir=root / "one" / "index", chroma_url=None, collection="bench", llm="none")
    measure_floor(f, embedder, one, sizes)

    say("1 article: index, warm answers")
    one_answers = measure_article(f, one, sizes, prefix="")
    f["ask_p50_ratio"] = ratio(f["ask_p50_ms"], f["floor_embed_ms"])
    large = Settings(index_dir=root / "large" / "index", chroma_url=None, collection="bench", llm="none")
    corpus = _measure_large_corpus(result, one, large, one_answers, embedder, root, sizes, say)
    _measure_parts(result, one, large, corpus, root, sizes, say)
    for key in ALL_LABELS:  # every figure's key, None when this run did not measure it
        f.setdefault(key, None)


def _measure_large_corpus(
    result: BenchResult,
    one: Settings,
    large: Settings,
    one_answers: list[tuple[bool, str]],
    embedder,
    root: Path,
    sizes: Sizes,
    say: Say,
) -> list[Path]:
    """The generated corpus with the article inside: index it against its floors, then the article's questions
    there, against the same at 1 article. Returns the generated documents."""
    f = result.figures
    say("large corpus: generate")
    corpus = generate_corpus(root / "large" / "corpus", sizes, one)
    f["large_documents"] = len(corpus) + 1
    say(f"large corpus: index {len(corpus) + 1} documents")
    measure_ingest(f, large, [root / "large" / "corpus", ARTICLE], embedder)
    say(f"large corpus: {f['large_chunks']} chunks, warm answers")
    large_answers = measure_article(f, large, sizes, prefix="large_")
    f["large_ask_p50_ratio"] = ratio(f["large_ask_p50_ms"], f["floor_embed_ms"])
    f["large_ask_p50_vs_1"] = ratio(f["large_ask_p50_ms"], f["ask_p50_ms"])
    f["large_ask_new_p50_vs_1"] = ratio(f["large_ask_new_p50_ms"], f["ask_new_p50_ms"])
    changed = [i for i, (a, b) in enumerate(zip(one_answers, large_answers, strict=True)) if a != b]
    f["large_answers_changed"] = len(changed)
    if changed:
        items = article_items()
        shown = [
            (items[i].id, one_answers[i][1] or "(abstained)", large_answers[i][1] or "(abstained)") for i in changed
        ]
        result.notes["large_answers_changed"] = "; ".join(f"{n}: {a!r} → {b!r}" for n, a, b in shown)
    return corpus


def _section(result: BenchResult, say: Say, name: str, measure: Callable[[], None]) -> None:
    """One part of the run; a failure is noted (its figures stay None) and the run goes on; so is a part that cannot
    run here (SectionSkipped: a dev dependency missing)."""
    say(name)
    try:
        measure()
    except SectionSkipped as exc:
        result.notes[name] = f"skipped: {exc}"
    except Exception as exc:
        log.exception("bench: %s failed", name)
        result.notes[name] = f"failed: {type(exc).__name__}: {exc}"


def _measure_parts(
    result: BenchResult, one: Settings, large: Settings, corpus: list[Path], root: Path, sizes: Sizes, say: Say
) -> None:
    """The parts that may fail or be skipped on their own: corpus sizes, the large document, cold start, live servers,
    the PDF upload."""
    f = result.figures
    section = functools.partial(_section, result, say)
    if not sizes.quick:
        for label, chunks in (("c1k_", 1_000), ("c6k_", 6_000)):
            measure = functools.partial(measure_corpus_size, f, root / label, corpus, chunks, label)
            section(f"about {chunks:,} chunks: index, the article's questions", measure)

    section("one large document with the article", lambda: measure_big_document(f, root / "big", sizes))

    section("cold start: floor, `eventbot ask`", lambda: measure_cold_ask(f, one, large, sizes))
    section("live server, 1 article: requests/s at concurrency 1, 4, 12", lambda: measure_server(f, one, sizes))
    section(
        f"a {UPLOAD_PDF_PAGES}-page PDF: upload to the first cited answer, against `eventbot index` of it",
        lambda: measure_upload_pdf(f, root / "upload"),
    )
    section(f"a {OCR_PAGES}-page scanned PDF read by OCR", lambda: measure_ocr(f, root / "ocr"))
    section(f"{DOCX_TEXT_MB:g} MB of text as .docx and as .txt, read", lambda: measure_docx(f, root / "docx"))
    section(LLM_SECTION, lambda: measure_llm_floor(result, sizes))
    if not sizes.quick:
        section(LLM_SERVER_SECTION, lambda: measure_llm_server(f, one))
        section(LLM_DOCUMENTS_SECTION, lambda: measure_llm_documents(f, root / "llm-documents", corpus))
        section("live server, large corpus: start, /healthz, memory", lambda: measure_large_server(f, large, sizes))
    if sizes.workers_requests:
        section("live server, 2 workers: requests/s at concurrency 12", lambda: measure_workers(f, one, sizes))
        section("Chroma server: requests/s with 1 and 2 workers", lambda: measure_chroma_server(f, root, sizes))
