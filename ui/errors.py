"""Errors to HTTP statuses, in one place: every error is JSON `{"detail": …}`, a 4xx for what the client got wrong,
503 when a store or service cannot answer now, 500 (logged) for a fault of the server itself."""

from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from bot.errors import (
    ConflictError,
    EventbotError,
    InputError,
    NotFoundError,
    PermissionDeniedError,
    TooLargeError,
    UnavailableError,
    UnsupportedError,
)

# A branch of the error tree → its status; an error takes that of its nearest branch here. SetupError is not here:
# the server cannot work as configured, a fault of its own, so it is a 500 with its traceback in the log.
STATUS: dict[type[EventbotError], int] = {
    PermissionDeniedError: 403,  # changing the documents is off
    NotFoundError: 404,
    ConflictError: 409,
    TooLargeError: 413,
    UnsupportedError: 415,
    InputError: 422,  # a bad question or history; a file empty, binary, not UTF-8, an unreadable PDF; a bad name
    UnavailableError: 503,  # the store down, stalled or not built yet; the bot not warmed up
}

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "The body cannot be read at all (not UTF-8 text)"},
    401: {"description": "Missing or wrong API key (only when `EVENTBOT_API_KEY` is set)"},
    413: {"description": "The request body is over `EVENTBOT_MAX_BODY_BYTES`"},
    422: {"description": "The request is malformed: bad JSON, wrong types, empty or over-long question or history"},
    429: {
        "description": "Too many requests from this client (`EVENTBOT_RATE_LIMIT` a minute); `Retry-After` says "
        "when to try again"
    },
    503: {
        "description": "The index cannot be read (not built yet, the Chroma server down or stalled past "
        "`EVENTBOT_STORE_TIMEOUT_S`), or more questions wait for the LLM than `EVENTBOT_LLM_QUEUE` (with "
        "`Retry-After`)"
    },
}


def status_of(exc: EventbotError) -> int | None:
    """The HTTP status of `exc`: that of its nearest branch in STATUS; None for a server fault (a SetupError)."""
    return next((STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS), None)


def detail_of(exc: EventbotError) -> str:
    """The one-line reason sent as `detail`."""
    if isinstance(exc, UnavailableError):
        return store_reason(exc)
    return " ".join(str(exc).split())


def store_reason(exc: Exception) -> str:
    """Why the store could not be read, saying so plainly when it was a timeout."""
    cause = exc.__cause__
    while cause is not None and not isinstance(cause, httpx.TimeoutException | TimeoutError):
        cause = cause.__cause__
    if cause is not None and "EVENTBOT_STORE_TIMEOUT_S" not in str(exc):
        return f"{exc} (the store did not answer within EVENTBOT_STORE_TIMEOUT_S)"
    return str(exc)


async def eventbot_error(request: Request, exc: EventbotError) -> JSONResponse:
    retry_after = getattr(exc, "retry_after_s", None)  # the LLM's queue is full (LLMBusyError)
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return JSONResponse({"detail": detail_of(exc)}, status_code=status_of(exc) or 500, headers=headers)


async def server_fault(request: Request, exc: Exception) -> JSONResponse:
    # Starlette re-raises it after this response, so uvicorn logs the traceback
    return JSONResponse({"detail": f"internal error ({type(exc).__name__}); see the server log"}, status_code=500)


async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    # FastAPI's shape ({"detail": [{"loc", "msg", "type"}]}) without echoing the (possibly huge) input
    errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()]
    return JSONResponse({"detail": jsonable_encoder(errors)}, status_code=422)


def install_error_handlers(app: FastAPI) -> None:
    """The handlers of every error: each branch in STATUS, a malformed request (422) and anything else (500).
    Starlette picks the handler of an error's nearest class that has one, so an error outside STATUS (a
    SetupError) reaches `server_fault`."""
    for branch in STATUS:
        app.add_exception_handler(branch, eventbot_error)
    app.add_exception_handler(Exception, server_fault)
    app.add_exception_handler(RequestValidationError, invalid_request)
