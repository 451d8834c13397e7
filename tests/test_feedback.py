"""Feedback on replies (issue 32): kept in a real SQLite file through a real uvicorn server (in-process, and
`eventbot serve` killed with SIGKILL), listed newest first, refused whole when bad, and exported by the real
`eventbot feedback export` as an evaluation set that `eventbot eval` refuses until it is labelled."""

import hashlib
import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from bot.eval.items import default_datasets, load_dataset
from bot.feedback import FeedbackStore, code_commit
from bot.serving import ServedBot
from bot.types import Turn
from tests.conftest import SAFETY_TIMEOUT_S, run_cli, serve_process
from tests.test_api import API_KEY, SILVER_TURNS, running
from ui.server import build_api

GOLD = "Who won the gold medal?"
BREAKFAST = "What did Amber Glenn eat for breakfast?"


@contextmanager
def serving(bot, settings, feedback_path: Path, **update) -> Iterator[httpx.Client]:
    """The API (ui.server.build_api) over `feedback_path` in a real uvicorn; yields a client of it."""
    server_settings = settings.model_copy(
        update={"api_key": None, "feedback_path": feedback_path, "uploads_dir": feedback_path.parent / "uploads"}
        | update
    )
    served = ServedBot(bot, server_settings, warm=False, watch=False)
    try:
        with running(build_api(served)) as url, httpx.Client(base_url=url, timeout=60) as client:
            yield client
    finally:
        served.close()


@pytest.fixture
def feedback_path(tmp_path) -> Path:
    return tmp_path / "kept" / "feedback.sqlite3"


@pytest.fixture
def http(bot, settings, feedback_path) -> Iterator[httpx.Client]:
    with serving(bot, settings, feedback_path) as client:
        yield client


@pytest.fixture(scope="module")
def gold(bot):
    """A real answer of the bot, with its citations."""
    return bot.ask(GOLD)


def kept(path: Path) -> list:
    return FeedbackStore(path).all() if path.exists() else []


# ---------------------------------------------------------------------------------------------- POST and GET


def test_feedback_is_kept_with_what_answered_and_listed_newest_first(http, gold, settings, feedback_path):
    citations = [c.model_dump() for c in gold.citations]
    up = {"question": GOLD, "answer": gold.answer, "rating": "up", "citations": citations}
    down = {
        "question": "How old is she?",
        "answer": "The article doesn't say.",
        "rating": "down",
        "comment": "  She is 25: the article says so.  ",
        "history": SILVER_TURNS,
    }
    r = http.post("/api/feedback", json=up)
    assert r.status_code == 200, r.text
    first = r.json()
    weights = hashlib.sha256(settings.reader_weights.read_bytes()).hexdigest()[:12]
    assert first | up == first and first["comment"] is None and first["history"] == []
    assert first["citations"] == citations and citations and "page" not in citations[0]
    assert first["commit"] == code_commit() and first["reader"] == weights and first["backend"] == "extractive"
    assert datetime.fromisoformat(first["created_at"]).utcoffset() == UTC.utcoffset(None)
    second = http.post("/api/feedback", json=down).json()
    assert second["id"] > first["id"] and second["comment"] == "She is 25: the article says so."
    assert second["history"] == SILVER_TURNS and second["citations"] == []

    listed = http.get("/api/feedback").json()
    assert listed == {"feedback": [second, first], "page": 1, "per_page": 50, "total": 2}
    assert http.get("/api/feedback", params={"rating": "down"}).json()["feedback"] == [second]
    assert [f.id for f in kept(feedback_path)] == [first["id"], second["id"]]  # on disk, oldest first


def test_pages_and_the_rating_filter(http):
    ids = []
    for n in range(7):
        body = {"question": f"Question {n}?", "answer": f"Answer {n}.", "rating": "down" if n % 2 else "up"}
        ids.append(http.post("/api/feedback", json=body).json()["id"])
    newest_first = ids[::-1]

    def page(**params) -> dict:
        r = http.get("/api/feedback", params=params)
        assert r.status_code == 200, r.text
        return r.json()

    assert [f["id"] for f in page(per_page=3)["feedback"]] == newest_first[:3]
    assert [f["id"] for f in page(page=2, per_page=3)["feedback"]] == newest_first[3:6]
    last = page(page=3, per_page=3)
    assert [f["id"] for f in last["feedback"]] == newest_first[6:] and last["total"] == 7
    assert page(page=4, per_page=3) == {"feedback": [], "page": 4, "per_page": 3, "total": 7}
    downs = page(rating="down", per_page=2)
    assert [f["id"] for f in downs["feedback"]] == [ids[5], ids[3]] and downs["total"] == 3
    assert all(f["rating"] == "down" for f in page(rating="down")["feedback"])
    assert page(rating="up")["total"] == 4
    for params in ({"page": 0}, {"per_page": 0}, {"per_page": 201}, {"rating": "meh"}, {"page": "x"}):
        assert http.get("/api/feedback", params=params).status_code == 422, params
    assert http.delete("/api/feedback").status_code == 405


def test_docs_show_the_routes_with_examples(http):
    spec = http.get("/openapi.json").json()
    assert set(spec["paths"]["/api/feedback"]) == {"get", "post"}
    assert spec["components"]["schemas"]["FeedbackIn"]["examples"]
    assert "Example request" in spec["paths"]["/api/feedback"]["post"]["description"]


def test_kept_across_a_restart(bot, settings, feedback_path):
    body = {"question": GOLD, "answer": "Alysa Liu won the gold medal [1].", "rating": "up"}
    with serving(bot, settings, feedback_path) as client:
        item = client.post("/api/feedback", json=body).json()
    with serving(bot, settings, feedback_path) as client:
        assert client.get("/api/feedback").json()["feedback"] == [item]


# ---------------------------------------------------------------------------------------------- refused whole


def turns(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(n)]


GOOD = {"question": GOLD, "answer": "Alysa Liu won the gold medal [1].", "rating": "down"}
CITATION = {"n": 1, "source": "event-article.txt", "chunk_id": "c", "quote": "q"}


@pytest.mark.parametrize(
    ("body", "one_line"),
    [
        (GOOD | {"rating": "meh"}, None),
        (GOOD | {"rating": None}, None),
        (GOOD | {"comment": "x" * 1001}, "the comment is 1001 characters long; the limit is 1000"),
        (GOOD | {"colour": "blue"}, None),
        (GOOD | {"history": [{"role": "user", "content": "hi", "mood": "glad"}]}, None),
        (GOOD | {"question": "   "}, "the question is empty"),
        (GOOD | {"question": "x" * 2001}, "the question is 2001 characters long; the limit is 2000"),
        (GOOD | {"answer": " \n"}, "the answer is empty"),
        (GOOD | {"answer": "x" * 20_001}, None),
        (GOOD | {"history": turns(41)}, "the history has 41 messages; the limit is 40"),
        (GOOD | {"citations": [CITATION] * 51}, None),
        (GOOD | {"citations": [CITATION | {"url": "x"}]}, None),
        ({k: v for k, v in GOOD.items() if k != "answer"}, None),
    ],
    ids=[
        "wrong rating",
        "no rating",
        "long comment",
        "unknown field",
        "unknown history field",
        "empty question",
        "long question",
        "empty answer",
        "long answer",
        "long history",
        "many citations",
        "unknown citation field",
        "no answer",
    ],
)
def test_bad_feedback_is_422_and_nothing_is_kept(http, feedback_path, body, one_line):
    r = http.post("/api/feedback", json=body)
    assert r.status_code == 422, r.text
    if one_line:  # a limit set by the settings: one line, as /api/ask says it
        assert r.json() == {"detail": one_line}
    assert http.get("/api/feedback").json()["total"] == 0 and kept(feedback_path) == []


def test_with_an_api_key_feedback_needs_it(bot, settings, feedback_path):
    with serving(bot, settings, feedback_path, api_key=API_KEY) as client:
        refused = client.post("/api/feedback", json=GOOD)
        assert refused.status_code == 401 and client.get("/api/feedback").status_code == 401
        assert kept(feedback_path) == []
        key = {"Authorization": f"Bearer {API_KEY}"}
        assert client.post("/api/feedback", json=GOOD, headers=key).status_code == 200
        assert client.get("/api/feedback", headers=key).json()["total"] == 1


# ---------------------------------------------------------------------------------------------- a crash


def test_a_killed_server_loses_no_acknowledged_feedback(index_dir, tmp_path):
    """`eventbot serve` killed with SIGKILL right after its last answer: everything it acknowledged is in the file."""
    path = tmp_path / "feedback.sqlite3"
    with serve_process({"EVENTBOT_INDEX_DIR": str(index_dir), "EVENTBOT_FEEDBACK_PATH": str(path)}) as served:
        with httpx.Client(base_url=served.url, timeout=60) as client:
            acknowledged = []
            for n in range(5):
                r = client.post("/api/feedback", json=GOOD | {"question": f"Question {n}?", "comment": f"n={n}"})
                assert r.status_code == 200, r.text
                acknowledged.append(r.json())
        served.process.send_signal(signal.SIGKILL)
        assert served.process.wait(SAFETY_TIMEOUT_S) == -signal.SIGKILL
    assert [f.model_dump() for f in FeedbackStore(path).all()] == acknowledged


# ---------------------------------------------------------------------------------------------- export, label, eval


def test_export_down_then_label_then_eval(http, feedback_path, tmp_path):
    given = [
        {"question": GOLD, "answer": "Kaori Sakamoto won the silver medal [1].", "rating": "down", "comment": "gold!"},
        {"question": "Who won silver?", "answer": "Kaori Sakamoto won the silver medal [1].", "rating": "up"},
        {"question": BREAKFAST, "answer": "Toast [1].", "rating": "down", "history": SILVER_TURNS},
    ]
    items = [http.post("/api/feedback", json=body).json() for body in given]
    env = {"EVENTBOT_FEEDBACK_PATH": str(feedback_path)}
    out = tmp_path / "week.jsonl"

    proc = run_cli("feedback", "export", "--rating", "down", "--out", str(out), env=env)
    assert proc.stdout == "" and proc.stderr.strip() == (
        f"wrote 2 questions to {out}: fill in `answerable` (and `answers`) for each, then "
        f"`eventbot eval --dataset {out}`"
    )
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert exported == [
        {
            "id": f"feedback-{item['id']}",
            "question": item["question"],
            "answers": [],
            "answerable": None,
            "evidence": "",
            "kind": "feedback",
            "history": item["history"],
            "given_answer": item["answer"],
            "rating": "down",
            "comment": item["comment"],
            "given_at": item["created_at"],
        }
        for item in (items[0], items[2])
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    assert run_cli("feedback", "export", env=env).stdout.count("\n") == 3  # all, to stdout

    refused = run_cli("eval", "--dataset", str(out), check=False)
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f'eventbot: {out}:1: not labelled yet: set "answerable" (true or false) and, when true, "answers"'
    )

    labels = {GOLD: (True, ["Alysa Liu"]), BREAKFAST: (False, [])}
    exported = [e | {"answerable": labels[e["question"]][0], "answers": labels[e["question"]][1]} for e in exported]
    out.write_text("".join(json.dumps(e) + "\n" for e in exported), encoding="utf-8")
    loaded = load_dataset(out)
    assert [(i.id, i.answerable, i.answers, i.kind) for i in loaded] == [
        (e["id"], e["answerable"], e["answers"], "feedback") for e in exported
    ]
    assert [t.model_dump() for t in loaded[1].history] == SILVER_TURNS

    [scored] = json.loads(run_cli("eval", "--dataset", str(out), "--json").stdout)["datasets"]
    assert scored["name"] == "week" and scored["kinds"] == ["feedback"]
    assert [i["id"] for i in scored["results"]["default"]["items"]] == [e["id"] for e in exported]


def test_every_development_set_counts_as_labelled():
    sets = default_datasets()
    assert len(sets) > 20 and all(load_dataset(path) for path in sets)


def test_export_of_nothing_writes_nothing(tmp_path):
    out = tmp_path / "none.jsonl"
    env = {"EVENTBOT_FEEDBACK_PATH": str(tmp_path / "feedback.sqlite3")}
    proc = run_cli("feedback", "export", "--rating", "down", "--out", str(out), env=env)
    assert proc.stdout == "" and "no down feedback kept" in proc.stderr and not out.exists()
    wrong = run_cli("feedback", "export", "--rating", "meh", env=env, check=False)
    assert wrong.returncode == 2 and "up" in wrong.stderr


# ---------------------------------------------------------------------------------------------- the store itself


def test_the_chat_can_change_a_rating_and_take_it_back(settings, feedback_path, gold):
    store = FeedbackStore(feedback_path, settings)
    history = [Turn(**t) for t in SILVER_TURNS]
    item = store.add(
        {"question": GOLD, "answer": gold.answer, "rating": "down", "history": history, "citations": gold.citations}
    )
    assert [t.model_dump() for t in item.history] == SILVER_TURNS  # the chat's own objects are taken
    assert [c.model_dump() for c in item.citations] == [c.model_dump() for c in gold.citations]
    assert store.rate(item.id, "down", "It asked about gold.").comment == "It asked about gold."
    assert store.rate(item.id, "up").comment == "It asked about gold."  # None keeps the comment
    assert store.rate(item.id, "up", "").comment is None
    assert store.remove(item.id) and not store.remove(item.id) and store.all() == []


def test_a_newer_schema_is_refused(settings, feedback_path):
    import sqlite3

    FeedbackStore(feedback_path, settings)
    with sqlite3.connect(feedback_path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    proc = run_cli("feedback", "export", env={"EVENTBOT_FEEDBACK_PATH": str(feedback_path)}, check=False)
    assert proc.returncode == 2 and "schema version 99, newer than this eventbot's 1" in proc.stderr
