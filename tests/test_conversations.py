"""The chat's kept conversations (issue 60): a real SQLite file that outlives its store, seen only by its owner,
and reached over HTTP (a real uvicorn) only with the server's API key, which the chat's login shares."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bot.conversations import ConversationStore, new_browser_token, owner_of, title_of
from bot.errors import ConversationNotFoundError, ConversationStoreError
from bot.serving import ServedBot
from bot.types import Turn
from tests.test_api import API_KEY, running
from ui.server import build_api

KEY = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture(scope="module")
def answers(bot):
    """Two real answers of the bot, with their citations: a question and its follow-up."""
    first = bot.ask("Who won the silver medal?")
    return [
        first,
        bot.ask(
            "How old is she?",
            history=[Turn(role="user", content=first.question), Turn(role="assistant", content=first.answer)],
        ),
    ]


@pytest.fixture
def path(tmp_path) -> Path:
    return tmp_path / "kept" / "conversations.sqlite3"


def test_kept_whole_across_stores_and_seen_only_by_its_owner(path, answers, settings):
    mine, theirs = (owner_of(settings.model_copy(update={"api_key": None}), new_browser_token()) for _ in range(2))
    store = ConversationStore(path)
    started = store.keep(mine, None, "eventbot", answers[:1])
    assert started.turns == 1 and started.title == "Who won the silver medal?"
    kept = store.keep(mine, started.id, "eventbot", answers)  # the follow-up answered: the same conversation
    assert kept.id == started.id and kept.turns == 2 and kept.created_at == started.created_at

    reopened = ConversationStore(path).get(mine, kept.id)  # a new store, as after a restart
    assert reopened.answers == answers and reopened.collection == "eventbot"
    assert [c.quote for c in reopened.answers[0].citations] == [c.quote for c in answers[0].citations]

    assert store.list(theirs) == []
    with pytest.raises(ConversationNotFoundError):
        store.get(theirs, kept.id)
    with pytest.raises(ConversationNotFoundError):
        store.remove(theirs, kept.id)
    other = store.keep(theirs, kept.id, "eventbot", answers[:1])  # another owner's id: a new conversation
    assert other.id != kept.id and store.get(mine, kept.id).turns == 2

    store.remove(mine, kept.id)
    assert store.list(mine) == [] and [c.id for c in store.list(theirs)] == [other.id]


def test_latest_answered_first(path, answers, settings):
    owner = owner_of(settings.model_copy(update={"api_key": None}), new_browser_token())
    store = ConversationStore(path)
    older = store.keep(owner, None, "eventbot", answers[:1])
    newer = store.keep(owner, None, "regatta", answers[1:])
    assert [c.id for c in store.list(owner)] == [newer.id, older.id]
    store.keep(owner, older.id, "eventbot", answers)
    assert [(c.id, c.collection) for c in store.list(owner)] == [(older.id, "eventbot"), (newer.id, "regatta")]


def test_owners(settings):
    no_key = settings.model_copy(update={"api_key": None})
    token = new_browser_token()
    assert owner_of(no_key, token) == "browser:" + token
    assert owner_of(no_key, None) is None and owner_of(no_key, "not a token") is None
    keyed = settings.model_copy(update={"api_key": API_KEY})
    assert owner_of(keyed, token) == owner_of(keyed, None) != owner_of(keyed.model_copy(update={"api_key": "k2"}))
    assert API_KEY not in owner_of(keyed)  # the key itself is not stored


def test_titles():
    assert title_of("  Who won\nsilver? ") == "Who won silver?"
    long = title_of("why " * 60)
    assert len(long) == 80 and long.endswith("…")


def test_a_file_that_is_not_a_database_or_newer_is_refused(path):
    path.parent.mkdir(parents=True)
    path.write_text("not a database")
    with pytest.raises(ConversationStoreError, match="cannot use .* as the conversations file"):
        ConversationStore(path)
    path.unlink()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 9")
    with pytest.raises(ConversationStoreError, match="schema version 9, newer .* EVENTBOT_CONVERSATIONS_PATH"):
        ConversationStore(path)


# ---------------------------------------------------------------------------------------------- over HTTP


@contextmanager
def serving(bot, settings, path: Path, **update) -> Iterator[httpx.Client]:
    """The API over conversations file `path` in a real uvicorn; a client of it."""
    served = ServedBot(bot, settings.model_copy(update={"conversations_path": path} | update), warm=False, watch=False)
    try:
        with running(build_api(served)) as url, httpx.Client(base_url=url, timeout=60) as client:
            yield client
    finally:
        served.close()


def test_the_api_keys_conversations_listed_read_and_deleted(bot, settings, path, answers):
    keyed = settings.model_copy(update={"api_key": API_KEY})
    kept = ConversationStore(path).keep(owner_of(keyed), None, "eventbot", answers)  # as the chat keeps it
    a_browser = owner_of(settings.model_copy(update={"api_key": None}), new_browser_token())
    browsers = ConversationStore(path).keep(a_browser, None, "eventbot", answers)
    with serving(bot, settings, path, api_key=API_KEY) as client:
        assert client.get("/api/conversations").status_code == 401
        listed = client.get("/api/conversations", headers=KEY).json()["conversations"]
        assert [c["id"] for c in listed] == [kept.id] and listed[0]["turns"] == 2
        whole = client.get(f"/api/conversations/{kept.id}", headers=KEY).json()
        assert [a["question"] for a in whole["answers"]] == ["Who won the silver medal?", "How old is she?"]
        assert whole["answers"][0]["citations"][0]["quote"] == answers[0].citations[0].quote
        assert client.get(f"/api/conversations/{browsers.id}", headers=KEY).status_code == 404  # not the key's

        assert client.delete(f"/api/conversations/{kept.id}", headers=KEY).json() == {"conversations": []}
        gone = client.delete(f"/api/conversations/{kept.id}", headers=KEY)
        assert gone.status_code == 404 and gone.json()["detail"] == f"no conversation has the id {kept.id}"
        assert client.put("/api/conversations", headers=KEY).status_code == 405
    assert [c.id for c in ConversationStore(path).list(a_browser)] == [browsers.id]  # the browser's is untouched


def test_without_a_key_the_conversations_are_each_browsers_own(bot, settings, path):
    with serving(bot, settings, path, api_key=None) as client:
        refused = client.get("/api/conversations")
        assert refused.status_code == 403 and "EVENTBOT_API_KEY" in refused.json()["detail"]
        assert "\n" not in refused.json()["detail"]


def test_the_browser_secret_is_made_once_and_kept(path):
    secret = ConversationStore(path).browser_secret()
    assert len(secret) >= 32 and ConversationStore(path).browser_secret() == secret
