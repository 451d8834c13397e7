"""The chat's conversations, kept in one SQLite file (`EVENTBOT_CONVERSATIONS_PATH`) so that a page reload or a
server restart loses none: each is its answers in order (the answer objects, with their citations), the collection
it was about, and whose it is.

Whose: where the server has an API key, everyone who logs in with it (the chat's login, or `Authorization: Bearer`
on `/api/conversations`) shares one owner, made from the key; without a key each browser is its own owner, by a
random token the chat keeps in the browser's local storage. Nothing of one owner's is shown to another.
"""

import hashlib
import json
import logging
import secrets
import sqlite3
import string
import uuid
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from bot.errors import ConversationNotFoundError, ConversationStoreError, ConversationUnavailableError
from bot.settings import Settings
from bot.sqlite_file import SqliteFile
from bot.types import Answer

log = logging.getLogger(__name__)

TITLE_CHARS = 80  # a conversation is listed by its first question, cut to this
TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "-_")  # what `new_browser_token` makes: 43 of them

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    collection TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    turns INTEGER NOT NULL,
    answers TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_by_owner ON conversations (owner, updated_at);
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ConversationSummary(BaseModel):
    """A kept conversation as the list shows it."""

    id: str
    title: str = Field(description="Its first question, cut to 80 characters")
    collection: str = Field(description="The collection its questions read")
    created_at: str = Field(description="When it began (UTC, ISO 8601)")
    updated_at: str = Field(description="When its last answer came (UTC, ISO 8601)")
    turns: int = Field(description="How many questions it holds")


class Conversation(ConversationSummary):
    """A kept conversation whole: each question's answer object, oldest first (`answers[i].question` is the
    question asked)."""

    answers: list[Answer]


def owner_of(settings: Settings, browser: str | None = None) -> str | None:
    """Whose conversations a caller may see: the API key's (all who log in with it) where the server has one,
    else the browser's token; None when neither (the caller may see none)."""
    if settings.api_key:
        return "key:" + hashlib.sha256(settings.api_key.encode()).hexdigest()[:32]
    if isinstance(browser, str) and 32 <= len(browser) <= 64 and set(browser) <= TOKEN_CHARS:
        return "browser:" + browser
    return None


def new_browser_token() -> str:
    return secrets.token_urlsafe(32)


def title_of(question: str) -> str:
    title = " ".join(question.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


class ConversationStore(SqliteFile):
    """The kept conversations; every call names the owner, and sees only that owner's."""

    WHAT, SETTING, SCHEMA, SCHEMA_VERSION = "conversations", "EVENTBOT_CONVERSATIONS_PATH", SCHEMA, 1
    setup_error, unavailable_error = ConversationStoreError, ConversationUnavailableError

    def browser_secret(self) -> str:
        """The key the chat encrypts a browser's token with in its local storage: made once and kept here, so that
        a restarted server (and each process of `--workers N`) reads the tokens the browsers hold."""
        with self._connection() as conn:
            conn.execute("INSERT OR IGNORE INTO secrets VALUES ('browser', ?)", (secrets.token_urlsafe(32),))
            return conn.execute("SELECT value FROM secrets WHERE name = 'browser'").fetchone()[0]

    def keep(self, owner: str, id: str | None, collection: str, answers: list[Answer]) -> ConversationSummary:
        """Keep the conversation `id` as `answers` (a new one when `id` is None, or not this owner's); its summary."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        stored = json.dumps([a.model_dump(mode="json") for a in answers], ensure_ascii=False)
        title = title_of(answers[0].question) if answers else "(no questions)"
        with self._connection() as conn:
            updated = conn.execute(
                "UPDATE conversations SET collection = ?, title = ?, updated_at = ?, turns = ?, answers = ? "
                "WHERE id = ? AND owner = ? RETURNING *",
                (collection, title, now, len(answers), stored, id, owner),
            ).fetchall()
            if not updated:
                id = uuid.uuid4().hex
                updated = conn.execute(
                    "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
                    (id, owner, collection, title, now, now, len(answers), stored),
                ).fetchall()
        log.info("conversation %s kept: %d answers", id, len(answers))
        return _summary(updated[0])

    def list(self, owner: str) -> list[ConversationSummary]:
        """The owner's conversations, the latest answered first."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT * FROM conversations WHERE owner = ? ORDER BY updated_at DESC, rowid DESC", (owner,)
            ).fetchall()
        return [_summary(r) for r in rows]

    def get(self, owner: str, id: str) -> Conversation:
        """The owner's conversation `id`; ConversationNotFoundError when the owner has none of that id."""
        with self._connection() as conn:
            row = conn.execute("SELECT * FROM conversations WHERE id = ? AND owner = ?", (id, owner)).fetchone()
        if row is None:
            raise ConversationNotFoundError(f"no conversation has the id {id}")
        answers = [Answer.model_validate(a) for a in json.loads(row["answers"])]
        return Conversation(**_summary(row).model_dump(), answers=answers)

    def remove(self, owner: str, id: str) -> None:
        """Forget the owner's conversation `id`; ConversationNotFoundError when there is none."""
        with self._connection() as conn:
            if conn.execute("DELETE FROM conversations WHERE id = ? AND owner = ?", (id, owner)).rowcount == 0:
                raise ConversationNotFoundError(f"no conversation has the id {id}")
        log.info("conversation %s removed", id)


def _summary(row: sqlite3.Row) -> ConversationSummary:
    return ConversationSummary(**{k: row[k] for k in ConversationSummary.model_fields})
