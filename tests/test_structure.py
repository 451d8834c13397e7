"""The shape of the code, checked: serving apart from the tools, one module over the store, no dead code, small
modules and functions (what a stranger needs to read the project in ten minutes)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("bot", "index", "ui")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_REGEX_CALLS = 20  # in bot/ outside bot/lang/: text is read through spaCy's tokens, phrases are language data


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every module `path` imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_store_module_talks_to_chroma():
    """chromadb is reached through index/store.py alone, and there through its public API: no attribute that starts
    with an underscore, but for Chroma's per-process cache of client systems (no public call detaches one; the
    comment above `detach_local_client` says why the server needs it)."""
    importing = [str(p.relative_to(ROOT)) for p in sources() if "chromadb" in imported_modules(p)]
    assert importing == ["index/store.py"]
    private = [
        node.attr
        for node in ast.walk(ast.parse((ROOT / "index/store.py").read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
    ]
    assert set(private) <= {"_identifier_to_system"}


def printed_by(script: str, index_dir: Path) -> str:
    """The last line `script` prints, run in a fresh Python over the test index (a process of its own: what it
    imports and runs is its alone)."""
    env = os.environ | {"EVENTBOT_INDEX_DIR": str(index_dir)}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_serving_imports_nothing_of_evaluation_benchmark_or_training(index_dir):
    """A server answering a question loads no module of bot/eval or bot/training (nor the PDF maker they use)."""
    script = (
        "import sys\n"
        "from bot.settings import Settings\n"
        "from bot.event_bot import EventBot\n"
        "from ui.server import create_app\n"
        "bot = EventBot(Settings())\n"
        "bot.ask('How old is Sakamoto?')\n"
        "create_app(bot)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('bot.eval', 'bot.training', 'fpdf'))))\n"
    )
    assert printed_by(script, index_dir) == "[]"


def test_a_question_runs_of_index_only_the_store_the_embedder_and_the_text_layer(index_dir):
    """`index` is ingestion; at ask time the bot runs of it only the store adapter, the embedding model and the
    text layer (which parses the question as indexing parsed the documents). Every function of index/ called while
    a question is answered (after a first one has loaded everything) is recorded."""
    script = (
        "import sys, threading\n"
        "from bot.settings import Settings\n"
        "from bot.event_bot import EventBot\n"
        "bot = EventBot(Settings())\n"
        "bot.ask('How old is Sakamoto?')\n"
        "seen = set()\n"
        "def profile(frame, event, arg):\n"
        "    if event == 'call' and '/index/' in frame.f_code.co_filename:\n"
        "        seen.add(frame.f_code.co_filename.split('/index/', 1)[1])\n"
        "sys.setprofile(profile); threading.setprofile(profile)\n"
        "bot.ask('Who consoled her after the free skate?')\n"
        "sys.setprofile(None)\n"
        "print(sorted(seen))\n"
    )
    ran = set(ast.literal_eval(printed_by(script, index_dir)))
    assert "store.py" in ran, ran  # the profile sees index/ at all
    assert ran <= {"store.py", "embeddings.py", "text/pipeline.py", "text/sentences.py"}, ran


def test_no_module_or_function_is_too_long():
    long_modules, long_functions = [], []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            long_modules.append(str(path.relative_to(ROOT)))
        for node in ast.walk(ast.parse(text)):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if function and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert not long_modules, f"over {MAX_MODULE_LINES} lines: {long_modules}"
    assert not long_functions, f"over {MAX_FUNCTION_LINES} lines: {long_functions}"


def test_bot_reads_text_through_tokens_not_regular_expressions():
    """Calls of the `re` module in bot/ outside bot/lang/ (the language data) stay few: 68 before issue 31."""
    calls = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        if "lang" not in path.relative_to(ROOT / "bot").parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    ]
    assert len(calls) <= MAX_REGEX_CALLS, calls


def test_a_question_is_checked_once_on_its_way(index_dir, monkeypatch):
    """`eventbot ask` checks its question before any model loads, and the bot does not check it again."""
    from typer.testing import CliRunner

    import bot.event_bot
    import bot.questions
    from ui.cli import app

    checked, check = [], bot.questions.check_question
    for module in (bot.questions, bot.event_bot):  # where it is defined, and where the bot calls it
        monkeypatch.setattr(module, "check_question", lambda *a, **k: checked.append(a[1]) or check(*a, **k))
    monkeypatch.setenv("EVENTBOT_INDEX_DIR", str(index_dir))
    result = CliRunner().invoke(app, ["ask", "  How old is Sakamoto?"])
    assert result.exit_code == 0, result.output
    assert checked == ["  How old is Sakamoto?"] and "25" in result.output


def test_vulture_finds_no_dead_code():
    """At 60 % confidence (unused functions, methods and attributes too); what a framework calls is listed, with
    why, in tests/vulture_whitelist.py."""
    vulture = Path(sys.executable).parent / "vulture"
    if not vulture.exists():
        pytest.fail("vulture is a dev dependency: `pip install -e '.[dev]'`")
    found = subprocess.run(
        [str(vulture), *PACKAGES, "tests/vulture_whitelist.py", "--min-confidence", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0 and not found.stdout.strip(), found.stdout
