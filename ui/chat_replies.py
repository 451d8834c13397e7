"""How the chat shows a finished reply: its text with each `[n]` marker a link to the cited passage, a muted note
when it abstained, and a collapsed Sources panel; and a kept conversation shown again the same way."""

import re

from bot.types import Answer, place_of
from ui.chat_common import Replies, as_text
from ui.reply_note import note_of

SOURCE_LINK = re.compile(r"\\\[(\d+)\\\]")  # a `[n]` marker as as_text shows it: \[n\]


def linked(shown: str, reply: int) -> str:
    """`shown` (as_text's) with each `[n]` marker a link that opens the cited passage (the page's script)."""
    return SOURCE_LINK.sub(lambda m: f"[\\[{m[1]}\\]](#source-{reply}-{m[1]})", shown)


def reply_content(answer: Answer, reply: int) -> str:
    """A finished reply as the chat shows it: its text with linked markers, after a muted note when abstained."""
    text = linked(as_text(answer.answer), reply)
    note = note_of(answer)
    return f'<span class="reply-note">{as_text(note)}</span>\n\n{text}' if note else text


def sources_message(answer: Answer, reply: int) -> dict:
    """A collapsed panel under the answer: per citation its source (a link to the passage), score and quote."""
    scores = {c.chunk_id: c.score for c in answer.contexts}
    parts = []
    for c in answer.citations:
        score = scores.get(c.chunk_id)
        meta = f" · score {score:.2f}" if score is not None else ""
        quote = as_text(c.quote).replace("\n", "\n> ")
        parts.append(
            f"[**\\[{c.n}\\]** {as_text(c.source + place_of(c.page, c.section))}](#source-{reply}-{c.n}){as_text(meta)}\n> {quote}"
        )
    count = len(answer.citations)
    return {
        "role": "assistant",
        "content": "\n\n".join(parts),
        "metadata": {"title": f"Sources ({count})", "status": "done"},
    }


def reply_messages(answer: Answer, reply: int) -> list[dict]:
    """The messages of a finished reply at index `reply`: its text, then its Sources panel when it cites."""
    shown = [{"role": "assistant", "content": reply_content(answer, reply)}]
    if answer.citations:  # an unsure reply cites the sentence it quotes
        shown.append(sources_message(answer, reply))
    return shown


def conversation_messages(answers: list[Answer]) -> tuple[list[dict], Replies]:
    """A kept conversation as the chat shows it: each question and its reply, and the answers by reply index."""
    messages: list[dict] = []
    replies: Replies = {}
    for answer in answers:
        messages.append({"role": "user", "content": as_text(answer.question)})
        replies[len(messages)] = answer
        messages.extend(reply_messages(answer, len(messages)))
    return messages, replies
