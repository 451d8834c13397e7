"""Collections: documents indexed into a named collection are read only by questions put to that collection, through
the CLI (`--collection`), the API (`collection`) and the OpenAI API (`model`); the server's own collection answers
as before; an unknown or impossible name is a 4xx or a one-line error; re-indexing one collection from scratch
leaves the other's answers as they were."""

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.event_bot import EventBot
from bot.serving import ServedBot
from bot.settings import Settings
from tests.conftest import run_cli
from tests.test_api import running
from tests.test_documents import ARTICLE_QUESTION, REGATTA_ANSWER, REGATTA_PAGES, REGATTA_QUESTION
from ui.server import create_app


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    """The article in the default collection, the regatta report in `regatta`."""
    folder = tmp_path_factory.mktemp("collections")
    report = folder / "regatta.txt"
    report.write_text("\n\n".join(p for page in REGATTA_PAGES for p in page) + "\n", encoding="utf-8")
    env = {"EVENTBOT_INDEX_DIR": str(folder / "index")}
    run_cli("index", env=env)
    run_cli("index", "--collection", "regatta", str(report), env=env)
    return folder / "index"


def asked(index_dir: Path, *args: str) -> list[dict]:
    out = run_cli("ask", "--json", *args, env={"EVENTBOT_INDEX_DIR": str(index_dir)}).stdout
    return [json.loads(line) for line in out.splitlines()]


def test_each_collection_answers_from_its_own_documents_only(index_dir):
    regatta, article = asked(index_dir, "--collection", "regatta", REGATTA_QUESTION, ARTICLE_QUESTION)
    assert REGATTA_ANSWER in regatta["answer"] and regatta["citations"][0]["source"] == "regatta.txt", regatta
    assert article["abstained"], article
    regatta, article = asked(index_dir, REGATTA_QUESTION, ARTICLE_QUESTION)  # the default collection
    assert regatta["abstained"], regatta
    assert not article["abstained"] and article["citations"][0]["source"] == "event-article.txt", article


def test_an_unknown_or_impossible_collection_is_one_line(index_dir):
    env = {"EVENTBOT_INDEX_DIR": str(index_dir)}
    unknown = run_cli("ask", "--collection", "ferries", REGATTA_QUESTION, env=env, check=False)
    assert unknown.returncode == 2 and "no collection 'ferries'" in unknown.stderr, unknown.stderr
    assert "eventbot index --collection ferries" in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
    impossible = run_cli("ask", "--collection", "../x", REGATTA_QUESTION, env=env, check=False)
    assert impossible.returncode == 2 and "cannot name a collection" in impossible.stderr, impossible.stderr


@pytest.fixture(scope="module")
def http(index_dir, tmp_path_factory) -> Iterator[httpx.Client]:
    uploads = tmp_path_factory.mktemp("uploads")  # the documents routes need uploads on (or a key)
    settings = Settings(index_dir=index_dir, api_key=None, rate_limit=0, uploads="on", uploads_dir=uploads)
    served = ServedBot(EventBot(settings), settings, watch=False)
    with running(create_app(served)) as url, httpx.Client(base_url=url, timeout=300) as client:
        yield client
    served.close()


def test_the_api_answers_from_the_collection_it_names(http):
    regatta = http.post("/api/ask", json={"question": REGATTA_QUESTION, "collection": "regatta"}).json()
    assert REGATTA_ANSWER in regatta["answer"] and regatta["citations"][0]["source"] == "regatta.txt", regatta
    assert http.post("/api/ask", json={"question": REGATTA_QUESTION}).json()["abstained"]
    listed = http.get("/api/documents", params={"collection": "regatta"})
    assert [d["name"] for d in listed.json()["documents"]] == ["regatta.txt"], listed.text
    assert [d["name"] for d in http.get("/api/documents").json()["documents"]] == ["event-article.txt"]

    for body, status, word in [
        ({"question": REGATTA_QUESTION, "collection": "ferries"}, 404, "no collection 'ferries'"),
        ({"question": REGATTA_QUESTION, "collection": "a/../b"}, 422, "cannot name a collection"),
    ]:
        r = http.post("/api/ask", json=body)
        detail = r.json()["detail"]
        assert r.status_code == status and isinstance(detail, str) and word in detail and "\n" not in detail, r.text


def test_an_openai_model_may_name_a_collection(http):
    assert [m["id"] for m in http.get("/v1/models").json()["data"]] == ["eventbot", "regatta"]
    assert http.get("/v1/models/regatta").status_code == 200 and http.get("/v1/models/ferries").status_code == 404

    def reply(model: str) -> str:
        body = {"model": model, "messages": [{"role": "user", "content": REGATTA_QUESTION}]}
        r = http.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        return r.json()["choices"][0]["message"]["content"]

    assert REGATTA_ANSWER in reply("regatta")
    assert REGATTA_ANSWER not in reply("gpt-4o-mini")  # any other name: the server's own collection, as before


def test_documents_added_to_and_removed_from_another_collection(http):
    def ask(collection: str | None = None) -> dict:
        return http.post("/api/ask", json={"question": HARBOUR_QUESTION, "collection": collection}).json()

    files = {"files": ("harbour.txt", HARBOUR, "text/plain")}
    added = http.post("/api/documents", params={"collection": "regatta"}, files=files)
    assert added.status_code == 200 and added.json()["index"]["documents"] == 2, added.text
    assert "Osprey" in ask("regatta")["answer"] and "Osprey" not in ask()["answer"]  # not the server's own
    own = http.post("/api/documents", files=files)  # the same name, kept for regatta: refused, nothing lost
    assert own.status_code == 409 and "another collection" in own.json()["detail"], own.text
    assert [d["name"] for d in http.get("/api/documents").json()["documents"]] == ["event-article.txt"]

    left = http.delete("/api/documents/harbour.txt", params={"collection": "regatta"})
    assert [d["name"] for d in left.json()["documents"]] == ["regatta.txt"], left.text
    assert "Osprey" not in ask("regatta")["answer"]
    assert http.post("/api/documents", params={"collection": "ferries"}, files=files).status_code == 404


def test_indexing_one_collection_anew_leaves_the_other_as_it_was(index_dir, tmp_path):
    before = asked(index_dir, ARTICLE_QUESTION)[0]
    ferry = tmp_path / "ferry.txt"
    ferry.write_text("The night ferry to Kestrel Bay was cancelled because of fog, the port authority said.\n")
    run_cli("index", "--collection", "regatta", "--reset", str(ferry), env={"EVENTBOT_INDEX_DIR": str(index_dir)})
    regatta = asked(index_dir, "--collection", "regatta", REGATTA_QUESTION)[0]
    assert regatta["abstained"] and REGATTA_ANSWER not in regatta["answer"], regatta
    after = asked(index_dir, ARTICLE_QUESTION)[0]
    assert (after["answer"], after["citations"]) == (before["answer"], before["citations"])


# ---------------------------------------------------------------------------------------------- removing one


@pytest.fixture
def three(tmp_path) -> Path:
    """The article in the default collection, the regatta report in `regatta`, a ferry notice in `ferries`."""
    report, ferry = tmp_path / "regatta.txt", tmp_path / "ferry.txt"
    report.write_text("\n\n".join(p for page in REGATTA_PAGES for p in page) + "\n", encoding="utf-8")
    ferry.write_text("The night ferry to Kestrel Bay was cancelled because of fog, the port authority said.\n")
    env = {"EVENTBOT_INDEX_DIR": str(tmp_path / "index")}
    run_cli("index", env=env)
    run_cli("index", "--collection", "regatta", str(report), env=env)
    run_cli("index", "--collection", "ferries", str(ferry), env=env)
    return tmp_path / "index"


def test_removing_a_collection_from_the_cli_leaves_the_others_answers(three, tmp_path):
    env = {"EVENTBOT_INDEX_DIR": str(three), "EVENTBOT_LLM_STATE_DIR": str(tmp_path / "states")}
    saved = tmp_path / "states" / "regatta" / "x.llamastate"  # where the LLM keeps its readings of regatta's
    saved.parent.mkdir(parents=True)
    saved.write_bytes(b"reading")
    before = asked(three, ARTICLE_QUESTION)[0]
    listed = json.loads(run_cli("collections", "list", "--json", env=env).stdout)["collections"]
    assert [(c["name"], c["documents"]) for c in listed] == [("eventbot", 1), ("ferries", 1), ("regatta", 1)]

    removed = json.loads(run_cli("collections", "remove", "regatta", "--json", env=env).stdout)
    assert removed["name"] == "regatta" and removed["documents"] == 1 and removed["chunks"] > 0
    assert not saved.parent.exists() and not list(three.glob("regatta.*"))
    listed = json.loads(run_cli("collections", "list", "--json", env=env).stdout)["collections"]
    assert [c["name"] for c in listed] == ["eventbot", "ferries"]
    after = asked(three, ARTICLE_QUESTION)[0]
    assert (after["answer"], after["citations"]) == (before["answer"], before["citations"])
    gone = run_cli("ask", "--collection", "regatta", REGATTA_QUESTION, env=env, check=False)
    assert gone.returncode == 2 and "no collection 'regatta'" in gone.stderr
    again = run_cli("collections", "remove", "regatta", env=env, check=False)
    assert (
        again.returncode == 2
        and again.stderr.strip() == "eventbot: no collection 'regatta' in the index (it has eventbot, ferries)"
    )


def test_removing_a_collection_over_the_api_takes_its_uploads(three, tmp_path):
    from bot.library import Library, Upload

    uploads = tmp_path / "uploads"
    own = Settings(index_dir=three, api_key=None, rate_limit=0, uploads="on", uploads_dir=uploads)
    Library(own.model_copy(update={"collection": "ferries"})).add([Upload("harbour.txt", HARBOUR)])
    assert (uploads / "harbour.txt").is_file()
    served = ServedBot(EventBot(own), own, watch=False)
    with running(create_app(served)) as url, httpx.Client(base_url=url, timeout=300) as client:
        ferry = client.post("/api/ask", json={"question": HARBOUR_QUESTION, "collection": "ferries"}).json()
        assert "Osprey" in ferry["answer"], ferry
        assert client.delete("/api/collections/eventbot").status_code == 409  # the server's own
        assert client.delete("/api/collections/nothing").status_code == 404
        left = client.delete("/api/collections/ferries")
        assert left.status_code == 200 and [c["name"] for c in left.json()["collections"]] == ["eventbot", "regatta"]
        assert not (uploads / "harbour.txt").exists()
        gone = client.post("/api/ask", json={"question": HARBOUR_QUESTION, "collection": "ferries"})
        assert gone.status_code == 404
        assert [c["name"] for c in client.get("/api/collections").json()["collections"]] == ["eventbot", "regatta"]
    served.close()
    closed = ServedBot(EventBot(own.model_copy(update={"uploads": "off"})), watch=False)
    with running(create_app(closed)) as url:
        refused = httpx.delete(f"{url}/api/collections/regatta")
        assert refused.status_code == 403 and "EVENTBOT_UPLOADS" in refused.json()["detail"]
    closed.close()


HARBOUR = b"The harbour master said the Osprey was the first boat to dock after the storm.\n"
HARBOUR_QUESTION = "Which boat docked first after the storm?"
