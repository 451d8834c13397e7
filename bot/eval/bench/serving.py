"""Real processes: cold start (`eventbot ask` to its first answer, against a process that only loads the model and
embeds one question), and live servers under load (requests/s, errors, latency, memory) with 1 article, the large
corpus, 2 workers and a Chroma server."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bot.eval.bench.figures import Sizes, ms, pct, ratio
from bot.eval.bench.load import load
from bot.eval.bench.processes import EVENTBOT, chroma_server, eventbot_env, live_server, timed_run
from bot.eval.bench.questions import new_questions, warm_up_questions
from bot.settings import Settings

# The floor of start-up: a process that imports the embedding model, loads it and embeds one question.
FLOOR_START = (
    "from index.embeddings import load_embedder\n"
    "load_embedder().embed_query('Who won the gold medal in the women\\'s free skate?')\n"
)


def measure_cold_ask(f: dict, one: Settings, large: Settings, sizes: Sizes) -> None:
    question = "Who won the gold medal in the women's free skate?"
    f["floor_start_s"] = round(timed_run([sys.executable, "-c", FLOOR_START], eventbot_env(one)), 2)
    if sizes.quick:  # the server's first 200 is quick's one cold start
        return
    f["cold_ask_s"] = round(timed_run([EVENTBOT, "ask", "--json", question], eventbot_env(one)), 2)
    f["cold_ask_ratio"] = ratio(f["cold_ask_s"], f["floor_start_s"])
    f["large_cold_ask_s"] = round(timed_run([EVENTBOT, "ask", "--json", question], eventbot_env(large)), 2)
    f["large_cold_ask_ratio"] = ratio(f["large_cold_ask_s"], f["floor_start_s"])


def measure_server(f: dict, settings: Settings, sizes: Sizes) -> None:
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
            f[f"latency_c{c}_p50_ms"] = pct(latencies, 50)
        f["rss_peak_mb"] = server.peak_rss_mb()
    f["cold_serve_ratio"] = ratio(f["serve_first_200_s"], f["floor_start_s"])
    f["rps_c12_vs_embed_only"] = ratio(f["rps_c12"], f["embed_only_rps"])
    floor = f.get("floor_answer_ms")  # one answer's model passes, one after another
    f["answer_floor_rps"] = round(1000 / floor, 1) if floor else None
    f["rps_c12_vs_answer_floor"] = ratio(f["rps_c12"], f["answer_floor_rps"])
    f["rps_c12_vs_c1"] = ratio(f["rps_c12"], f["rps_c1"])


def measure_large_server(f: dict, settings: Settings, sizes: Sizes) -> None:
    import httpx

    with live_server(settings) as server:
        f["large_serve_first_200_s"] = round(server.first_200_s, 2)
        f["large_serve_ready_rss_mb"] = server.peak_rss_mb()
        with httpx.Client(base_url=server.url, timeout=60) as http:
            times = []
            for _ in range(sizes.healthz_requests):
                t0 = time.perf_counter()
                http.get("/healthz").raise_for_status()
                times.append(ms(time.perf_counter() - t0))
        f["large_healthz_p50_ms"] = pct(times, 50)
        f["large_healthz_max_ms"] = round(max(times), 3)
        rps, errors, _ = load(server.url, new_questions(sizes.requests[4]), 4, sizes.requests[4])
        f["large_rps_c4"] = rps
        f["large_errors_c4"] = errors
        f["large_rss_peak_mb"] = server.peak_rss_mb()
    f["large_cold_serve_ratio"] = ratio(f["large_serve_first_200_s"], f["floor_start_s"])
    f["large_rss_vs_1"] = ratio(f["large_rss_peak_mb"], f["rss_peak_mb"])


def measure_workers(f: dict, settings: Settings, sizes: Sizes) -> None:
    with live_server(settings, workers=2) as server:
        f["workers_2_first_200_s"] = round(server.first_200_s, 2)
        load(server.url, warm_up_questions(), 4, 8)
        n = sizes.workers_requests  # the same new questions as the 1-worker run at concurrency 12
        rps, errors, _ = load(server.url, new_questions(n, sizes.requests[1] + sizes.requests[4]), 12, n)
        f["rps_c12_workers_2"] = rps
        f["errors_c12_workers_2"] = errors
        f["workers_2_rss_peak_mb"] = server.peak_rss_mb()
    f["rps_workers_2_vs_1"] = ratio(f["rps_c12_workers_2"], f.get("rps_c12"))


def measure_chroma_server(f: dict, root: Path, sizes: Sizes) -> None:
    """The deployment that scales out: a `chroma run` server holds the index (written by one `eventbot index`),
    `eventbot serve` processes read it; requests/s at concurrency 12 with 1 and 2 workers, as embedded above."""
    from bot.indexing import build_index

    with chroma_server(root / "chroma") as url:
        settings = Settings(index_dir=root / "unused", chroma_url=url, collection="bench", llm="none")
        build_index(settings)
        n = sizes.workers_requests
        start = sizes.requests[1] + sizes.requests[4]  # the same new questions as the embedded runs at c12
        for workers in (1, 2):
            with live_server(settings, workers=workers) as server:
                load(server.url, warm_up_questions(), 4, 8)
                rps, errors, _ = load(server.url, new_questions(n, start), 12, n)
            f[f"chroma_rps_c12_workers_{workers}"] = rps
            f[f"chroma_errors_c12_workers_{workers}"] = errors
    f["chroma_rps_workers_2_vs_1"] = ratio(f["chroma_rps_c12_workers_2"], f["chroma_rps_c12_workers_1"])
    f["chroma_rps_c12_vs_embedded"] = ratio(f["chroma_rps_c12_workers_1"], f.get("rps_c12"))
