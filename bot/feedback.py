"""Feedback on the bot's replies (a thumb up or down, maybe a comment), kept in one SQLite file so that a team can
turn what users disliked into an evaluation set: `eventbot feedback export`, label it, then `eventbot eval`.

The file is a `bot.sqlite_file.SqliteFile`: each write is on disk when the call returns. Each row also says
what answered (the code's commit, the reader's weights, the backend), since a reply is judged against that.
"""

import functools
import hashlib
import json
import logging
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import FeedbackError, FeedbackNotFoundError, FeedbackStoreError, FeedbackUnavailableError
from bot.settings import Settings
from bot.sqlite_file import SqliteFile
from bot.types import Citation, Turn

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 20_000
MAX_CITATIONS = 50

SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: an exported "feedback-<id>" names one reply for good
    created_at TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    comment TEXT,
    history TEXT NOT NULL,
    citations TEXT NOT NULL,
    "commit" TEXT,
    reader TEXT,
    backend TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS feedback_by_rating ON feedback (rating, id);
"""
COLUMNS = (
    "created_at",
    "question",
    "answer",
    "rating",
    "comment",
    "history",
    "citations",
    "commit",
    "reader",
    "backend",
)

Rating = Literal["up", "down"]

EXAMPLE = {
    "question": "Who won the gold medal?",
    "answer": "Kaori Sakamoto won the silver medal [1].",
    "rating": "down",
    "comment": "It asked about gold.",
    "citations": [{"n": 1, "source": "event-article.txt", "chunk_id": "…", "quote": "…"}],
}
STORED_EXAMPLE = EXAMPLE | {
    "history": [],
    "id": 7,
    "created_at": "2026-12-03T14:05:09.120+00:00",
    "commit": "54bab72",
    "reader": "3f1c0d9a2b7e",
    "backend": "extractive",
}


class FeedbackTurn(Turn):
    """A turn of the history, as `POST /api/ask` takes it: an unknown field is an error (a Turn is taken too)."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)


class FeedbackCitation(Citation):
    """A citation of the reply, as the answer object has it: an unknown field is an error (a Citation is taken too)."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)


class FeedbackIn(BaseModel):
    """Feedback on one reply, as the chat and `POST /api/feedback` send it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [EXAMPLE]})

    question: str = Field(description="The question asked, up to `EVENTBOT_MAX_QUESTION_CHARS` characters")
    answer: str = Field(max_length=MAX_ANSWER_CHARS, description="The reply rated, as it was shown")
    rating: Rating
    comment: str | None = Field(None, description="What was wrong (or right), up to `EVENTBOT_MAX_COMMENT_CHARS`")
    history: list[FeedbackTurn] = Field(
        default_factory=list,
        description="The conversation before the question, oldest first (up to `EVENTBOT_MAX_HISTORY_MESSAGES`)",
    )
    citations: list[FeedbackCitation] = Field(
        default_factory=list, max_length=MAX_CITATIONS, description="The reply's citations, as the answer had them"
    )


class Feedback(FeedbackIn):
    """Kept feedback: what was sent, when, and what answered (so that a reply is judged against its own code)."""

    model_config = ConfigDict(json_schema_extra={"examples": [STORED_EXAMPLE]})

    id: int
    created_at: str = Field(description="When it was kept (UTC, ISO 8601)")
    commit: str | None = Field(description="The git commit of the code that answered; null when unknown")
    reader: str | None = Field(description="The first 12 hex digits of the sha256 of the reader's weights")
    backend: str = Field(description="`extractive`, or the LLM backend (`EVENTBOT_LLM`)")


# ---------------------------------------------------------------------------------------------- checks


def check_feedback(settings: Settings, data: FeedbackIn | dict[str, Any]) -> FeedbackIn:
    """`data` within the limits the settings set (question and history as `POST /api/ask` takes them, the
    comment), the question stripped and a blank comment None; a one-line InputError (422) otherwise."""
    from bot.questions import check_question, is_blank  # loads spaCy (bot.types): the server has it already

    try:
        item = data if isinstance(data, FeedbackIn) else FeedbackIn.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise FeedbackError(f"{where + ': ' if where else ''}{problem['msg']}") from None
    question = check_question(settings, item.question, item.history).text
    if is_blank(item.answer):
        raise FeedbackError("the answer is empty")
    item = item.model_copy(update={"question": question, "comment": check_comment(settings, item.comment)})
    try:
        json.dumps(item.model_dump(), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise FeedbackError("the feedback is not valid Unicode (it holds a lone surrogate)") from None
    return item


def check_comment(settings: Settings, comment: str | None) -> str | None:
    """The comment stripped, None when blank; FeedbackError when over `max_comment_chars`."""
    comment = (comment or "").strip()
    if len(comment) > settings.max_comment_chars:
        raise FeedbackError(f"the comment is {len(comment)} characters long; the limit is {settings.max_comment_chars}")
    return comment or None


def check_rating(rating: str) -> Rating:
    if rating not in ("up", "down"):
        raise FeedbackError(f'the rating is {rating!r}; it must be "up" or "down"')
    return rating  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------- what answered


@functools.cache
def code_commit() -> str | None:
    """The git commit of this code (`git rev-parse --short HEAD`), once per process; None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        log.info("feedback: no git commit of the code to record")
        return None
    return done.stdout.strip() or None


@functools.cache
def reader_digest(weights: Path) -> str | None:
    """The first 12 hex digits of the sha256 of the reader's weights, once per process; None when missing."""
    try:
        with weights.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()[:12]
    except OSError:
        return None


def backend_of(settings: Settings) -> str:
    return "extractive" if settings.llm == "none" else settings.llm


# ---------------------------------------------------------------------------------------------- the store


class FeedbackStore(SqliteFile):
    """The feedback kept in one SQLite file (`EVENTBOT_FEEDBACK_PATH`), created with its table when absent.
    `settings` gives the limits and what answered (default: the environment's)."""

    WHAT, SETTING, SCHEMA, SCHEMA_VERSION = "feedback", "EVENTBOT_FEEDBACK_PATH", SCHEMA, 1
    setup_error, unavailable_error = FeedbackStoreError, FeedbackUnavailableError

    def __init__(self, path: Path, settings: Settings | None = None):
        self.settings = settings or Settings()
        super().__init__(path)

    def add(self, data: FeedbackIn | dict[str, Any]) -> Feedback:
        """Keep feedback on a reply (checked by `check_feedback`); the kept item, with its id."""
        item = check_feedback(self.settings, data)
        row = {
            "created_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "question": item.question,
            "answer": item.answer,
            "rating": item.rating,
            "comment": item.comment,
            "history": json.dumps([t.model_dump() for t in item.history], ensure_ascii=False),
            "citations": json.dumps([c.model_dump() for c in item.citations], ensure_ascii=False),
            "commit": code_commit(),
            "reader": reader_digest(self.settings.reader_weights),
            "backend": backend_of(self.settings),
        }
        names, values = ", ".join(f'"{c}"' for c in COLUMNS), ", ".join(f":{c}" for c in COLUMNS)
        with self._connection() as conn:
            [stored] = conn.execute(f"INSERT INTO feedback ({names}) VALUES ({values}) RETURNING *", row).fetchall()
        log.info("feedback %d kept: %s", stored["id"], item.rating)
        return _feedback(stored)

    def rate(self, id: int, rating: Rating, comment: str | None = None) -> Feedback:
        """Change the rating of kept feedback, and its comment unless `comment` is None ("" clears it); the item
        after. FeedbackNotFoundError when no feedback has that id."""
        rating = check_rating(rating)
        with self._connection() as conn:
            if comment is None:
                rows = conn.execute("UPDATE feedback SET rating = ? WHERE id = ? RETURNING *", (rating, id)).fetchall()
            else:
                comment = check_comment(self.settings, comment)
                rows = conn.execute(
                    "UPDATE feedback SET rating = ?, comment = ? WHERE id = ? RETURNING *", (rating, comment, id)
                ).fetchall()
        if not rows:
            raise FeedbackNotFoundError(f"no feedback has the id {id}")
        return _feedback(rows[0])

    def remove(self, id: int) -> bool:
        """Forget feedback (a thumb clicked off); False when there was none with that id."""
        with self._connection() as conn:
            return conn.execute("DELETE FROM feedback WHERE id = ?", (id,)).rowcount > 0

    def page(self, page: int = 1, per_page: int = 50, rating: Rating | None = None) -> tuple[list[Feedback], int]:
        """One page of kept feedback, newest first, and how many there are in all (of that rating, when given)."""
        if page < 1 or per_page < 1:
            raise FeedbackError(f"page {page} of {per_page} a page: both must be at least 1")
        where, args = ("WHERE rating = ?", [check_rating(rating)]) if rating else ("", [])
        with self._connection() as conn:
            conn.execute("BEGIN")  # the count and the page from one snapshot
            total = conn.execute(f"SELECT count(*) FROM feedback {where}", args).fetchone()[0]
            rows = conn.execute(
                f"SELECT * FROM feedback {where} ORDER BY id DESC LIMIT ? OFFSET ?",
                [*args, per_page, (page - 1) * per_page],
            ).fetchall()
            conn.execute("COMMIT")
        return [_feedback(r) for r in rows], total

    def all(self, rating: Rating | None = None) -> list[Feedback]:
        """All kept feedback (of that rating, when given), oldest first: what `eventbot feedback export` writes."""
        where, args = ("WHERE rating = ?", [check_rating(rating)]) if rating else ("", [])
        with self._connection() as conn:
            rows = conn.execute(f"SELECT * FROM feedback {where} ORDER BY id", args).fetchall()
        return [_feedback(r) for r in rows]


def _feedback(row: sqlite3.Row) -> Feedback:
    fields = dict(row) | {"history": json.loads(row["history"]), "citations": json.loads(row["citations"])}
    return Feedback.model_validate(fields)


# ---------------------------------------------------------------------------------------------- export


def export_lines(settings: Settings, rating: str | None = None) -> list[str]:
    """The kept feedback (of that rating), oldest first, as JSON lines of `eventbot eval`'s dataset format; none
    when no feedback file exists yet."""
    rating = check_rating(rating) if rating is not None else None
    if not settings.feedback_path.exists():
        return []
    items = FeedbackStore(settings.feedback_path, settings).all(rating)
    return [json.dumps(as_eval_item(item), ensure_ascii=False) + "\n" for item in items]


def as_eval_item(item: Feedback) -> dict[str, Any]:
    """Kept feedback as an item of `eventbot eval`'s dataset format (bot.eval.items), not labelled yet: whoever
    labels it sets `answerable` (and `answers`); the other keys say what the bot replied and what the user
    thought of it (the loader ignores them)."""
    return {
        "id": f"feedback-{item.id}",
        "question": item.question,
        "answers": [],
        "answerable": None,
        "evidence": "",
        "kind": "feedback",
        "history": [t.model_dump() for t in item.history],
        "given_answer": item.answer,
        "rating": item.rating,
        "comment": item.comment,
        "given_at": item.created_at,
    }
