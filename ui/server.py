"""One server: the HTTP API (ui.api) with the Gradio chat (ui.chat) mounted at `/`, sharing one bot."""

import os
import secrets
import socket

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import gradio as gr  # noqa: E402
import uvicorn  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from gradio.routes import App as GradioApp  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from bot.served import ServedBot  # noqa: E402
from bot.service import EventBot, use_threads  # noqa: E402
from ui.api import build_api  # noqa: E402
from ui.chat import CSS, THEME, build_chat  # noqa: E402


def create_app(bot: EventBot | ServedBot) -> FastAPI:
    """The API routes first, then the chat at `/` (a mount at `/` catches only what no route matched)."""
    use_threads(bot.settings.serve_torch_threads)  # before the warm-up answer: requests run in parallel threads
    served = bot if isinstance(bot, ServedBot) else ServedBot(bot)
    app = build_api(served)
    key = served.settings.api_key
    gr.mount_gradio_app(
        app,
        build_chat(served),
        path="/",
        # With an API key the chat asks for it too (Gradio's login page: any user name, the key as password);
        # every Gradio route that runs the chat or takes a file then needs that login.
        auth=(lambda _user, password: secrets.compare_digest(password.encode(), key.encode())) if key else None,
        auth_message="This server needs its API key (EVENTBOT_API_KEY): type it as the password, any user name.",
        max_file_size=served.settings.max_body_bytes,
        theme=THEME,
        css=CSS,
        footer_links=["gradio", "settings"],
        run_history=False,
        show_error=True,
        ssr_mode=False,
        mcp_server=False,
        head='<meta name="viewport" content="width=device-width, initial-scale=1">',
    )
    # Each open chat tab holds a heartbeat stream until Gradio's stop event is set: set it when shutting down
    chats = [r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp)]
    app.state.before_shutdown = [chat.stop_event.set for chat in chats] + [served.close]
    return app


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
