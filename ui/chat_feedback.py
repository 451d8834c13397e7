"""The chat's thumbs: a thumb up or down on a reply, and an optional comment after it, kept by `bot.feedback` as
`POST /api/feedback` keeps them."""

import gradio as gr
from pydantic import ValidationError

from bot.errors import InputError
from bot.feedback import FeedbackIn, FeedbackStore
from bot.serving import ServedBot
from ui.chat_common import PRIVATE, Replies, Reset, as_text, to_turns

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
        item_id = store.rate(done[reply][0], rating).id
    else:
        history = to_turns(messages[: reply - 1], bot.settings.max_history_messages, kept)
        given = FeedbackIn(
            question=answer.question, answer=answer.answer, rating=rating, history=history, citations=answer.citations
        )
        item_id = store.add(given).id
    done[reply] = (item_id, rating)
    return "Thanks: kept. Add a comment below if you like."
