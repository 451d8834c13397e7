"""The chat's kept conversations: each answer keeps the conversation (`bot.conversations`, with the collection it
was about), a page reload reopens the one that was open, and the Conversations panel lists them, reopens one and
deletes one. Whose they are: the API key's where the server has one, else this browser's (a random token in its
local storage)."""

from datetime import datetime

import gradio as gr

from bot.conversations import ConversationStore, ConversationSummary, new_browser_token, owner_of
from bot.errors import CollectionNotFoundError, ConversationNotFoundError, StoreUnavailableError, UnavailableError
from bot.serving import ServedBot
from ui.chat_common import PRIVATE, Replies, Reset, as_text, examples
from ui.chat_documents import header
from ui.chat_replies import conversation_messages


def choice_of(kept: ConversationSummary) -> tuple[str, str]:
    """How the picker lists a conversation: its first question, its length and when it was last answered."""
    when = datetime.fromisoformat(kept.updated_at).strftime("%d %b %H:%M")
    questions = "1 question" if kept.turns == 1 else f"{kept.turns} questions"
    return f"{kept.title} · {questions} · {when} UTC", kept.id


def picker_of(store: ConversationStore, owner: str | None, open_id: str | None) -> gr.Dropdown:
    """The picker of the owner's conversations, the open one picked."""
    choices = [choice_of(k) for k in store.list(owner)] if owner else []
    return gr.Dropdown(choices=choices, value=open_id if open_id in {id for _, id in choices} else None)


class KeptConversations:
    """What the panel's events do, for the server's `bot` and `store`. Each returns the values of the picker, the
    status line and `shown` (the conversation, its answers, the open id, the collection picked, the header, then
    what `resets` name); gr.skip() for what stays as it is."""

    def __init__(self, bot: ServedBot, store: ConversationStore, resets: list[Reset]):
        self.bot, self.store, self.resets = bot, store, resets
        self.unchanged = tuple(gr.skip() for _ in range(5 + len(resets)))

    def reopened(self, owner: str | None, id: str | None) -> tuple:
        """What the page shows of conversation `id` of `owner` (nothing new when there is none)."""
        try:
            kept = self.store.get(owner, id) if owner and id else None
        except ConversationNotFoundError:  # deleted meanwhile (in another tab)
            kept = None
        if kept is None:
            return self.unchanged
        messages, replies = conversation_messages(kept.answers)
        try:
            heading = header(self.bot.for_collection(kept.collection))
        except (CollectionNotFoundError, StoreUnavailableError):
            heading = header(self.bot)
        picked = gr.Dropdown(value=kept.collection)
        return messages, replies, kept.id, picked, heading, *(value for _, value in self.resets)

    def restore(self, token: str | None, id: str | None) -> tuple:
        """A page load: this browser's token (made on its first visit), its list, the conversation open before."""
        if owner_of(self.bot.settings, token) is None and not self.bot.settings.api_key:
            token = new_browser_token()
        owner = owner_of(self.bot.settings, token)
        try:
            return token, picker_of(self.store, owner, id), "", *self.reopened(owner, id)
        except UnavailableError as exc:
            return token, gr.skip(), as_text(f"The kept conversations can't be read now ({exc})."), *self.unchanged

    def pick(self, id: str | None, token: str | None) -> tuple:
        owner = owner_of(self.bot.settings, token)
        try:
            return picker_of(self.store, owner, id), "", *self.reopened(owner, id)
        except UnavailableError as exc:
            return gr.skip(), as_text(f"Not opened: {exc}"), *self.unchanged

    def remove(self, id: str | None, token: str | None) -> tuple:
        owner = owner_of(self.bot.settings, token)
        if not (owner and id):
            return gr.skip(), "No kept conversation is open.", *self.unchanged
        try:
            self.store.remove(owner, id)
        except ConversationNotFoundError:
            pass  # deleted meanwhile (in another tab)
        except UnavailableError as exc:
            return gr.skip(), as_text(f"Not deleted: {exc}"), *self.unchanged
        emptied = (gr.Chatbot(value=[], examples=examples(self.bot)), {}, None, gr.skip(), gr.skip())
        return picker_of(self.store, owner, None), "Deleted.", *emptied, *(value for _, value in self.resets)

    def keep(self, replies: Replies, id: str | None, name: str | None, token: str | None) -> tuple:
        """An answer in: the conversation kept (a new one at its first answer); its id, the list, the status."""
        owner = owner_of(self.bot.settings, token)
        if owner is None or not replies:
            return gr.skip(), gr.skip(), gr.skip()
        try:
            kept = self.store.keep(owner, id, name or self.bot.collection, [replies[i] for i in sorted(replies)])
        except UnavailableError as exc:  # the conversation goes on, and is kept at its next answer
            return gr.skip(), gr.skip(), as_text(f"Not kept: {exc}")
        return kept.id, picker_of(self.store, owner, kept.id), ""


def conversations_panel(
    bot: ServedBot,
    store: ConversationStore,
    events: dict[str, gr.events.Dependency | list],
    chatbot: gr.Chatbot,
    answers: gr.State,
    collection: gr.Dropdown,
    heading: gr.HTML,
    resets: list[Reset],
) -> None:
    """The Conversations panel, wired to the page's `events`: after "loaded" the conversation open before the
    reload is reopened; after each of "answered" the conversation is kept; "new" (New, another collection) starts
    a new one. Reopening or deleting one also resets what `resets` name (the passage view, the thumbs)."""
    secret = store.browser_secret()  # the same after a restart, and in every worker process
    browser = gr.BrowserState(None, storage_key="eventbot-browser", secret=secret)  # this browser's owner token
    open_id = gr.BrowserState(None, storage_key="eventbot-conversation", secret=secret)  # reopened on reload
    with gr.Accordion("Conversations", open=False, elem_id="conversations"):
        picker = gr.Dropdown([], label="Open a kept conversation", elem_id="conversation-picker", interactive=True)
        delete = gr.Button("Delete this conversation", elem_id="conversation-delete", size="sm", variant="stop")
        status = gr.Markdown(elem_id="conversation-status")
    kept = KeptConversations(bot, store, resets)
    panel = [picker, status, chatbot, answers, open_id, collection, heading, *(component for component, _ in resets)]
    events["loaded"].then(kept.restore, [browser, open_id], [browser, *panel], **PRIVATE)
    picker.input(kept.pick, [picker, browser], panel, **PRIVATE)
    delete.click(kept.remove, [open_id, browser], panel, **PRIVATE)
    for answered in events["answered"]:
        answered.then(kept.keep, [answers, open_id, collection, browser], [open_id, picker, status], **PRIVATE)
    for new in events["new"]:
        new(lambda: (None, gr.Dropdown(value=None), ""), None, [open_id, picker, status], queue=False, **PRIVATE)
