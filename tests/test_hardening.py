"""Issue 11: no back door, bad inputs refused plainly. A real uvicorn on loopback, real HTTP clients, real index."""

import json
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from gradio.routes import App as GradioApp
from starlette.routing import Mount

from bot.serving import ServedBot
from tests.test_api import API_KEY, GOLD, running
from ui.chat_common import from_text, message_text
from ui.server import create_app


def chat_fn_index(app) -> int:
    """The Gradio event that answers a question in the chat (what the browser's queue/join names)."""
    [chat] = [r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp)]
    return min(i for i, fn in chat.get_blocks().fns.items() if fn.name == "answer_last")


@pytest.fixture(scope="module")
def secured(bot, settings) -> Iterator[tuple[str, int]]:
    # with the key, the chat takes documents: its upload route is capped at max_upload_files × max_file_bytes + slack
    limits = {"api_key": API_KEY, "max_file_bytes": 500_000, "max_upload_files": 1}
    app = create_app(ServedBot(bot, settings.model_copy(update=limits)))
    with running(app) as url:
        yield url, chat_fn_index(app)


def join_body(fn_index: int, session: str) -> dict:
    messages = [{"role": "user", "content": [{"type": "text", "text": GOLD}]}]
    # the messages, the session's answers (a gr.State: kept by the server, sent as null), the collection picked
    return {
        "data": [messages, None, None],
        "fn_index": fn_index,
        "session_hash": session,
        "event_data": None,
        "trigger_id": None,
    }


def chat_answer(http: httpx.Client, fn_index: int, session: str) -> str:
    """Ask through the chat's own Gradio routes, as the browser does; the final answer text."""
    r = http.post("/gradio_api/queue/join", json=join_body(fn_index, session))
    assert r.status_code == 200, r.text
    with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event.get("msg") == "process_completed":
                    assert event.get("success"), event
                    messages = event["output"]["data"][0]
                    return message_text(next(m["content"] for m in messages if m["role"] == "assistant"))
    raise AssertionError("the chat stream ended without an answer")


def test_gradio_routes_need_the_key_when_one_is_set(secured):
    """Issue 11.1: with EVENTBOT_API_KEY set, the chat's queue and upload routes refuse keyless callers."""
    url, fn_index = secured
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post("/gradio_api/queue/join", json=join_body(fn_index, "keyless1"))
        assert r.status_code == 401, r.text
        assert "event_id" not in r.text
        r = http.post("/gradio_api/upload", files={"files": ("note.txt", b"hello", "text/plain")})
        assert r.status_code == 401, r.text
        assert http.get("/config").status_code == 401
        wrong = http.post("/login", data={"username": "me", "password": "wrong"})
        assert wrong.status_code == 400
        assert http.post("/gradio_api/queue/join", json=join_body(fn_index, "keyless2")).status_code == 401


def test_the_key_opens_the_chat_and_uploads_are_capped(secured):
    url, fn_index = secured
    with httpx.Client(base_url=url, timeout=60) as http:
        assert http.post("/login", data={"username": "anyone", "password": API_KEY}).status_code == 200
        assert "Alysa Liu" in chat_answer(http, fn_index, "keyed1")
        small = http.post("/gradio_api/upload", files={"files": ("note.txt", b"hello", "text/plain")})
        assert small.status_code == 200, small.text
        big = http.post("/gradio_api/upload", files={"files": ("big.txt", b"x" * 2_000_000, "text/plain")})
        assert big.status_code == 413  # over 1 × 500 KB + 1 MB of multipart slack


def test_failed_chat_logins_are_limited_per_client(bot, settings):
    """Issue 17.6: the chat's login (the API key as password) takes EVENTBOT_LOGIN_ATTEMPTS failures from one client
    address in 5 minutes, then 429 with Retry-After, for the right key too (before: unlimited guesses). A login
    that works is not counted; a burst of parallel guesses is held to the limit; other clients are not held back."""
    served = ServedBot(bot, settings.model_copy(update={"api_key": API_KEY, "login_attempts": 3}), watch=False)

    def login(http: httpx.Client, password: str) -> httpx.Response:
        return http.post("/login", data={"username": "me", "password": password})

    def client(url: str, address: str) -> httpx.Client:
        return httpx.Client(base_url=url, timeout=60, transport=httpx.HTTPTransport(local_address=address))

    with running(create_app(served)) as url:
        with client(url, "127.0.0.1") as http:
            assert login(http, API_KEY).status_code == 200
            assert [login(http, "guess").status_code for _ in range(3)] == [400, 400, 400]
            for password in ("guess", API_KEY):
                r = login(http, password)
                assert r.status_code == 429, r.text
                assert 1 <= int(r.headers["Retry-After"]) <= 300 and "EVENTBOT_LOGIN_ATTEMPTS" in r.json()["detail"]
        with client(url, "127.0.0.2") as http:
            assert login(http, API_KEY).status_code == 200
            with ThreadPoolExecutor(8) as pool:
                burst = Counter(pool.map(lambda _: login(http, "guess").status_code, range(8)))
            assert burst == {400: 3, 429: 5}


def test_chat_without_a_key_needs_no_login(base_url_and_fn):
    url, fn_index = base_url_and_fn
    with httpx.Client(base_url=url, timeout=60) as http:
        assert "Alysa Liu" in chat_answer(http, fn_index, "open1")


@pytest.fixture(scope="module")
def base_url_and_fn(bot, settings) -> Iterator[tuple[str, int]]:
    app = create_app(ServedBot(bot, settings.model_copy(update={"api_key": None})))
    with running(app) as url:
        yield url, chat_fn_index(app)


LONE_SURROGATE_BODIES = [
    ("/api/ask", '{"question": "Who won\\ud800 the gold medal?"}'),
    ("/api/ask", '{"question": "How old is she?", "history": [{"role": "user", "content": "Who won \\udfff?"}]}'),
    ("/v1/chat/completions", '{"model": "eventbot", "messages": [{"role": "user", "content": "Who won\\ud800?"}]}'),
    (
        "/v1/chat/completions",
        '{"model": "eventbot", "stream": true, "messages": [{"role": "user", "content": [{"type": "text", '
        '"text": "\\ud800"}]}]}',
    ),
]


@pytest.mark.parametrize(("path", "raw"), LONE_SURROGATE_BODIES)
def test_lone_surrogate_is_422(base_url_and_fn, path, raw):
    """Issue 11.6: invalid Unicode in a question or its history is the client's fault: 422 naming it."""
    url, _ = base_url_and_fn
    r = httpx.post(url + path, content=raw, headers={"Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 422, r.text
    assert "unicode" in r.json()["detail"].lower()


def test_lone_surrogate_in_the_chat_is_refused_plainly(base_url_and_fn):
    url, fn_index = base_url_and_fn
    raw = json.dumps(join_body(fn_index, "surrogate1")).replace(GOLD, "Who won\\ud800?")
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post("/gradio_api/queue/join", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": "surrogate1"}) as stream:
            events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert not [e for e in events if e["msg"] == "unexpected_error"], events
    [last] = [e for e in events if e["msg"] == "process_completed"]
    assert last["success"], last
    user, reply = last["output"]["data"][0]
    assert "\ufffd" in message_text(user["content"])
    assert "not valid Unicode" in from_text(message_text(reply["content"]))


def test_a_body_over_the_cap_is_413_before_parsing(base_url_and_fn):
    """Issue 11.7: EVENTBOT_MAX_BODY_BYTES (1 MB) is enforced before the JSON is read, declared or chunked."""
    url, _ = base_url_and_fn
    padding = "x" * 1_100_000
    body = json.dumps({"question": GOLD, "history": [{"role": "user", "content": padding}]})
    r = httpx.post(f"{url}/api/ask", content=body, headers={"Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 413 and "EVENTBOT_MAX_BODY_BYTES" in r.json()["detail"]

    def chunked():  # no Content-Length: counted as it arrives
        yield body[:500_000].encode()
        yield body[500_000:].encode()

    r = httpx.post(f"{url}/v1/chat/completions", content=chunked(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    small = httpx.post(f"{url}/api/ask", json={"question": GOLD}, timeout=60)
    assert small.status_code == 200  # the server is fine afterwards


def test_v1_counts_every_earlier_message_toward_the_history_limits(base_url_and_fn):
    """Issue 11.7: system messages are ignored for answering but not for the caps (count and length)."""
    url, _ = base_url_and_fn
    question = {"role": "user", "content": GOLD}
    many = [{"role": "system", "content": "Be brief."}] * 41 + [question]
    r = httpx.post(f"{url}/v1/chat/completions", json={"messages": many}, timeout=60)
    assert r.status_code == 422 and "history" in r.json()["detail"]
    long = [{"role": "system", "content": "Be brief. " * 1000}, question]
    r = httpx.post(f"{url}/v1/chat/completions", json={"messages": long}, timeout=60)
    assert r.status_code == 422 and "limit" in r.json()["detail"]
    fine = [{"role": "system", "content": "Be brief."}, question]
    assert httpx.post(f"{url}/v1/chat/completions", json={"messages": fine}, timeout=60).status_code == 200


def test_unknown_fields_in_history_items_are_422(base_url_and_fn):
    url, _ = base_url_and_fn
    history = [{"role": "user", "content": "Who won silver?", "name": "x"}]
    r = httpx.post(f"{url}/api/ask", json={"question": GOLD, "history": history}, timeout=60)
    assert r.status_code == 422 and "extra" in json.dumps(r.json()["detail"]).lower()


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("GET", "/api/ask", "POST"), ("PUT", "/api/ask", "POST"), ("GET", "/v1/chat/completions", "POST"),
     ("POST", "/v1/models", "GET"), ("DELETE", "/healthz", "GET")],
)  # fmt: skip
def test_wrong_method_is_405_with_allow(base_url_and_fn, method, path, allow):
    url, _ = base_url_and_fn
    r = httpx.request(method, url + path, timeout=60)
    assert r.status_code == 405 and "detail" in r.json()
    assert allow in r.headers["allow"]
