"""The chat's collection picker: where the index holds several collections, the one its questions read (the
server's own first); picking another shows its documents and starts a new conversation."""

import gradio as gr

from bot.errors import CollectionNotFoundError, StoreUnavailableError
from bot.serving import ServedBot
from ui.chat_common import PRIVATE, Reset, as_text, examples
from ui.chat_documents import header


def collection_picker(bot: ServedBot) -> gr.Dropdown:
    """The picker of collections, shown where the index holds more than one (the server's own first)."""
    try:
        names = [bot.collection, *(n for n in bot.collection_names() if n != bot.collection)]
    except StoreUnavailableError:
        names = [bot.collection]
    return gr.Dropdown(choices=names, value=bot.collection, visible=len(names) > 1)


def wire_collections(
    bot: ServedBot,
    collection: gr.Dropdown,
    heading: gr.HTML,
    chatbot: gr.Chatbot,
    answers: gr.State,
    resets: list[Reset],
) -> None:
    """Another collection picked: its documents in the header, its example questions, a new conversation."""

    def picked(name: str | None) -> tuple:
        cleared = [value for _, value in resets]
        try:
            served = bot.for_collection(name)
        except (CollectionNotFoundError, StoreUnavailableError) as exc:  # removed meanwhile, or the store down
            return header(bot), [{"role": "assistant", "content": as_text(str(exc))}], {}, *cleared
        return header(served), gr.Chatbot(value=[], examples=examples(served)), {}, *cleared

    outputs = [heading, chatbot, answers, *(component for component, _ in resets)]
    collection.input(picked, collection, outputs, **PRIVATE)
