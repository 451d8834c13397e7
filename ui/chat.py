"""The Gradio chat at `/`: streamed answers with `[n]` markers and a collapsible Sources panel per answer.

The chat calls the bot in-process (the same `ServedBot` as the API), passing the conversation so far as
history so follow-ups ("How old is she?") are resolved by the bot. Each answer object is kept in the session's
state by the index of its reply, for what the page does with a reply afterwards:
- a thumb up or down (and a comment) is kept by `bot.feedback`, as `POST /api/feedback` keeps it;
- a `[n]` marker (or a line of the Sources panel) opens the cited passage highlighted in its document
  (`bot.source_passage.passage_of`, as `GET /api/documents/{name}/passage`): a click on the link is caught by the page's
  script (HEAD), which hands the link's reference to a hidden button;
- an abstained reply (unsure, or not in the documents) is shown muted, with a note saying why.
Where the index holds several collections, a picker above the conversation chooses the one questions read (the
server's own first); picking another starts a new conversation.
"""

import html
import itertools
import logging
import os
import time
from collections.abc import Iterator

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import gradio as gr  # noqa: E402

from bot.conversations import ConversationStore  # noqa: E402
from bot.errors import (  # noqa: E402
    CollectionNotFoundError,
    DocumentNotFoundError,
    InputError,
    PassageNotFoundError,
    QuestionError,
    StoreUnavailableError,
)
from bot.feedback import FeedbackStore  # noqa: E402
from bot.library import Library  # noqa: E402
from bot.serving import ServedBot  # noqa: E402
from bot.source_passage import passage_of  # noqa: E402
from bot.types import place_of  # noqa: E402
from ui.chat_collections import collection_picker, wire_collections  # noqa: E402
from ui.chat_common import (  # noqa: E402
    LONE_SURROGATE,
    PRIVATE,
    Replies,
    Reset,
    as_text,
    displayable,
    examples,
    from_text,
    message_text,
    to_turns,
)
from ui.chat_conversations import conversations_panel  # noqa: E402
from ui.chat_documents import changeable, documents_panel, header  # noqa: E402
from ui.chat_feedback import feedback_controls  # noqa: E402
from ui.chat_replies import reply_messages  # noqa: E402
from ui.openai_api import rest_of, word_pieces  # noqa: E402

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
#chat .top-panel { display: none !important; }  /* Gradio's own trash icon: the New button does that */
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


def respond(
    bot: ServedBot, messages: list[dict], answers: Replies | None = None
) -> Iterator[tuple[list[dict], Replies]]:
    """Answer the last user message, streaming the text (a long answer's sentences as they hold, the rest word by
    word), then add the Sources panel; yields the messages and the session's answers (this one added once it is
    complete)."""
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
    arriving = bot.ask_streamed(question, history)
    try:
        first = next(arriving)
    except QuestionError as exc:
        yield [*messages, {"role": "assistant", "content": as_text(f"I can't take that question: {exc}.")}], answers
        return
    except (StoreUnavailableError, CollectionNotFoundError) as exc:
        log.warning("chat: %s", exc)
        failed = {"role": "assistant", "content": as_text(f"The documents can't be read right now ({exc}).")}
        yield [*messages, failed], answers
        return
    text = ""
    for item in itertools.chain([first], arriving):  # each sentence of a long answer as it holds, then the answer
        if isinstance(item, str):
            text += item
            yield [*messages, {"role": "assistant", "content": as_text(text)}], answers
            continue
        answer = item
        for piece in word_pieces(rest_of(answer.answer, text)):
            text += piece
            yield [*messages, {"role": "assistant", "content": as_text(text)}], answers
            time.sleep(STREAM_DELAY_S)
    yield [*messages, *reply_messages(answer, len(messages))], {**answers, len(messages): answer}


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
    place = html.escape(place_of(found.page, found.section))
    return (
        f'<div class="passage-head"><strong>[{n}]</strong> <code>{html.escape(found.source)}</code>{place}</div>'
        f'<div class="passage-text">{html.escape(found.before)}<mark>{html.escape(found.quote)}</mark>'
        f"{html.escape(found.after)}</div>"
    )


def build_chat(
    bot: ServedBot,
    library: Library | None = None,
    feedback: FeedbackStore | None = None,
    conversations: ConversationStore | None = None,
) -> gr.Blocks:
    """The chat UI as a Blocks app (mounted at `/` by ui.server). With a `library` that may be changed (an API
    key, whose login the chat then asks for, or `EVENTBOT_UPLOADS=on`) a Documents panel lists the documents and
    takes files to add (click or drop) and names to remove. With a `feedback` store each reply has a thumb up and
    down, kept there. With a `conversations` store each conversation is kept there, and a Conversations panel
    reopens or deletes one."""
    library = changeable(library)

    def page_load() -> tuple[str, gr.Chatbot, gr.Dropdown]:
        """The served bot may have been swapped for a fresh index since start-up: each page shows the documents
        and example questions of the one serving now (a fresh bot's examples are worked out before the swap), and
        the collections the index holds now."""
        return header(bot), gr.Chatbot(examples=examples(bot)), collection_picker(bot)

    with gr.Blocks(title="eventbot: ask about the event", fill_height=True, analytics_enabled=False) as demo:
        answers = gr.State({})  # the session's answer objects, by the index of their reply
        collection = gr.Dropdown(visible=False, elem_id="collection", label="Collection", interactive=True)
        heading, chatbot, box, clear = chat_layout(bot, rated=feedback is not None)
        loaded = demo.load(page_load, None, [heading, chatbot, collection], queue=False, **PRIVATE)
        if library is not None:
            documents_panel(demo, bot, library, heading)
        hide_passage = passage_view(bot, answers, collection)
        forget_feedback = feedback_controls(bot, feedback, chatbot, answers) if feedback is not None else []
        resets = [hide_passage, *forget_feedback]
        answered = wire_questions(bot, chatbot, box, clear, answers, collection, resets)
        wire_collections(bot, collection, heading, chatbot, answers, resets)
        if conversations is not None:
            events = {"loaded": loaded, "answered": answered, "new": [clear.click, collection.input]}
            conversations_panel(bot, conversations, events, chatbot, answers, collection, heading, resets)
    demo.queue(default_concurrency_limit=8)
    return demo


def chat_layout(bot: ServedBot, rated: bool = False) -> tuple[gr.HTML, gr.Chatbot, gr.Textbox, gr.Button]:
    """The header, the conversation, and below it the question box with its New button (a new conversation)."""
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
            "New", elem_id="clear", elem_classes="clear", variant="secondary", size="md", min_width=0, scale=0
        )
    return heading, chatbot, box, clear


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


def wire_questions(
    bot: ServedBot,
    chatbot: gr.Chatbot,
    box: gr.Textbox,
    clear: gr.Button,
    answers: gr.State,
    collection: gr.Dropdown,
    resets: list[Reset],
) -> list[gr.events.Dependency]:
    """A question typed or an example picked: shown at once, then answered (streamed) from the picked collection,
    then the box unlocked. New empties the conversation (and what `resets` name) and stops an answer under way.
    Returns the answering events (what follows an answer chains on them)."""

    def answer_last(messages: list[dict], kept: Replies, name: str | None) -> Iterator[tuple[list[dict], Replies]]:
        try:
            served = bot.for_collection(name)
        except (CollectionNotFoundError, StoreUnavailableError) as exc:
            yield [*messages, {"role": "assistant", "content": as_text(str(exc))}], kept
            return
        yield from respond(served, messages, kept)

    answering = []
    for asked in (
        box.submit(add_question, [box, chatbot], [box, chatbot], queue=False, **PRIVATE),
        chatbot.example_select(add_example, chatbot, [box, chatbot], queue=False, **PRIVATE),
    ):
        answer = asked.then(
            answer_last, [chatbot, answers, collection], [chatbot, answers], show_progress="minimal", **PRIVATE
        )
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
    return answering


def passage_view(bot: ServedBot, answers: gr.State, collection: gr.Dropdown) -> Reset:
    """The citation view: a panel over the chat showing a cited passage in its document (opened by the page's
    script through the hidden `#source-open` button, closed by its Close button or Escape)."""
    with gr.Column(visible=False, elem_id="passage") as panel:
        shown = gr.HTML(padding=False, elem_id="passage-body")
        close = gr.Button("Close", elem_id="passage-close", size="sm", variant="secondary")
    ref = gr.Textbox(visible="hidden", elem_id="source-ref")
    opener = gr.Button(visible="hidden", elem_id="source-open")

    def show(reference: str, kept: Replies, name: str | None) -> tuple[str, gr.Column]:
        try:
            served = bot.for_collection(name)
        except (CollectionNotFoundError, StoreUnavailableError) as exc:
            return f"<p>{html.escape(str(exc))}</p>", gr.Column(visible=True)
        return passage_html(served, reference or "", kept), gr.Column(visible=True)

    opened = opener.click(None, None, ref, js="() => window.eventbotSource || ''", queue=False, **PRIVATE)
    opened.then(show, [ref, answers, collection], [shown, panel], queue=False, **PRIVATE).then(
        None, js="() => document.querySelector('#passage mark')?.scrollIntoView({block: 'center'})", **PRIVATE
    )
    close.click(lambda: gr.Column(visible=False), None, panel, queue=False, **PRIVATE)
    return panel, gr.Column(visible=False)
