"""The index's collections over HTTP: a thin router over `bot.indexing` (as `eventbot collections` is).

- `GET /api/collections` — each collection with how many documents and chunks it holds.
- `DELETE /api/collections/{name}` — remove one whole (not the server's own); the list after.

Removing needs what changing the documents needs: the API key, or `EVENTBOT_UPLOADS=on` (else 403).
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from bot.errors import DocumentConflictError
from bot.indexing import collections, remove_collection
from bot.serving import ServedBot
from ui.errors import ERROR_RESPONSES

collections_router = APIRouter(prefix="/api", tags=["collections"], responses=ERROR_RESPONSES)


def get_bot(request: Request) -> ServedBot:
    return request.app.state.bot


class CollectionInfo(BaseModel):
    name: str
    documents: int
    chunks: int


class CollectionList(BaseModel):
    collections: list[CollectionInfo]


@collections_router.get("/collections", response_model=CollectionList)
def list_collections(bot: Annotated[ServedBot, Depends(get_bot)]) -> CollectionList:
    """The index's collections (each a separate set of documents: `collection` on `/api/ask` picks one).

    Example request:

        curl -s localhost:7860/api/collections
    """
    return CollectionList(collections=collections(bot.settings))


@collections_router.delete("/collections/{name}", response_model=CollectionList)
def delete_collection(name: str, request: Request, bot: Annotated[ServedBot, Depends(get_bot)]) -> CollectionList:
    """Remove a collection whole: its chunks, what was learnt of it, the LLM's saved readings of its documents and
    its uploaded files that no other collection holds; the list after. 404 for a collection the index does not
    hold, 409 for the server's own, 403 when documents may not be changed here.

    Example request:

        curl -s -X DELETE localhost:7860/api/collections/regatta -H "Authorization: Bearer $EVENTBOT_API_KEY"
    """
    request.app.state.library.check_allowed()
    if name == bot.collection:
        raise DocumentConflictError(f"{name!r} is the collection this server answers from; it cannot be removed here")
    bot.forget_collection(name)
    remove_collection(bot.settings, name)
    return CollectionList(collections=collections(bot.settings))
