"""The Gradio chat at `/`: streamed answers with `[n]` markers and a collapsible Sources panel per answer.

The chat calls the bot in-process (the same `ServedBot` as the API), passing the conversation so far as
history so follow-ups ("How old is she?") are resolved by the bot. Each answer object is kept in the session's
state by the index of its reply, for what the page does with a reply afterwards:
- a thumb up or down (and a comment) is kept by `bot.feedback`, as `POST /api/feedback` keeps it;
- a `[n]` marker (or a line of the Sources panel) opens the cited passage highlighted in its document
  (`bot.pages.passage_of`, as `GET /api/documents/{name}/passage`): a click on the link is caught by the page's
  script (HEAD), which hands the link's reference to a hidden button;
- an abstained reply (unsure, or not in the documents) is shown muted, with a note saying why.
"""

import html
import logging
import os
import re
import time
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import gradio as gr  # noqa: E402

from bot.errors import (  # noqa: E402
    DocumentConflictError,
    DocumentLoadError,
    DocumentNotFoundError,
    InputError,
    PassageNotFoundError,
    QuestionError,
    StoreUnavailableError,
    UploadsOffError,
)
from bot.feedback import FeedbackIn, FeedbackStore  # noqa: E402
from bot.library import Library, Upload, documents  # noqa: E402
from bot.pages import passage_of  # noqa: E402
from bot.served import ServedBot  # noqa: E402
from bot.types import Answer, Turn  # noqa: E402
from ui.openai_api import word_pieces  # noqa: E402
from ui.reply_note import note_of  # noqa: E402

log = logging.getLogger(__name__)

STREAM_DELAY_S = 0.02  # between streamed words: answers are computed whole, then typed out

THEME = gr.themes.Soft(
    primary_hue="indigo",
    neutral_hue="slate",
    font=[gr.themes.LocalFont("IBM Plex Sans", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"],
    font_mono=[gr.themes.LocalFont("IBM Plex Mono", weights=(400, 700)), "ui-monospace", "monospace"],
)

# Gradio scopes custom CSS to its app: rules inside @media only reach elements inside the app's content, so the
# outer padding shrinks with clamp() instead of a media query.
CSS = """
.gradio-container { max-width: 860px !important; margin: 0 auto !important; }
.main.app { padding: clamp(6px, 2vw, 16px) clamp(8px, 3vw, 32px) !important; }
#header { padding: 0 4px; }
#header h1 { font-size: clamp(1.2rem, 4.6vw, 1.45rem); margin: 0.15em 0 0.1em; }
#header p, #header p span { color: var(--body-text-color-subdued); }
#header p { margin: 0.2em 0; font-size: clamp(0.87rem, 3.4vw, 0.95rem); }
#chat { min-height: 260px; }
#chat blockquote { margin: 0.2em 0 0.7em; padding-left: 0.7em; border-left: 3px solid var(--color-accent-soft);
                   font-style: italic; }
#chat button.example { border: 1px solid var(--border-color-primary); border-radius: var(--radius-xl);
                       background: var(--background-fill-secondary); }
#chat button.example:hover { border-color: var(--color-accent); }
#chat .examples { display: grid !important; grid-template-columns: repeat(2, minmax(0, 1fr)); max-width: 620px;
                  margin: 0 auto; gap: 10px; }
#chat .top-panel { display: none !important; }  /* Gradio's own trash icon: the Clear button does that */
#controls { align-items: center; gap: 8px; }
#controls .clear { flex-grow: 0 !important; min-width: max-content !important; }
#documents table { width: 100%; font-size: 0.9rem; }
#documents td, #documents th { padding: 2px 6px; text-align: left; overflow-wrap: anywhere; }
#chat a.source-link, #chat a[href^="#source-"] { text-decoration: none; font-weight: 600; }
#chat .reply-note { display: block; font-size: 0.82em; color: var(--body-text-color-subdued); margin-bottom: 0.3em; }
#chat .message:has(.reply-note) { opacity: 0.78; font-style: italic; }
#feedback-comment { align-items: center; gap: 8px; }
#passage { position: fixed; z-index: 1000; top: 6vh; left: 50%; transform: translateX(-50%);
           width: min(760px, calc(100vw - 16px)); max-height: 84vh; overflow: auto;
           background: var(--background-fill-primary); border: 1px solid var(--border-color-primary);
           border-radius: var(--radius-lg); box-shadow: 0 12px 48px rgba(0, 0, 0, 0.3); padding: 12px 16px; }
#passage .passage-head { font-size: 0.9rem; color: var(--body-text-color-subdued); margin-bottom: 0.5em; }
#passage .passage-text { white-space: pre-wrap; line-height: 1.55; }
#passage mark { background: #fde68a; color: #1f2937; padding: 1px 2px; border-radius: 3px; }
@media (max-width: 640px) {
  #header .wide-only { display: none; }
  #chat .examples { grid-template-columns: minmax(0, 1fr); }
}
"""


# The page's script: a click on a citation link (`#source-<reply>-<n>`, in a reply or its Sources panel) opens the
# passage view instead of following the link, by handing the reference to the hidden `#source-open` button; Escape
# closes the view.
HEAD = """<meta name="viewport" content="width=device-width, initial-scale=1">
<script>
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest('a[href*="#source-"]');
  if (!link) return;
  event.preventDefault();
  event.stopPropagation();
  window.eventbotSource = link.getAttribute("href").split("#source-")[1];
  document.querySelector("#source-open")?.click();
}, true);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") document.querySelector("#passage-close")?.click();
});
</script>"""
SOURCE_LINK = re.compile(r"\\\[(\d+)\\\]")  # a `[n]` marker as as_text shows it: \[n\]


def examples(bot: ServedBot) -> list[dict] | None:
    """The chat's example questions: those the bot serving now answers (None: no examples shown)."""
    return [{"text": q} for q in bot.example_questions()] or None


def header(bot: ServedBot) -> str:
    docs = bot.documents()
    if len(docs) == 1:
        source, title = docs[0]
        knows = f"one document: <em>{html.escape(title)}</em> (<code>{html.escape(source)}</code>)"
    else:
        shown = ", ".join(f"<code>{html.escape(source)}</code>" for source, _ in docs[:6])
        more = f" and {len(docs) - 6} more" if len(docs) > 6 else ""
        knows = f"{len(docs)} documents: {shown}{more}"
    return (
        "<h1>Ask about the event</h1>"
        f"<p>I answer <strong>only</strong> from {knows}. When {'it doesn' if len(docs) == 1 else 'they don'}'t "
        "say, I tell you so. "
        "<span class='wide-only'>Answers cite their passages as [1], [2]…: click one to read it in its "
        "document. A thumb up or down under a reply tells us how it did.</span></p>"
    )


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


def to_turns(messages: list[dict], limit: int, answers: dict[int, Answer] | None = None) -> list[Turn]:
    """The conversation as history for the bot: user and assistant text, without the Sources panels (a reply's
    text is its answer's, when the session kept it: links and notes are the page's, not the bot's)."""
    answers = answers or {}
    turns = []
    for index, message in enumerate(messages):
        if (message.get("metadata") or {}).get("title") or message.get("role") not in ("user", "assistant"):
            continue
        text = answers[index].answer if index in answers else from_text(message_text(message.get("content")))
        if text.strip():
            turns.append(Turn(role=message["role"], content=text.strip()))
    return turns[-limit:] if limit > 0 else []


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
        page = f", page {c.page}" if c.page else ""
        parts.append(f"[**\\[{c.n}\\]** {as_text(c.source + page)}](#source-{reply}-{c.n}){as_text(meta)}\n> {quote}")
    count = len(answer.citations)
    return {
        "role": "assistant",
        "content": "\n\n".join(parts),
        "metadata": {"title": f"Sources ({count})", "status": "done"},
    }


Replies = dict[int, Answer]  # the session's answers, by the index of their reply among the messages


def respond(
    bot: ServedBot, messages: list[dict], answers: Replies | None = None
) -> Iterator[tuple[list[dict], Replies]]:
    """Answer the last user message, streaming the text word by word, then add the Sources panel; yields the
    messages and the session's answers (this one added once it is complete)."""
    answers = dict(answers or {})
    if not messages or messages[-1].get("role") != "user":
        yield messages, answers
        return
    question = from_text(message_text(messages[-1]["content"]))
    # Invalid Unicode is refused by the bot, and shown as U+FFFD: Gradio could not even send it back as JSON
    messages = [
        {**m, "content": as_text(displayable(from_text(message_text(m.get("content")))))}
        if LONE_SURROGATE.search(message_text(m.get("content")))
        else m
        for m in messages
    ]
    history = to_turns(messages[:-1], bot.settings.max_history_messages, answers)
    try:
        answer = bot.ask(question, history)
    except QuestionError as exc:
        yield [*messages, {"role": "assistant", "content": as_text(f"I can't take that question: {exc}.")}], answers
        return
    except StoreUnavailableError as exc:
        log.warning("chat: %s", exc)
        failed = {"role": "assistant", "content": as_text(f"The documents can't be read right now ({exc}).")}
        yield [*messages, failed], answers
        return
    text = ""
    for piece in word_pieces(answer.answer):
        text += piece
        yield [*messages, {"role": "assistant", "content": as_text(text)}], answers
        time.sleep(STREAM_DELAY_S)
    reply = len(messages)
    shown = [{"role": "assistant", "content": reply_content(answer, reply)}]
    if answer.citations:  # an unsure reply cites the sentence it quotes
        shown.append(sources_message(answer, reply))
    yield [*messages, *shown], {**answers, reply: answer}


def passage_html(bot: ServedBot, ref: str, answers: Replies) -> str:
    """The passage view of citation `ref` ("<reply>-<n>"): its document's name and page, the paragraphs around the
    quote, the quote highlighted."""
    try:
        reply, n = (int(part) for part in ref.split("-"))
        citation = answers[reply].citations[n - 1]
    except (ValueError, KeyError, IndexError):
        return "<p>That source is not in this conversation any more.</p>"
    try:
        found = passage_of(bot.bot, citation.source, citation.chunk_id, citation.quote)
    except (DocumentNotFoundError, PassageNotFoundError, InputError):
        return (
            f"<p><code>{html.escape(citation.source)}</code> is no longer indexed as it was when this was answered.</p>"
        )
    except StoreUnavailableError as exc:
        return f"<p>The documents can't be read right now ({html.escape(str(exc))}).</p>"
    page = f", page {found.page}" if found.page else ""
    return (
        f'<div class="passage-head"><strong>[{n}]</strong> <code>{html.escape(found.source)}</code>{page}</div>'
        f'<div class="passage-text">{html.escape(found.before)}<mark>{html.escape(found.quote)}</mark>'
        f"{html.escape(found.after)}</div>"
    )


DOCUMENT_ERRORS = (DocumentLoadError, DocumentConflictError, DocumentNotFoundError, StoreUnavailableError)


def document_table(bot: ServedBot, library: Library) -> str:
    """The documents the bot answers from, as an HTML table (names escaped: they are the uploaders' words)."""
    rows = "".join(
        f"<tr><td><code>{html.escape(d['name'])}</code></td><td>{d['source']}</td><td>{d['chunks']}</td>"
        f"<td>{size(d['bytes'])}</td></tr>"
        for d in documents(bot.bot, library.settings)
    )
    return f"<table><tr><th>document</th><th>from</th><th>chunks</th><th>size</th></tr>{rows}</table>"


def size(n: int | None) -> str:
    return "" if n is None else f"{n / 1000:,.0f} KB"


def add_uploaded(bot: ServedBot, library: Library, paths: list[str] | None) -> str:
    """Index the files dropped on the upload control (all or none) and serve them; a one-line outcome."""
    if not paths:
        return ""
    uploads = []
    for path in paths:
        with open(path, "rb") as f:
            uploads.append(
                Upload(os.path.basename(path), f.read(library.settings.max_file_bytes + 1), os.path.getsize(path))
            )
    try:
        added = library.add(uploads, then=bot.reload)
    except DOCUMENT_ERRORS as exc:
        return f"Not added: {exc}"
    return "Added " + ", ".join(f"{a.name} ({a.chunks} chunks)" for a in added) + ": ask about it."


def remove_named(bot: ServedBot, library: Library, name: str | None) -> str:
    if not name:
        return ""
    try:
        library.remove(name, then=bot.reload)
    except DOCUMENT_ERRORS as exc:
        return f"Not removed: {exc}"
    return f"Removed {name}."


PRIVATE = {"api_visibility": "private"}  # the chat's events are not part of Gradio's API


def build_chat(bot: ServedBot, library: Library | None = None, feedback: FeedbackStore | None = None) -> gr.Blocks:
    """The chat UI as a Blocks app (mounted at `/` by ui.server). With a `library` that may be changed (an API
    key, whose login the chat then asks for, or `EVENTBOT_UPLOADS=on`) a Documents panel lists the documents and
    takes files to add (click or drop) and names to remove. With a `feedback` store each reply has a thumb up and
    down, kept there."""
    library = changeable(library)

    def page_load() -> tuple[str, gr.Chatbot]:
        """The served bot may have been swapped for a fresh index since start-up: each page shows the documents
        and example questions of the one serving now (a fresh bot's examples are worked out before the swap)."""
        return header(bot), gr.Chatbot(examples=examples(bot))

    with gr.Blocks(title="eventbot: ask about the event", fill_height=True, analytics_enabled=False) as demo:
        answers = gr.State({})  # the session's answer objects, by the index of their reply
        heading, chatbot, box, clear = chat_layout(bot, rated=feedback is not None)
        demo.load(page_load, None, [heading, chatbot], queue=False, **PRIVATE)
        if library is not None:
            documents_panel(demo, bot, library, heading)
        hide_passage = passage_view(bot, answers)
        forget_feedback = feedback_controls(bot, feedback, chatbot, answers) if feedback is not None else []
        wire_questions(bot, chatbot, box, clear, answers, resets=[hide_passage, *forget_feedback])
    demo.queue(default_concurrency_limit=8)
    return demo


def changeable(library: Library | None) -> Library | None:
    """`library` if its documents may be changed through the server, else None (the chat shows no panel)."""
    try:
        if library is not None:
            library.check_allowed()
    except UploadsOffError:
        return None
    return library


def chat_layout(bot: ServedBot, rated: bool = False) -> tuple[gr.HTML, gr.Chatbot, gr.Textbox, gr.Button]:
    """The header, the conversation, and below it the question box with its Clear button."""
    heading = gr.HTML(header(bot), elem_id="header", padding=False)
    chatbot = gr.Chatbot(
        elem_id="chat",
        show_label=False,
        scale=1,  # with fill_height: the chat takes the window's height and scrolls inside
        layout="bubble",
        placeholder="**Ask a question about the event**, or pick one below.",
        examples=examples(bot),
        feedback_options=("Like", "Dislike") if rated else None,
        buttons=["copy"],
        latex_delimiters=[],  # text is text: no `$…$` maths
        sanitize_html=True,
        autoscroll=True,
    )
    with gr.Row(elem_id="controls", equal_height=True):
        box = gr.Textbox(
            elem_id="question",
            show_label=False,
            placeholder="Ask about the event…",
            submit_btn=True,
            autofocus=True,
            lines=1,
            max_lines=5,
            scale=1,
            container=False,
        )
        clear = gr.Button(
            "Clear", elem_id="clear", elem_classes="clear", variant="secondary", size="md", min_width=0, scale=0
        )
    return heading, chatbot, box, clear


def documents_panel(demo: gr.Blocks, bot: ServedBot, library: Library, heading: gr.HTML) -> None:
    """The Documents panel: the table of documents, an upload control and a name to remove; each change
    refreshes the table, the header and the names."""
    with gr.Accordion("Documents", open=False, elem_id="documents"):
        table = gr.HTML(document_table(bot, library), padding=False)
        upload = gr.File(
            label="Add documents (.txt, .md, .html, .pdf): click or drop",
            file_count="multiple",
            file_types=[".txt", ".md", ".html", ".htm", ".pdf"],
            type="filepath",
            elem_id="upload",
        )
        with gr.Row(equal_height=True):
            names = gr.Dropdown(
                [],
                label="Remove a document",
                elem_id="remove-name",
                scale=1,
                allow_custom_value=True,
            )
            remove = gr.Button("Remove", elem_id="remove", variant="secondary", scale=0, min_width=0)
        outcome = gr.Markdown(elem_id="documents-outcome")

    def listed() -> tuple[str, str, gr.Dropdown]:
        names_now = [d["name"] for d in documents(bot.bot, library.settings)]
        return header(bot), document_table(bot, library), gr.Dropdown(choices=names_now, value=None)

    def uploaded(paths: list[str] | None) -> tuple:
        return (as_text(add_uploaded(bot, library, paths)), None, *listed())

    def removed(name: str | None) -> tuple:
        return (as_text(remove_named(bot, library, name)), *listed())

    demo.load(listed, None, [heading, table, names], queue=False, **PRIVATE)
    upload.upload(uploaded, upload, [outcome, upload, heading, table, names], show_progress="full", **PRIVATE)
    remove.click(removed, names, [outcome, heading, table, names], show_progress="full", **PRIVATE)


def add_question(text: str, messages: list[dict]) -> tuple[gr.Textbox, list[dict]]:
    """Show the question at once and lock the box until its answer is in (a second question meanwhile would be
    overwritten by the streaming answer)."""
    text = displayable(text or "").strip()
    if not text:
        return gr.Textbox(value=""), messages
    return gr.Textbox(value="", interactive=False), [*messages, {"role": "user", "content": as_text(text)}]


def add_example(messages: list[dict], evt: gr.SelectData) -> tuple[gr.Textbox, list[dict]]:
    return gr.Textbox(interactive=False), [*messages, {"role": "user", "content": as_text(evt.value["text"])}]


def unlock() -> gr.Textbox:
    return gr.Textbox(interactive=True)


Reset = tuple[gr.components.Component, Any]  # a component and its value once the conversation is cleared


def wire_questions(
    bot: ServedBot, chatbot: gr.Chatbot, box: gr.Textbox, clear: gr.Button, answers: gr.State, resets: list[Reset]
) -> None:
    """A question typed or an example picked: shown at once, then answered (streamed), then the box unlocked.
    Clear empties the conversation (and what `resets` name) and stops an answer under way."""

    def answer_last(messages: list[dict], kept: Replies) -> Iterator[tuple[list[dict], Replies]]:
        yield from respond(bot, messages, kept)

    answering = []
    for asked in (
        box.submit(add_question, [box, chatbot], [box, chatbot], queue=False, **PRIVATE),
        chatbot.example_select(add_example, chatbot, [box, chatbot], queue=False, **PRIVATE),
    ):
        answer = asked.then(answer_last, [chatbot, answers], [chatbot, answers], show_progress="minimal", **PRIVATE)
        answer.then(unlock, None, box, queue=False, **PRIVATE)
        answering.append(answer)
    cleared = [chatbot, box, answers, *(component for component, _ in resets)]
    clear.click(
        lambda: ([], gr.Textbox(value="", interactive=True), {}, *(value for _, value in resets)),
        None,
        cleared,
        cancels=answering,
        queue=False,
        **PRIVATE,
    )


def passage_view(bot: ServedBot, answers: gr.State) -> Reset:
    """The citation view: a panel over the chat showing a cited passage in its document (opened by the page's
    script through the hidden `#source-open` button, closed by its Close button or Escape)."""
    with gr.Column(visible=False, elem_id="passage") as panel:
        shown = gr.HTML(padding=False, elem_id="passage-body")
        close = gr.Button("Close", elem_id="passage-close", size="sm", variant="secondary")
    ref = gr.Textbox(visible="hidden", elem_id="source-ref")
    opener = gr.Button(visible="hidden", elem_id="source-open")

    def show(reference: str, kept: Replies) -> tuple[str, gr.Column]:
        return passage_html(bot, reference or "", kept), gr.Column(visible=True)

    opened = opener.click(None, None, ref, js="() => window.eventbotSource || ''", queue=False, **PRIVATE)
    opened.then(show, [ref, answers], [shown, panel], queue=False, **PRIVATE).then(
        None, js="() => document.querySelector('#passage mark')?.scrollIntoView({block: 'center'})", **PRIVATE
    )
    close.click(lambda: gr.Column(visible=False), None, panel, queue=False, **PRIVATE)
    return panel, gr.Column(visible=False)


Rated = dict[int, tuple[int, str]]  # reply index → (its feedback's id, "up" or "down")


def feedback_controls(bot: ServedBot, store: FeedbackStore, chatbot: gr.Chatbot, answers: gr.State) -> list[Reset]:
    """A thumb on a reply keeps it with its question, history and citations (`bot.feedback`, as `POST
    /api/feedback`); clicking the thumb again takes it back. After a thumb, a box below takes an optional comment."""
    rated = gr.State({})
    commenting = gr.State(None)  # the reply the comment box is about
    with gr.Row(visible=False, elem_id="feedback-comment", equal_height=True) as comment_row:
        comment = gr.Textbox(
            show_label=False,
            placeholder="What was wrong, or right? (optional)",
            max_length=bot.settings.max_comment_chars,
            elem_id="feedback-text",
            container=False,
            scale=1,
        )
        send = gr.Button("Send", elem_id="feedback-send", size="md", scale=0, min_width=0)
    status = gr.Markdown(elem_id="feedback-status")

    def on_thumb(messages: list[dict], kept: Replies, done: Rated, evt: gr.LikeData) -> tuple:
        reply = evt.index if isinstance(evt.index, int) else evt.index[0]
        done = dict(done)
        rating = {True: "up", False: "down"}.get(evt.liked)  # "" when a thumb is clicked off
        try:
            text = rate(store, bot, messages, kept, done, reply, rating)
        except (InputError, ValidationError) as exc:
            return done, gr.Row(visible=False), as_text(f"Not kept: {exc}"), None
        return done, gr.Row(visible=rating is not None), as_text(text), reply if rating else None

    def on_comment(text: str, reply: int | None, done: Rated) -> tuple:
        if reply is None or reply not in done or not (text or "").strip():
            return gr.Textbox(), gr.Row(visible=False), ""
        item_id, rating = done[reply]
        try:
            store.rate(item_id, rating, text.strip())
        except (InputError, ValidationError) as exc:
            return gr.Textbox(), gr.Row(visible=True), as_text(f"Not kept: {exc}")
        return gr.Textbox(value=""), gr.Row(visible=False), "Thanks: your comment is kept with your rating."

    chatbot.like(on_thumb, [chatbot, answers, rated], [rated, comment_row, status, commenting], **PRIVATE)
    for sent in (send.click, comment.submit):
        sent(on_comment, [comment, commenting, rated], [comment, comment_row, status], queue=False, **PRIVATE)
    return [(rated, {}), (commenting, None), (comment_row, gr.Row(visible=False)), (status, "")]


def rate(
    store: FeedbackStore,
    bot: ServedBot,
    messages: list[dict],
    kept: Replies,
    done: Rated,
    reply: int,
    rating: str | None,
) -> str:
    """Keep, change or take back (`rating` None) the rating of `reply`; what happened, in a line for the user."""
    answer = kept.get(reply)
    if answer is None:
        return "That reply cannot be rated (it is not an answer)."
    if rating is None:
        if reply in done:
            store.remove(done.pop(reply)[0])
        return "Your rating is taken back."
    if reply in done:
        store.rate(done[reply][0], rating)
    else:
        history = to_turns(messages[: reply - 1], bot.settings.max_history_messages, kept)
        item = store.add(
            FeedbackIn(
                question=answer.question,
                answer=answer.answer,
                rating=rating,
                history=history,
                citations=answer.citations,
            )
        )
        done[reply] = (item.id, rating)
    done[reply] = (done[reply][0], rating)
    return "Thanks: kept. Add a comment below if you like."
