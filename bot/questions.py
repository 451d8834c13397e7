"""What a question (and its history) must be before it is answered: checked once, where it comes in (the CLI, the
API, the chat), into a `CheckedQuestion`; QuestionError with a one-line reason otherwise."""

import unicodedata

from bot.errors import QuestionError
from bot.settings import Settings
from bot.types import CheckedQuestion, Turn

HISTORY_MESSAGE_FACTOR = 4  # a history message may be this many times as long as a question


def is_blank(text: str) -> bool:
    """True when `text` shows nothing: whitespace, control characters ("\\u0000\\u0001") and invisible format
    characters (a zero-width space) only. Such a question is empty, not one to retrieve for."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in text)


def check_question(settings: Settings, question: str, history: list[Turn] | None = None) -> CheckedQuestion:
    """The question, stripped, with its history; QuestionError when it is empty (or blank) or too long, or the
    history too long."""
    question = (question or "").strip()
    if is_blank(question):
        raise QuestionError("the question is empty")
    check_unicode(question, "the question")
    if len(question) > settings.max_question_chars:
        raise QuestionError(
            f"the question is {len(question)} characters long; the limit is {settings.max_question_chars}"
        )
    if history and len(history) > settings.max_history_messages:
        raise QuestionError(f"the history has {len(history)} messages; the limit is {settings.max_history_messages}")
    limit = HISTORY_MESSAGE_FACTOR * settings.max_question_chars  # answers run longer than questions
    for i, turn in enumerate(history or [], 1):
        if len(turn.content) > limit:
            raise QuestionError(f"history message {i} is {len(turn.content)} characters long; the limit is {limit}")
        check_unicode(turn.content, f"history message {i}")
    return CheckedQuestion(question, tuple(history or ()))


def check_unicode(text: str, what: str) -> None:
    """QuestionError when `text` holds a lone surrogate (JSON can carry "\\ud800"; no UTF-8 can)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QuestionError(f"{what} is not valid Unicode (a lone surrogate at character {exc.start + 1})") from None
