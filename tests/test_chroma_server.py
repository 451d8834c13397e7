"""Server mode: a real `chroma run` on loopback, started and stopped here, used through EVENTBOT_CHROMA_URL."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ARTICLE, run_cli

CHROMA = str(Path(sys.executable).parent / "chroma")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def chroma_url(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [CHROMA, "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
        else:
            pytest.fail("chroma run did not start")
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_index_and_ask_through_a_chroma_server(chroma_url, tmp_path):
    url, proc = chroma_url
    env = {"EVENTBOT_CHROMA_URL": url, "EVENTBOT_INDEX_DIR": str(tmp_path / "unused")}
    first = json.loads(run_cli("index", "--json", env=env).stdout.strip().splitlines()[-1])
    assert first["added"] == first["chunks"] > 1
    again = json.loads(run_cli("index", "--json", env=env).stdout.strip().splitlines()[-1])
    assert again["added"] == 0 and again["unchanged"] == first["chunks"]
    assert not (tmp_path / "unused").exists()  # nothing was written locally

    answer = json.loads(run_cli("ask", "--json", "Who won the gold medal?", env=env).stdout)
    assert "Alysa Liu" in answer["answer"]
    assert answer["citations"][0]["quote"] in ARTICLE.read_text(encoding="utf-8")

    proc.terminate()
    proc.wait(timeout=20)
    down = run_cli("ask", "Who won the gold medal?", env=env, check=False)
    assert down.returncode == 2 and "cannot reach the Chroma server" in down.stderr
