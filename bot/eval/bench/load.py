"""The load generator: concurrent clients sending `POST /api/ask` to a live server; and one client streaming an answer
from `POST /v1/chat/completions`, timed to its first words and to its end."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.eval.bench.figures import ms


@dataclass(frozen=True)
class Reply:
    status: int  # 0: no reply (a connection error or the client's timeout)
    retry_after: bool  # it carried a Retry-After header
    ms: float


def ask_all(url: str, questions: Sequence[str], concurrency: int, timeout_s: float = 120.0) -> list[Reply]:
    """Each question once as POST /api/ask, from `concurrency` clients at once; the replies in the questions' order."""
    import httpx

    replies: list[Reply | None] = [None] * len(questions)
    lock = threading.Lock()
    counter = iter(range(len(questions)))

    def client() -> None:
        with httpx.Client(base_url=url, timeout=timeout_s) as http:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                t0 = time.perf_counter()
                try:
                    got = http.post("/api/ask", json={"question": questions[n]})
                    status, retry_after = got.status_code, "retry-after" in got.headers
                except httpx.HTTPError:
                    status, retry_after = 0, False
                replies[n] = Reply(status, retry_after, ms(time.perf_counter() - t0))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]  # no wait on a kill
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in replies if r is not None]


def load(url: str, questions: Sequence[str], concurrency: int, requests: int) -> tuple[float, int, list[float]]:
    """`requests` POST /api/ask from `concurrency` clients at once, cycling through `questions`; (requests/s, errors,
    latencies in ms)."""
    t0 = time.perf_counter()
    replies = ask_all(url, [questions[n % len(questions)] for n in range(requests)], concurrency)
    rps = round(requests / (time.perf_counter() - t0), 2)
    return rps, requests - sum(r.status == 200 for r in replies), [r.ms for r in replies]  # a lost reply is an error


@dataclass(frozen=True)
class Streamed:
    status: int
    first_ms: float  # to the first chunk with words of the answer
    whole_ms: float  # to `data: [DONE]`


def stream_answer(url: str, question: str, timeout_s: float = 120.0) -> Streamed:
    """`question` as a streamed OpenAI chat completion, as a chat client sends it."""
    import httpx

    body = {"model": "eventbot", "stream": True, "messages": [{"role": "user", "content": question}]}
    t0 = time.perf_counter()
    first = None
    with (
        httpx.Client(base_url=url, timeout=timeout_s) as http,
        http.stream("POST", "/v1/chat/completions", json=body) as r,
    ):
        for line in r.iter_lines():
            if first is None and line.startswith("data: {") and '"content": "' in line and '"content": ""' not in line:
                first = time.perf_counter() - t0
        whole = time.perf_counter() - t0
    return Streamed(r.status_code, ms(first if first is not None else whole), ms(whole))
