"""The chat's kept conversations over HTTP: a thin router over the server's one
`bot.conversations.ConversationStore` (`app.state.conversations`, made by `ui.server.build_api`), which the chat
writes to.

- `GET /api/conversations` — the caller's conversations, the latest answered first.
- `GET /api/conversations/{id}` — one, whole: each question's answer object.
- `DELETE /api/conversations/{id}` — forget one; the list after.

They are the API key's conversations (the chat's, logged in with the same key): without `EVENTBOT_API_KEY` each
browser's conversations are its own, and these routes are 403.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from bot.conversations import Conversation, ConversationStore, ConversationSummary, owner_of
from bot.errors import PermissionDeniedError
from ui.errors import ERROR_RESPONSES

conversations_router = APIRouter(prefix="/api", tags=["conversations"], responses=ERROR_RESPONSES)


def get_conversations(request: Request) -> ConversationStore:
    return request.app.state.conversations


def api_owner(request: Request) -> str:
    """The API key's owner; 403 without a key (the conversations are then each browser's own)."""
    owner = owner_of(request.app.state.bot.settings)
    if owner is None:
        raise PermissionDeniedError(
            "the chat's conversations are reachable over HTTP only when the server sets EVENTBOT_API_KEY: without "
            "it each browser's conversations are its own"
        )
    return owner


class ConversationList(BaseModel):
    conversations: list[ConversationSummary]


@conversations_router.get("/conversations", response_model=ConversationList)
def list_conversations(
    store: Annotated[ConversationStore, Depends(get_conversations)], owner: Annotated[str, Depends(api_owner)]
) -> ConversationList:
    """The conversations kept by the chat (logged in with this API key), the latest answered first.

    Example request:

        curl -s localhost:7860/api/conversations -H "Authorization: Bearer $EVENTBOT_API_KEY"
    """
    return ConversationList(conversations=store.list(owner))


@conversations_router.get("/conversations/{id}", response_model=Conversation)
def get_conversation(
    id: str, store: Annotated[ConversationStore, Depends(get_conversations)], owner: Annotated[str, Depends(api_owner)]
) -> Conversation:
    """One kept conversation: its collection and each question's answer object (with its citations), oldest
    first. 404 for an id the key has no conversation of."""
    return store.get(owner, id)


@conversations_router.delete("/conversations/{id}", response_model=ConversationList)
def remove_conversation(
    id: str, store: Annotated[ConversationStore, Depends(get_conversations)], owner: Annotated[str, Depends(api_owner)]
) -> ConversationList:
    """Forget a kept conversation; the list after. 404 for an id the key has no conversation of."""
    store.remove(owner, id)
    return ConversationList(conversations=store.list(owner))
