"""The load generator: concurrent clients sending `POST /api/ask` to a live server."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from bot.eval.bench.figures import ms


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
                    latencies.append(ms(time.perf_counter() - t0))
                    errors += not ok

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]  # no wait on a kill
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return round(requests / (time.perf_counter() - t0), 2), errors, latencies
