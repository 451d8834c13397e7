"""The HTTP API: thin FastAPI routers over the same `EventBot` methods the CLI uses, through the process's one
`bot.served.ServedBot` (which warms the bot up and swaps in a fresh one when the index changes).

- `GET /healthz` — liveness and index counts (no auth: load balancers probe it).
- `POST /api/ask` — question + optional history → the answer object of DESIGN.md.
- `POST /v1/chat/completions`, `GET /v1/models` — OpenAI's chat schema, so OpenAI clients work unchanged.
- `POST /api/documents`, `GET /api/documents`, `DELETE /api/documents/{name}` — the documents answered from.

When `EVENTBOT_API_KEY` is set, `/api/*` and `/v1/*` need `Authorization: Bearer <key>`.
Errors are JSON `{"detail": …}`: 4xx for what the client got wrong, 503 when the index cannot be read (ui.errors).
"""

import json
import logging
import math
import re
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, FastAPI, File, Request, UploadFile
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

# Swagger UI and ReDoc served from the package instead of a CDN, so /docs works offline
from fastapi_offline import FastAPIOffline as DocumentedFastAPI
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.errors import NotReadyError, QuestionError, UnavailableError, UploadsOffError
from bot.library import Library, Upload, documents
from bot.served import ServedBot
from bot.service import EventBot, check_question
from bot.settings import Settings
from bot.types import Answer, Citation, Turn
from ui.errors import ERROR_RESPONSES, detail_of, install_error_handlers, status_of

log = logging.getLogger(__name__)

MODEL_ID = "eventbot"


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


class BodySizeLimit:
    """413 for a request body over `limit` bytes, on every route (API, chat, uploads), before anything parses it:
    a declared Content-Length is refused at once, a chunked body as soon as it passes the limit (the app then
    sees a disconnected client, and whatever it answers is dropped)."""

    def __init__(self, app: ASGIApp, limit: int, larger: dict[str, int] | None = None):
        self.app, self.default, self.larger = app, limit, larger or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"].rstrip("/"), self.default)  # uploads of documents may be larger
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self._refuse(scope, receive, send, limit)
            return
        seen, started, refused = 0, False, False

        async def counted_receive() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = True
                    if not started:
                        await self._refuse(scope, receive, send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except Exception:
            if not refused:
                raise

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        setting = (
            "EVENTBOT_MAX_BODY_BYTES"
            if limit == self.default
            else "EVENTBOT_MAX_FILE_BYTES × EVENTBOT_MAX_UPLOAD_FILES"
        )
        detail = f"the request body is larger than the limit of {limit} bytes ({setting})"
        await JSONResponse({"detail": detail}, status_code=413, headers={"Connection": "close"})(scope, receive, send)


class RateLimit:
    """429 with `Retry-After` for a client (by IP address) past `per_minute` requests in the last minute on
    `/api` and `/v1` (a moving window, kept in this process's memory by the `limits` library). The chat and
    /healthz are not counted. Behind a proxy every client has the proxy's address: limit there instead."""

    PATHS = ("/api/", "/v1/")

    def __init__(self, app: ASGIApp, per_minute: int):
        from limits import RateLimitItemPerMinute
        from limits.storage import MemoryStorage
        from limits.strategies import MovingWindowRateLimiter

        self.app, self.per_minute = app, per_minute
        self.item = RateLimitItemPerMinute(per_minute)
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.PATHS):
            client = (scope.get("client") or ("unknown",))[0]
            if not self.limiter.hit(self.item, client):
                reset_at = self.limiter.get_window_stats(self.item, client).reset_time
                retry = max(1, math.ceil(reset_at - time.time()))
                detail = (
                    f"too many requests: the limit is {self.per_minute} a minute per client (EVENTBOT_RATE_LIMIT); "
                    f"try again in {retry} s"
                )
                response = JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(retry)})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


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
    return bot.ask(body.question, body.history)


# ---------------------------------------------------------------------------------------------- /v1 (OpenAI)

openai_router = APIRouter(prefix="/v1", tags=["openai"], responses=ERROR_RESPONSES)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "text"
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text or "" for part in self.content if part.type == "text")
        return self.content or ""


CHAT_EXAMPLES = {
    "plain": {
        "summary": "One question",
        "value": {"model": "eventbot", "messages": [{"role": "user", "content": "Who won the gold medal?"}]},
    },
    "streamed follow-up": {
        "summary": "A follow-up, streamed as server-sent events",
        "value": {
            "model": "eventbot",
            "stream": True,
            "messages": [
                {"role": "user", "content": "Who won silver?"},
                {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
                {"role": "user", "content": "How old is she?"},
            ],
        },
    },
}


class ChatCompletionRequest(BaseModel):
    """OpenAI's chat request. Sampling options (temperature, max_tokens, …) are accepted and ignored."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [example["value"] for example in CHAT_EXAMPLES.values()]},
    )
    model: str = Field(MODEL_ID, description="Any name is accepted; the answer always comes from `eventbot`")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


class CompletionMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: CompletionMessage
    finish_reason: Literal["stop"] = "stop"
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str = MODEL_ID
    choices: list[Choice]
    citations: list[Citation] = Field(description="Added to OpenAI's schema: the passages behind the `[n]` markers")


class Model(BaseModel):
    id: str = MODEL_ID
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "eventbot"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[Model]


def split_chat(messages: list[ChatMessage], settings: Settings) -> tuple[str, list[Turn]]:
    """The last user message is the question; earlier user and assistant messages are its history."""
    if messages[-1].role != "user":
        raise QuestionError("the last message must come from the user: it is the question")
    # Every earlier message counts toward the history limits, also those (system, tool…) the bot then ignores
    earlier = [Turn(role="user", content=m.text()) for m in messages[:-1]]
    check_question(settings, messages[-1].text(), earlier)
    history = [Turn(role=m.role, content=m.text()) for m in messages[:-1] if m.role in ("user", "assistant")]
    return messages[-1].text(), history


def word_pieces(text: str) -> list[str]:
    """Split text into words, each keeping its trailing whitespace: "".join(pieces) == text."""
    return re.findall(r"\S+\s*|\s+", text)


def sse(payload: dict | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


def stream_completion(answer: Answer, completion_id: str, created: int) -> Iterator[str]:
    """OpenAI `chat.completion.chunk` events: role, content pieces, a final chunk with citations, [DONE]."""

    def chunk(delta: dict, finish_reason: str | None = None, **extra: Any) -> str:
        return sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
                **extra,
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    for piece in word_pieces(answer.answer):
        yield chunk({"content": piece})
    yield chunk({}, "stop", citations=[c.model_dump() for c in answer.citations])
    yield sse("[DONE]")


@openai_router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        200: {
            "description": "A `chat.completion`, or with `stream: true` server-sent "
            "`chat.completion.chunk` events ending `data: [DONE]`",
            "content": {"text/event-stream": {}},
        }
    },
)
def chat_completions(
    body: Annotated[ChatCompletionRequest, Body(openapi_examples=CHAT_EXAMPLES)],
    bot: Annotated[ServedBot, Depends(get_bot)],
) -> Any:
    """OpenAI-compatible chat: the last user message is the question, earlier messages are its history.

    Example with the official client:

        from openai import OpenAI
        client = OpenAI(base_url="http://127.0.0.1:7860/v1", api_key="unused-unless-EVENTBOT_API_KEY")
        reply = client.chat.completions.create(
            model="eventbot", messages=[{"role": "user", "content": "Who won the gold medal?"}])
        print(reply.choices[0].message.content, reply.model_extra["citations"])

    The answer carries `[n]` markers; the response adds a top-level `citations` list (in a streamed answer,
    on the last chunk). System messages are ignored: the bot answers only from its documents.
    """
    question, history = split_chat(body.messages, bot.settings)
    answer = bot.ask(question, history)  # computed whole before anything is sent, so errors stay 4xx JSON
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if body.stream:
        return StreamingResponse(
            stream_completion(answer, completion_id, created),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return ChatCompletion(
        id=completion_id,
        created=created,
        choices=[Choice(message=CompletionMessage(content=answer.answer))],
        citations=answer.citations,
    )


@openai_router.get("/models", response_model=ModelList)
def list_models() -> ModelList:
    """The one model this server answers with: `eventbot`."""
    return ModelList(data=[Model()])


@openai_router.get("/models/{model_id}", response_model=Model, responses={404: {"description": "No such model"}})
def get_model(model_id: str) -> Model:
    """Details of `eventbot`, the only model."""
    if model_id != MODEL_ID:
        raise StarletteHTTPException(404, f"no model {model_id!r}; the only model is {MODEL_ID!r}")
    return Model()


# ---------------------------------------------------------------------------------------------- /api/documents

documents_router = APIRouter(
    prefix="/api",
    tags=["documents"],
    responses={
        403: {"description": "Changing the documents is off: no `EVENTBOT_API_KEY` and `EVENTBOT_UPLOADS` not `on`"},
        404: {"description": "No indexed document of that name"},
        409: {"description": "A document of that name is indexed already, or it is the last one"},
        413: {"description": "A file over `EVENTBOT_MAX_FILE_BYTES`"},
        415: {"description": "A file type other than .txt, .md, .html, .pdf"},
        422: {
            "description": "A file that is empty, binary, not UTF-8, an encrypted or image-only PDF; a name with a "
            "folder or a NUL in it; more than `EVENTBOT_MAX_UPLOAD_FILES` files"
        },
        503: {"description": "The index cannot be written (the Chroma server down): nothing changed"},
    },
)
UPLOAD_SLACK_BYTES = 1_000_000  # a multipart body's headers and boundaries, beyond its files
CHAT_UPLOAD_PATH = "/gradio_api/upload"  # where the chat (Gradio) sends a file


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


@documents_router.post("/documents", response_model=UploadReport)
def add_documents(
    bot: Annotated[ServedBot, Depends(get_bot)],
    library: Annotated[Library, Depends(get_library)],
    files: Annotated[list[UploadFile] | None, File(description="One or more .txt, .md, .html or .pdf files")] = None,
) -> UploadReport:
    """Add documents: the bot answers from them as soon as this returns.

    Example request:

        curl -s localhost:7860/api/documents -F files=@report.pdf -F files=@results.html

    All files go in, or none (any bad file: a 4xx naming it, and the index as it was). Each is kept under
    `EVENTBOT_UPLOADS_DIR` by its name, which must be new to the index.
    """
    limit = bot.settings.max_file_bytes
    added = library.add([Upload(f.filename, f.file.read(limit + 1), f.size) for f in files or []], then=bot.reload)
    return UploadReport(documents=[AddedDocument(**a.as_dict()) for a in added], index=IndexCounts(**library.counts()))


@documents_router.get("/documents", response_model=DocumentList)
def list_documents(
    bot: Annotated[ServedBot, Depends(get_bot)], library: Annotated[Library, Depends(get_library)]
) -> DocumentList:
    """The documents the bot answers from: name, bytes, chunks, when indexed, and whether bundled, uploaded or
    indexed from a folder."""
    return DocumentList(documents=documents(bot.bot, library.settings))


@documents_router.delete("/documents/{name}", response_model=DocumentList)
def remove_document(
    name: str, bot: Annotated[ServedBot, Depends(get_bot)], library: Annotated[Library, Depends(get_library)]
) -> DocumentList:
    """Remove a document from the index (an uploaded one's kept file too); the list after. The last document
    cannot be removed (409)."""
    library.remove(name, then=bot.reload)
    return DocumentList(documents=documents(bot.bot, library.settings))


# ---------------------------------------------------------------------------------------------- the app


def build_api(bot: EventBot | ServedBot) -> FastAPI:
    """A FastAPI app with every route above, answering with `bot` (opened once, by the caller)."""
    app = DocumentedFastAPI(
        title="eventbot",
        version="0.1.0",
        description="Answers questions about an event from the documents that describe it, citing them "
        "verbatim. The chat UI is at `/`. When the server sets `EVENTBOT_API_KEY`, `/api/*` and "
        "`/v1/*` need `Authorization: Bearer <key>`.",
    )
    app.state.bot = bot if isinstance(bot, ServedBot) else ServedBot(bot)
    settings = app.state.bot.settings
    app.state.library = Library(settings, store=lambda: app.state.bot.bot.store)  # the serving bot's own client
    app.state.library.recover()  # an upload the last run did not finish is rolled back
    install_error_handlers(app)
    upload_limit = settings.max_upload_files * settings.max_file_bytes + UPLOAD_SLACK_BYTES
    larger = {f"{documents_router.prefix}/documents": upload_limit}
    try:
        app.state.library.check_allowed()
        larger[CHAT_UPLOAD_PATH] = upload_limit  # the chat's Documents panel
    except UploadsOffError:
        pass  # the chat takes no files
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes, larger=larger)
    if app.state.bot.settings.rate_limit:  # added last, so it runs first: a refused request costs nothing more
        app.add_middleware(RateLimit, per_minute=app.state.bot.settings.rate_limit)
    app.include_router(health)
    app.include_router(ask_router, dependencies=[Depends(require_api_key)])
    app.include_router(openai_router, dependencies=[Depends(require_api_key)])
    app.include_router(documents_router, dependencies=[Depends(require_api_key)])
    add_method_not_allowed(app, [health, ask_router, openai_router, documents_router])
    return app


def add_method_not_allowed(app: FastAPI, routers: list[APIRouter]) -> None:
    """405 with `Allow` for a known API path asked with another method (else the chat mounted at `/`, which
    catches whatever no route matched, would answer 404)."""
    allowed: dict[str, set[str]] = {}
    for route in (route for router in routers for route in router.routes):
        if isinstance(route, APIRoute):
            allowed.setdefault(route.path, set()).update(route.methods)
    for path, methods in allowed.items():
        others = sorted({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} - methods)
        app.add_api_route(path, _refuse_method(", ".join(sorted(methods))), methods=others, include_in_schema=False)


def _refuse_method(allow: str) -> Callable[[], None]:
    def method_not_allowed() -> None:
        raise StarletteHTTPException(405, f"method not allowed here; use {allow}", headers={"Allow": allow})

    return method_not_allowed
