"""The native HTTP API: thin FastAPI routers over the same `EventBot` methods the CLI uses, through the process's
one `bot.serving.ServedBot` (which warms the bot up and swaps in a fresh one when the index changes).

- `GET /healthz` — liveness and index counts (no auth: load balancers probe it).
- `POST /api/ask` — question + optional history → the answer object (README: "The answer object").
- `POST /api/documents`, `GET /api/documents`, `DELETE /api/documents/{name}` — the documents answered from.
- `GET /api/documents/{name}/passage` — a cited quote with the paragraphs around it (the chat's citation view).

The OpenAI-compatible routes are in `ui.openai_api`, the limits in `ui.middleware`, errors to statuses in
`ui.errors`; `ui.server` composes them. When `EVENTBOT_API_KEY` is set, `/api/*` and `/v1/*` need
`Authorization: Bearer <key>`.
"""

import secrets
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, File, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from bot.errors import NotReadyError, UnavailableError
from bot.library import Library, Upload, documents
from bot.serving import ServedBot
from bot.source_passage import SourcePassage, passage_of
from bot.types import Answer, Turn
from index.loaders import SUPPORTED
from ui.errors import ERROR_RESPONSES, detail_of, status_of

# ---------------------------------------------------------------------------------------------- plumbing


def get_bot(request: Request) -> ServedBot:
    return request.app.state.bot


bearer = HTTPBearer(auto_error=False, description="Needed only when the server sets `EVENTBOT_API_KEY`.")


def require_api_key(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> None:
    """Bearer auth when `EVENTBOT_API_KEY` is set; constant-time comparison of the key."""
    expected = get_bot(request).settings.api_key
    if not expected:
        return
    given = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else ""
    if not secrets.compare_digest(given.encode(), expected.encode()):
        raise StarletteHTTPException(
            401, "missing or wrong API key: send `Authorization: Bearer <key>`", headers={"WWW-Authenticate": "Bearer"}
        )


# ---------------------------------------------------------------------------------------------- /healthz

health = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    documents: int
    chunks: int


HEALTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {
        "description": 'Not serving: `{"status": "starting", "detail": …}` until the warm-up answer has run, '
        '`{"status": "degraded", "detail": …}` when the store cannot be read (down, stalled past '
        "`EVENTBOT_STORE_TIMEOUT_S`, the index folder deleted)"
    }
}


@health.get("/healthz", response_model=Health, responses=HEALTH_RESPONSES)
def healthz(bot: Annotated[ServedBot, Depends(get_bot)]) -> Any:
    """Ready and what is indexed: `{"status": "ok", "documents": 1, "chunks": 8}`. 503 with `"status":
    "starting"` before the first answer has run, `"degraded"` (and the reason in `detail`) when the store
    cannot be read. Needs no API key."""
    try:
        return Health(**bot.health())
    except UnavailableError as exc:  # not warmed up yet, or the store cannot be read
        status = "starting" if isinstance(exc, NotReadyError) else "degraded"
        return JSONResponse({"status": status, "detail": detail_of(exc)}, status_code=status_of(exc))


# ---------------------------------------------------------------------------------------------- /api/ask

ask_router = APIRouter(prefix="/api", tags=["ask"], responses=ERROR_RESPONSES)


class HistoryTurn(Turn):
    """A turn of `history`: like the top level, an unknown field is an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class AskRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"question": "Who won the gold medal?"},
                {
                    "question": "How old is she?",
                    "history": [
                        {"role": "user", "content": "Who won silver?"},
                        {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
                    ],
                },
            ]
        },
    )
    question: str = Field(description="The question, up to `EVENTBOT_MAX_QUESTION_CHARS` characters")
    history: list[HistoryTurn] = Field(
        default_factory=list,
        description="Earlier turns, oldest first; follow-ups like “How old is she?” are resolved against them",
    )
    collection: str | None = Field(
        None, description="The collection to answer from (`eventbot index --collection NAME`); default: the server's"
    )


ASK_EXAMPLES = {
    "question": {"summary": "A question", "value": {"question": "Who won the gold medal?"}},
    "follow-up": {
        "summary": "A follow-up, with history",
        "value": {
            "question": "How old is she?",
            "history": [
                {"role": "user", "content": "Who won silver?"},
                {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
            ],
        },
    },
    "unanswerable": {
        "summary": "Not in the documents (abstains)",
        "value": {"question": "What did Amber Glenn eat for breakfast?"},
    },
}


@ask_router.post("/ask", response_model=Answer)
def ask(
    body: Annotated[AskRequest, Body(openapi_examples=ASK_EXAMPLES)], bot: Annotated[ServedBot, Depends(get_bot)]
) -> Answer:
    """Answer one question from the indexed documents, citing them.

    Example request:

        curl -s localhost:7860/api/ask -H 'Content-Type: application/json' \\
             -d '{"question": "Who won the gold medal?"}'

    The answer text carries `[n]` markers; `citations[n-1].quote` is the verbatim passage behind each.
    `abstained` is true (and the answer says so) when the documents do not answer the question.
    With `history`, the question is first rewritten into a standalone one (`standalone_question`).
    """
    return bot.for_collection(body.collection).ask(body.question, body.history)


# ---------------------------------------------------------------------------------------------- /api/documents

documents_router = APIRouter(
    prefix="/api",
    tags=["documents"],
    responses={
        403: {"description": "Changing the documents is off: no `EVENTBOT_API_KEY` and `EVENTBOT_UPLOADS` not `on`"},
        404: {"description": "No indexed document of that name"},
        409: {"description": "A document of that name is indexed already, or it is the last one"},
        413: {"description": "A file over `EVENTBOT_MAX_FILE_BYTES`"},
        415: {"description": f"A file type other than {SUPPORTED}"},
        422: {
            "description": "A file that is empty, binary, not UTF-8, an encrypted or image-only PDF; a name with a "
            "folder or a NUL in it; more than `EVENTBOT_MAX_UPLOAD_FILES` files"
        },
        503: {"description": "The index cannot be written (the Chroma server down): nothing changed"},
    },
)


class DocumentEntry(BaseModel):
    name: str = Field(description="The file name; citations name it as `source`")
    bytes: int | None = Field(description="The file's size")
    chunks: int
    indexed_at: str | None = Field(
        description="When it was indexed (UTC, ISO 8601); null if indexed before this was kept"
    )
    source: Literal["bundled", "uploaded", "folder"] = Field(
        description="`bundled` (data/), `uploaded` (through this API or the chat) or `folder` (`eventbot index PATH`)"
    )
    summary: str | None = Field(
        None, description="The document's key sentences, verbatim, chosen when it was indexed (`EVENTBOT_SUMMARIES`)"
    )


class DocumentList(BaseModel):
    documents: list[DocumentEntry]


class AddedDocument(BaseModel):
    name: str
    chunks: int
    added: int
    seconds: float


class IndexCounts(BaseModel):
    documents: int
    chunks: int


class UploadReport(BaseModel):
    documents: list[AddedDocument]
    index: IndexCounts


def get_library(request: Request) -> Library:
    library: Library = request.app.state.library
    library.check_allowed()
    return library


Collection = Annotated[str | None, Query(description="Another collection's (default: the server's own)")]


def changed_in(bot: ServedBot, library: Library, collection: str | None) -> tuple[ServedBot, Library]:
    """The served bot of `collection` and the library that changes its documents (the server's own by default)."""
    served = bot.for_collection(collection)
    return (bot, library) if served is bot else (served, Library(served.settings, store=lambda: served.bot.store))


@documents_router.post("/documents", response_model=UploadReport)
def add_documents(
    bot: Annotated[ServedBot, Depends(get_bot)],
    library: Annotated[Library, Depends(get_library)],
    files: Annotated[list[UploadFile] | None, File(description=f"One or more {SUPPORTED} files")] = None,
    collection: Collection = None,
) -> UploadReport:
    """Add documents: the bot answers from them as soon as this returns.

    Example request:

        curl -s localhost:7860/api/documents -F files=@report.pdf -F files=@results.html

    All files go in, or none (any bad file: a 4xx naming it, and the index as it was). Each is kept under
    `EVENTBOT_UPLOADS_DIR` by its name, which must be new to the index. `?collection=NAME` adds them to another
    collection (one the index holds).
    """
    limit = bot.settings.max_file_bytes
    bot, library = changed_in(bot, library, collection)
    added = library.add([Upload(f.filename, f.file.read(limit + 1), f.size) for f in files or []], then=bot.reload)
    return UploadReport(documents=[AddedDocument(**a.as_dict()) for a in added], index=IndexCounts(**library.counts()))


@documents_router.get("/documents", response_model=DocumentList)
def list_documents(
    bot: Annotated[ServedBot, Depends(get_bot)],
    library: Annotated[Library, Depends(get_library)],
    collection: Collection = None,
) -> DocumentList:
    """The documents the bot answers from (`collection`: another collection's): name, bytes, chunks, when indexed,
    and whether bundled, uploaded or indexed from a folder."""
    return DocumentList(documents=documents(bot.for_collection(collection).bot, library.settings))


@documents_router.delete("/documents/{name}", response_model=DocumentList)
def remove_document(
    name: str,
    bot: Annotated[ServedBot, Depends(get_bot)],
    library: Annotated[Library, Depends(get_library)],
    collection: Collection = None,
) -> DocumentList:
    """Remove a document from the index (an uploaded one's kept file too; `?collection=NAME`: from another
    collection); the list after. The last document of a collection cannot be removed (409)."""
    bot, library = changed_in(bot, library, collection)
    library.remove(name, then=bot.reload)
    return DocumentList(documents=documents(bot.bot, library.settings))


@documents_router.get(
    "/documents/{name}/passage",
    response_model=SourcePassage,
    responses={422: {"description": "A `quote` that the chunk does not hold"}},
)
def document_passage(
    name: str,
    bot: Annotated[ServedBot, Depends(get_bot)],
    chunk_id: Annotated[str, Query(max_length=64, description="A citation's `chunk_id`")],
    quote: Annotated[
        str | None, Query(max_length=5000, description="A citation's `quote` (default: the whole chunk)")
    ] = None,
) -> SourcePassage:
    """A cited passage in its document: the text before the quote, the quote verbatim, the text after it (a few
    paragraphs each side) and, for a PDF, its page. Open to whoever may ask questions (it shows only what
    citations already quote from, with its surroundings).

    Example request:

        curl -s 'localhost:7860/api/documents/event-article.txt/passage?chunk_id=…&quote=…'
    """
    return passage_of(bot.bot, name, chunk_id, quote)
