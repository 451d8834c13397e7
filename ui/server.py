"""One server: the HTTP API (ui.api) with the Gradio chat (ui.chat) mounted at `/`, sharing one bot."""

import contextlib
import ctypes
import math
import os
import secrets
import socket
import sys
import time

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import gradio as gr  # noqa: E402
import uvicorn  # noqa: E402
from cachetools import TTLCache  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from gradio.routes import App as GradioApp  # noqa: E402
from starlette.routing import Mount  # noqa: E402
from starlette.types import ASGIApp, Message, Receive, Scope, Send  # noqa: E402

from bot.errors import UploadsOffError  # noqa: E402
from bot.library import Library  # noqa: E402
from bot.served import ServedBot  # noqa: E402
from bot.service import EventBot, use_threads  # noqa: E402
from ui.api import build_api  # noqa: E402
from ui.chat import CSS, THEME, build_chat  # noqa: E402

M_ARENA_MAX = -8  # glibc's mallopt parameter
LOGIN_WINDOW_S = 300  # failed chat logins are counted over this many seconds (EVENTBOT_LOGIN_ATTEMPTS of them)


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
        build_chat(served, library),
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
        head='<meta name="viewport" content="width=device-width, initial-scale=1">',
    )
    if key and served.settings.login_attempts:  # added last, so it runs first
        app.add_middleware(LoginLimit, attempts=served.settings.login_attempts)
    # Each open chat tab holds a heartbeat stream until Gradio's stop event is set: set it when shutting down
    chats = [r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp)]
    app.state.before_shutdown = [chat.stop_event.set for chat in chats] + [served.close]
    return app


def limit_malloc_arenas(arenas: int) -> None:
    """Cap glibc's malloc arenas, first thing when serving: in this process from now on, and (by the environment)
    in the worker processes it starts. By default glibc gives threads up to 8 arenas per core, each keeping freed
    memory of its own: at 21,000 chunks under load a server's peak RSS went from 1,114 MB to 955 MB with 2, at the
    same requests/s. 0 leaves glibc's default."""
    if arenas and sys.platform.startswith("linux"):
        os.environ.setdefault("MALLOC_ARENA_MAX", str(arenas))
        with contextlib.suppress(OSError, AttributeError):  # not glibc (musl): nothing to cap
            ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)


class LoginLimit:
    """429 with `Retry-After` on the chat's login (Gradio's `POST /login`, whose password is the API key) for a
    client (by IP address) that failed it `attempts` times in the last `window_s` seconds: Gradio has no limit of
    its own, so the key could be guessed there at the speed of the network. A failed login is Gradio's 400 (or a
    401). An attempt counts as failed from when it arrives until its response says otherwise, so a burst of
    parallel guesses is held to the limit too; once refused, the right key is refused as well until the window
    has passed. Counted in this process's memory: behind a proxy every client has the proxy's address."""

    PATHS = ("/login", "/login/")
    FAILED = (400, 401)

    def __init__(self, app: ASGIApp, attempts: int, window_s: float = LOGIN_WINDOW_S):
        self.app, self.attempts, self.window_s = app, attempts, window_s
        # client → times of its failed attempts; a client's entry expires a window after its last attempt
        self.failures: TTLCache[str, list[float]] = TTLCache(maxsize=100_000, ttl=window_s, timer=time.monotonic)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.PATHS:
            await self.app(scope, receive, send)
            return
        client, now = (scope.get("client") or ("unknown",))[0], time.monotonic()
        failed = self.failures.get(client, [])
        failed[:] = [t for t in failed if now - t < self.window_s]
        if len(failed) >= self.attempts:
            retry = max(1, math.ceil(failed[0] + self.window_s - now))
            detail = (
                f"too many failed logins from this address: at most {self.attempts} in {self.window_s:g} s "
                f"(EVENTBOT_LOGIN_ATTEMPTS); try again in {retry} s"
            )
            await JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(retry)})(
                scope, receive, send
            )
            return
        failed.append(now)
        self.failures[client] = failed  # (re)starts the entry's expiry

        async def watched_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] not in self.FAILED and now in failed:
                failed.remove(now)  # not a failed login after all
            await send(message)

        await self.app(scope, receive, watched_send)


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
