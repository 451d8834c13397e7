"""What the chat's parts share: text shown as written (escaped for Gradio's Markdown, and back), the options of its
private events, and how a part says what Clear resets."""

import html
import re
from typing import Any

import gradio as gr

from bot.answer.condense import BotTurn
from bot.types import Answer, Turn

Replies = dict[int, Answer]  # the session's answers, by the index of their reply among the messages

# Every ASCII punctuation mark can be backslash-escaped in Markdown (CommonMark); escaping them all keeps a
# document's `![x](http://…)`, `*stars*` or `[links]` from being rendered, and `$` from being read as LaTeX.
MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")
ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~$:])")


def as_text(text: str) -> str:
    """Text that the chat (Markdown with HTML) shows verbatim: HTML escaped, then Markdown escaped. The browser
    fetches nothing a document or question names, and `<script>` shows as written."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(text, quote=False))


def from_text(shown: str) -> str:
    """The text behind `as_text`: what the user typed, what the bot answered (for the history)."""
    return html.unescape(ESCAPED.sub(r"\1", shown))


LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str every surrogate is a lone one


def displayable(text: str) -> str:
    """`text` with each lone surrogate (invalid Unicode, which JSON can carry) shown as U+FFFD."""
    return LONE_SURROGATE.sub("\ufffd", text)


def message_text(content: Any) -> str:
    """The text of a chat message, whatever shape Gradio gives it (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content.get("text") or ""
    if isinstance(content, list | tuple):
        return "".join(message_text(part) for part in content)
    return ""


def to_turns(messages: list[dict], limit: int, answers: Replies | None = None) -> list[Turn]:
    """The conversation as history for the bot: user and assistant text, without the Sources panels (a reply's
    text is its answer's, when the session kept it: links and notes are the page's, not the bot's)."""
    answers = answers or {}
    turns = []
    for index, message in enumerate(messages):
        if (message.get("metadata") or {}).get("title") or message.get("role") not in ("user", "assistant"):
            continue
        if index in answers:  # what the bot said, as data
            turns.append(BotTurn.of(answers[index].answer.strip(), answers[index].abstained))
            continue
        text = from_text(message_text(message.get("content")))
        if text.strip():
            turns.append(Turn(role=message["role"], content=text.strip()))
    return turns[-limit:] if limit > 0 else []


PRIVATE = {"api_visibility": "private"}  # the chat's events are not part of Gradio's API


Reset = tuple[gr.components.Component, Any]  # a component and its value once the conversation is cleared


def examples(bot) -> list[dict] | None:
    """The chat's example questions: those the bot serving now answers (None: no examples shown)."""
    return [{"text": q} for q in bot.example_questions()] or None
