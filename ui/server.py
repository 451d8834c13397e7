"""One server, composed here: the native API (ui.api) and the OpenAI-compatible one (ui.openai_api) behind the
limits of ui.middleware and the error handlers of ui.errors, with the Gradio chat (ui.chat) mounted at `/`, all
sharing one bot."""

import contextlib
import ctypes
import os
import secrets
import socket
import sys
from collections.abc import Callable

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import gradio as gr  # noqa: E402
import uvicorn  # noqa: E402
from fastapi import APIRouter, Depends, FastAPI  # noqa: E402
from fastapi.routing import APIRoute  # noqa: E402

# Swagger UI and ReDoc served from the package instead of a CDN, so /docs works offline
from fastapi_offline import FastAPIOffline as DocumentedFastAPI  # noqa: E402
from gradio.routes import App as GradioApp  # noqa: E402
from starlette.exceptions import HTTPException as StarletteHTTPException  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from bot.conversations import ConversationStore  # noqa: E402
from bot.errors import UploadsOffError  # noqa: E402
from bot.event_bot import EventBot, use_threads  # noqa: E402
from bot.feedback import FeedbackStore  # noqa: E402
from bot.library import Library  # noqa: E402
from bot.serving import ServedBot  # noqa: E402
from ui.api import ask_router, documents_router, health, require_api_key  # noqa: E402
from ui.chat import CSS, HEAD, THEME, build_chat  # noqa: E402
from ui.collections_api import collections_router  # noqa: E402
from ui.conversations_api import conversations_router  # noqa: E402
from ui.errors import install_error_handlers  # noqa: E402
from ui.feedback_api import feedback_router  # noqa: E402
from ui.middleware import BodySizeLimit, LoginLimit, RateLimit  # noqa: E402
from ui.openai_api import openai_router  # noqa: E402

M_ARENA_MAX = -8  # glibc's mallopt parameter
UPLOAD_SLACK_BYTES = 1_000_000  # a multipart body's headers and boundaries, beyond its files
CHAT_UPLOAD_PATH = "/gradio_api/upload"  # where the chat (Gradio) sends a file


def create_app(bot: EventBot | ServedBot) -> FastAPI:
    """The API routes first, then the chat at `/` (a mount at `/` catches only what no route matched)."""
    use_threads(bot.settings.serve_torch_threads)  # before the warm-up answer: requests run in parallel threads
    served = bot if isinstance(bot, ServedBot) else ServedBot(bot)
    app = build_api(served)
    key = served.settings.api_key
    library: Library = app.state.library
    try:
        library.check_allowed()
        largest_upload = max(served.settings.max_body_bytes, served.settings.max_file_bytes)
    except UploadsOffError:
        largest_upload = served.settings.max_body_bytes
    gr.mount_gradio_app(
        app,
        build_chat(served, library, app.state.feedback, app.state.conversations),
        path="/",
        # With an API key the chat asks for it too (Gradio's login page: any user name, the key as password);
        # every Gradio route that runs the chat or takes a file then needs that login.
        auth=(lambda _user, password: secrets.compare_digest(password.encode(), key.encode())) if key else None,
        auth_message="This server needs its API key (EVENTBOT_API_KEY): type it as the password, any user name.",
        max_file_size=largest_upload,
        theme=THEME,
        css=CSS,
        footer_links=["gradio", "settings"],
        run_history=False,
        show_error=True,
        ssr_mode=False,
        mcp_server=False,
        head=HEAD,  # the viewport, and the script that opens a citation's passage
    )
    if key and served.settings.login_attempts:  # added last, so it runs first
        app.add_middleware(LoginLimit, attempts=served.settings.login_attempts)
    # Each open chat tab holds a heartbeat stream until Gradio's stop event is set: set it when shutting down
    chats = [r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp)]
    app.state.before_shutdown = [chat.stop_event.set for chat in chats] + [served.close]
    return app


def build_api(bot: EventBot | ServedBot) -> FastAPI:
    """The HTTP API (native and OpenAI-compatible) with its limits and error handlers, answering with `bot`
    (opened once, by the caller)."""
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
    app.state.feedback = FeedbackStore(settings.feedback_path, settings)  # the API's and the chat's thumbs
    app.state.conversations = ConversationStore(settings.conversations_path)  # the chat's, kept
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
    app.include_router(feedback_router, dependencies=[Depends(require_api_key)])
    app.include_router(conversations_router, dependencies=[Depends(require_api_key)])
    app.include_router(collections_router, dependencies=[Depends(require_api_key)])
    routers = [
        *(health, ask_router, openai_router, documents_router),
        *(feedback_router, conversations_router, collections_router),
    ]
    add_method_not_allowed(app, routers)
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


def limit_malloc_arenas(arenas: int) -> None:
    """Cap glibc's malloc arenas, first thing when serving: in this process from now on, and (by the environment)
    in the worker processes it starts. By default glibc gives threads up to 8 arenas per core, each keeping freed
    memory of its own: at 21,000 chunks under load a server's peak RSS went from 1,114 MB to 955 MB with 2, at the
    same requests/s. 0 leaves glibc's default."""
    if arenas and sys.platform.startswith("linux"):
        os.environ.setdefault("MALLOC_ARENA_MAX", str(arenas))
        with contextlib.suppress(OSError, AttributeError):  # not glibc (musl): nothing to cap
            ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket for uvicorn; raises OSError when the address is taken. Port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    sock.listen(2048)  # connections wait in the backlog from now on, not refused until uvicorn has started
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Server(uvicorn.Server):
    """uvicorn, closing the chat's long-lived streams first so that Ctrl-C stops the server at once."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for hook in getattr(self.config.app.state, "before_shutdown", []):
            hook()
        await super().shutdown(sockets)


def make_server(app: FastAPI, log_level: str = "warning") -> uvicorn.Server:
    return Server(uvicorn.Config(app, log_level=log_level, timeout_graceful_shutdown=5))


# ------------------------------------------------------------------------ several worker processes (--workers N)


def app_from_env() -> FastAPI:
    """The app of one worker of `eventbot serve --workers N`, made inside the worker process: each worker opens
    its own bot (embedding model, store, warm-up) from the environment's settings (`EVENTBOT_*`, `.env`)."""
    from bot.settings import Settings

    return create_app(EventBot(Settings()))


def serve_workers(sock: socket.socket, workers: int, log_level: str = "warning") -> None:
    """`workers` processes accepting on one listening socket; uvicorn's supervisor restarts a worker that dies
    and Ctrl-C stops them all. Each worker loads the bot itself: start-up and memory are per worker."""
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(
        "ui.server:app_from_env", factory=True, workers=workers, log_level=log_level, timeout_graceful_shutdown=5
    )
    Multiprocess(config, sockets=[sock]).run()
