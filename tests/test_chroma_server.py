"""Server mode: a real `chroma run` on loopback, started and stopped here, used through EVENTBOT_CHROMA_URL."""

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import ARTICLE, SAFETY_TIMEOUT_S, run_cli

CHROMA = str(Path(sys.executable).parent / "chroma")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def chroma_run(path: Path, port: int) -> Iterator[subprocess.Popen]:
    """`chroma run` holding its data in `path` on `port`, up once its heartbeat answers; stopped after."""
    proc = subprocess.Popen(
        [CHROMA, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + SAFETY_TIMEOUT_S  # as long as it takes to start; only a hang fails
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not start ({'exited' if proc.poll() is not None else 'still starting'})")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=SAFETY_TIMEOUT_S)


@pytest.fixture
def chroma_url(tmp_path):
    port = free_port()
    with chroma_run(tmp_path / "chroma", port) as proc:
        yield f"http://127.0.0.1:{port}", proc


def test_index_and_ask_through_a_chroma_server(chroma_url, tmp_path):
    url, proc = chroma_url
    env = {"EVENTBOT_CHROMA_URL": url, "EVENTBOT_INDEX_DIR": str(tmp_path / "unused")}
    first = json.loads(run_cli("index", "--json", env=env).stdout.strip().splitlines()[-1])
    assert first["added"] == first["chunks"] > 1
    again = json.loads(run_cli("index", "--json", env=env).stdout.strip().splitlines()[-1])
    assert again["added"] == 0 and again["unchanged"] == first["chunks"]
    assert not (tmp_path / "unused").exists()  # nothing was written locally

    answer = json.loads(run_cli("ask", "--json", "Who consoled Sakamoto?", env=env).stdout)
    assert "Alysa Liu" in answer["answer"]
    assert answer["citations"][0]["quote"] in ARTICLE.read_text(encoding="utf-8")

    proc.terminate()
    proc.wait(timeout=SAFETY_TIMEOUT_S)
    down = run_cli("ask", "Who consoled Sakamoto?", env=env, check=False)
    assert down.returncode == 2 and "cannot reach the Chroma server" in down.stderr
