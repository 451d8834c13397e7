"""Shared fixtures: a real index (real MiniLM, real embedded Chroma) built once per test session."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTICLE = ROOT / "data" / "event-article.txt"
EVENTBOT = str(Path(sys.executable).parent / "eventbot")
# Tests check behaviour, never speed: this limit is only there so that a hang cannot block a test run forever.
SAFETY_TIMEOUT_S = 1800

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


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
    from bot.service import EventBot

    return EventBot(settings)


def run_cli(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run the installed `eventbot` console script as a user would."""
    full_env = os.environ | (env or {})
    proc = subprocess.run([EVENTBOT, *args], capture_output=True, text=True, env=full_env, cwd=ROOT, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"eventbot {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc
