"""Shared fixtures: a real index (real MiniLM, real embedded Chroma) built once per test session."""

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTICLE = ROOT / "data" / "event-article.txt"
EVENTBOT = str(Path(sys.executable).parent / "eventbot")
# Tests check behaviour, never speed: this limit is only there so that a hang cannot block a test run forever.
SAFETY_TIMEOUT_S = 1800

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# The span reader alone unless a test asks for an LLM: the default (the local Qwen, tests/test_default_llm.py) costs
# seconds a question on 2 cores, and the suite's hundreds of questions test the chain around it
os.environ.setdefault("EVENTBOT_LLM", "none")
# Feedback that servers under test keep goes to a folder of the test run, not the work tree's .eventbot/
os.environ.setdefault("EVENTBOT_FEEDBACK_PATH", str(Path(tempfile.mkdtemp(prefix="eventbot-feedback-")) / "fb.sqlite3"))
# as do the chat's conversations
os.environ.setdefault(
    "EVENTBOT_CONVERSATIONS_PATH", str(Path(tempfile.mkdtemp(prefix="eventbot-conversations-")) / "conv.sqlite3")
)
# and what the LLM read of documents is saved there too (bot.answer.prompt_states)
os.environ.setdefault("EVENTBOT_LLM_STATE_DIR", tempfile.mkdtemp(prefix="eventbot-llm-states-"))


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory) -> Path:
    """An index of the bundled article, built by the real CLI."""
    path = tmp_path_factory.mktemp("index")
    run_cli("index", env={"EVENTBOT_INDEX_DIR": str(path)})
    return path


@pytest.fixture(scope="session")
def settings(index_dir):
    from bot.settings import Settings

    return Settings(index_dir=index_dir)


@pytest.fixture(scope="session")
def bot(settings):
    from bot.event_bot import EventBot

    return EventBot(settings)


def run_cli(
    *args: str, env: dict | None = None, check: bool = True, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """Run the installed `eventbot` console script as a user would, for as long as it takes (a hang fails after
    SAFETY_TIMEOUT_S, stopped with SIGTERM first, as a CI timeout stops it, so that it can stop what it started).
    `unset`: variables the test run sets that this command must not see (to run a default)."""
    full_env = {k: v for k, v in (os.environ | (env or {})).items() if k not in unset}
    popen = subprocess.Popen(
        [EVENTBOT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=ROOT
    )
    try:
        stdout, stderr = popen.communicate(timeout=SAFETY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        popen.terminate()
        try:
            stdout, stderr = popen.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            popen.kill()
            stdout, stderr = popen.communicate()
        raise AssertionError(
            f"eventbot {' '.join(args)} still ran after {SAFETY_TIMEOUT_S} s: {stderr[-2000:]}"
        ) from None
    except BaseException:  # Ctrl-C, a failure: nothing left running
        popen.kill()
        popen.wait()
        raise
    proc = subprocess.CompletedProcess(popen.args, popen.returncode, stdout, stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"eventbot {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def assert_not_answered(answer, document: str = "") -> None:
    """An answer object (or its JSON) that answers nothing: a decline without citations, or an unsure reply that says
    so and quotes the closest sentence verbatim (`document`, when given); never a short answer."""
    get = answer.get if isinstance(answer, dict) else lambda k: getattr(answer, k)
    text, citations = get("answer"), get("citations")
    assert get("abstained") and get("short_answer") is None, text
    if text.startswith("I'm not sure"):
        assert len(citations) == 1, text
        quote = citations[0]["quote"] if isinstance(citations[0], dict) else citations[0].quote
        assert f"“{quote.strip()}”" in text and (not document or quote in document)
    else:
        assert text.startswith(("The article doesn't say", "The documents don't say")) and citations == [], text


def assert_right_or_declined(answer, expected: str, not_expected: str | None = None) -> None:
    """Never a wrong answer: either `expected` is in the reply (and `not_expected`, a value of the same kind the
    document gives for something else, is not), or the question is not answered (declined, or unsure)."""
    if answer.abstained:
        assert answer.short_answer is None, answer.answer
        return
    assert expected.lower() in answer.answer.lower(), answer.answer
    assert not_expected is None or not_expected.lower() not in answer.answer.lower(), answer.answer


@dataclass
class Served:
    url: str
    process: subprocess.Popen
    ready_line: str  # what `eventbot serve` printed once the bot was open


@contextmanager
def serve_process(env: dict[str, str], *args: str) -> Iterator[Served]:
    """`eventbot serve --port 0 [args]` as a user starts it, with these settings; yields it once /healthz answers
    200; stopped after."""
    import httpx

    proc = subprocess.Popen(
        [EVENTBOT, "serve", "--port", "0", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=os.environ | env,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=SAFETY_TIMEOUT_S)
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        deadline = time.monotonic() + SAFETY_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not answer /healthz"
            time.sleep(0.1)
        yield Served(url, proc, line)
    finally:
        proc.terminate()
        proc.wait(SAFETY_TIMEOUT_S)
