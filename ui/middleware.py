"""ASGI middleware of the server, each a limit that answers before the app does: the size of a request body
(413), requests a minute per client on the API (429), failed chat logins per client (429)."""

import math
import time

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGIN_WINDOW_S = 300  # failed chat logins are counted over this many seconds (EVENTBOT_LOGIN_ATTEMPTS of them)


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


class LoginLimit:
    """429 with `Retry-After` on the chat's login (Gradio's `POST /login`, whose password is the API key) for a
    client (by IP address) that failed it `attempts` times in the last `window_s` seconds: Gradio has no limit of
    its own, so the key could be guessed there at the speed of the network. A failed login is Gradio's 400 (or a
    401). An attempt counts as failed from when it arrives (a moving window of the `limits` library, in this
    process's memory) until its response says otherwise, so a burst of parallel guesses is held to the limit too;
    a login that works clears its client's count. Once refused, the right key is refused as well until the window
    has passed. Behind a proxy every client has the proxy's address."""

    PATHS = ("/login", "/login/")
    FAILED = (400, 401)

    def __init__(self, app: ASGIApp, attempts: int, window_s: float = LOGIN_WINDOW_S):
        from limits import RateLimitItemPerSecond
        from limits.storage import MemoryStorage
        from limits.strategies import MovingWindowRateLimiter

        self.app, self.attempts, self.window_s = app, attempts, window_s
        self.item = RateLimitItemPerSecond(attempts, math.ceil(window_s))
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.PATHS:
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown",))[0]
        if not self.limiter.hit(self.item, client):
            reset_at = self.limiter.get_window_stats(self.item, client).reset_time
            retry = max(1, math.ceil(reset_at - time.time()))
            detail = (
                f"too many failed logins from this address: at most {self.attempts} in {self.window_s:g} s "
                f"(EVENTBOT_LOGIN_ATTEMPTS); try again in {retry} s"
            )
            await JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(retry)})(
                scope, receive, send
            )
            return

        async def watched_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] not in self.FAILED:
                self.limiter.clear(self.item, client)  # not a failed login after all
            await send(message)

        await self.app(scope, receive, watched_send)
