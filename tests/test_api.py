"""The HTTP API through a real uvicorn on a free loopback port, with the real index, models and clients."""

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai
import pytest

from bot.serving import ServedBot
from bot.types import Answer, Turn
from tests.conftest import ARTICLE, SAFETY_TIMEOUT_S, assert_not_answered, run_cli, serve_process
from ui.chat import respond
from ui.chat_common import from_text, to_turns
from ui.server import bind, create_app, make_server, url_of

ARTICLE_TEXT = ARTICLE.read_text(encoding="utf-8")
GOLD = "Who consoled Sakamoto?"
SILVER_TURNS = [
    {"role": "user", "content": "Who won silver?"},
    {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
]
API_KEY = "test-key-7f3a"


@contextmanager
def running(app) -> Iterator[str]:
    """Serve `app` with uvicorn in a background thread on a free loopback port; yield its base URL."""
    sock = bind("127.0.0.1", 0)
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + SAFETY_TIMEOUT_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def served(bot, settings) -> ServedBot:
    return ServedBot(bot, settings.model_copy(update={"api_key": None}))


@pytest.fixture(scope="module")
def base_url(served) -> Iterator[str]:
    with running(create_app(served)) as url:
        yield url


@pytest.fixture(scope="module")
def secured_url(bot, settings) -> Iterator[str]:
    with running(create_app(ServedBot(bot, settings.model_copy(update={"api_key": API_KEY})))) as url:
        yield url


@pytest.fixture
def http(base_url) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


@pytest.fixture
def client(base_url) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0, timeout=60)


def check_cited(text: str, citations: list) -> None:
    """Every citation quotes the article verbatim, and every [n] marker in the text has its citation."""
    numbers = {c["n"] if isinstance(c, dict) else c.n for c in citations}
    for c in citations:
        quote = c["quote"] if isinstance(c, dict) else c.quote
        assert quote and quote in ARTICLE_TEXT
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    assert markers and markers <= numbers


# ---------------------------------------------------------------------------------------------- /healthz, /api/ask


def test_healthz(http):
    r = http.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["documents"] == 1 and body["chunks"] > 1


def test_ask_answers_and_cites(http):
    r = http.post("/api/ask", json={"question": GOLD})
    assert r.status_code == 200, r.text
    answer = Answer.model_validate(r.json())
    assert answer.question == GOLD and not answer.abstained
    assert "Alysa Liu" in answer.answer
    check_cited(answer.answer, answer.citations)
    assert answer.contexts and all(c.text in ARTICLE_TEXT for c in answer.contexts)
    assert set(r.json()) >= {
        "question",
        "answer",
        "abstained",
        "citations",
        "contexts",
        "backend",
        "guard",
        "standalone_question",
        "timings_ms",
    }


def test_history_passes_through(http, bot):
    question = "How old is she?"
    r = http.post("/api/ask", json={"question": question, "history": SILVER_TURNS})
    assert r.status_code == 200, r.text
    expected = bot.ask(question, [Turn(**t) for t in SILVER_TURNS])
    got = r.json()
    assert got["standalone_question"] == expected.standalone_question
    assert got["answer"] == expected.answer
    assert [c["quote"] for c in got["citations"]] == [c.quote for c in expected.citations]


def test_unanswerable_question_abstains_with_200(http):
    r = http.post("/api/ask", json={"question": "What did Amber Glenn eat for breakfast?"})
    assert r.status_code == 200
    assert_not_answered(r.json())


LONG = "word " * 1000  # 5000 characters, over the 2000 default


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"question": "Who won', "json"),
        ("[1, 2]", "dictionary"),
        ("{}", "required"),
        ('{"question": 42}', "string"),
        ('{"question": null}', "string"),
        ('{"question": "Who won?", "history": "none"}', "list"),
        ('{"question": "Who won?", "history": [{"role": "robot", "content": "hi"}]}', "user"),
        ('{"question": "Who won?", "history": [{"role": "user"}]}', "required"),
        ('{"question": "Who won?", "colour": "blue"}', "extra"),
        ('{"question": ""}', "empty"),
        ('{"question": "   \\n "}', "empty"),
        (json.dumps({"question": LONG}), "limit"),
        (json.dumps({"question": "Who won?", "history": [{"role": "user", "content": "hi"}] * 41}), "history"),
        (json.dumps({"question": "Who won?", "history": [{"role": "user", "content": LONG * 2}]}), "history"),
    ],
)
def test_bad_input_is_4xx_json_naming_the_problem(http, content, problem):
    r = http.post("/api/ask", content=content, headers={"Content-Type": "application/json"})
    assert 400 <= r.status_code < 500, r.text
    assert problem in json.dumps(r.json()["detail"]).lower()


@pytest.mark.parametrize("question", ["\u0000\u0001", "\u0000 \u200b\n\u007f"])
def test_control_characters_only_are_an_empty_question(http, question):
    """Issue 17.6: a question of control (and invisible format) characters only is empty: 422 on /api and /v1, as
    for "" (before: 200, an answer to nothing)."""
    r = http.post("/api/ask", json={"question": question})
    assert r.status_code == 422 and "empty" in r.json()["detail"], r.text
    r = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": question}]})
    assert r.status_code == 422 and "empty" in r.json()["detail"], r.text


def test_wrong_content_type_and_method_are_4xx(http):
    assert http.post("/api/ask", data={"question": GOLD}).status_code == 422
    r = http.get("/api/ask")  # the UI mounted at / answers what no API route takes: a JSON 404
    assert r.status_code in (404, 405) and "detail" in r.json()


def test_docs_list_every_route_with_examples(http):
    spec = http.get("/openapi.json").json()
    assert {"/healthz", "/api/ask", "/v1/chat/completions", "/v1/models"} <= set(spec["paths"])
    assert spec["components"]["schemas"]["AskRequest"]["examples"]
    assert spec["components"]["schemas"]["ChatCompletionRequest"]["examples"]
    assert http.get("/docs").status_code == 200


def test_docs_work_offline(http):
    pytest.importorskip("fastapi_offline", reason="fastapi-offline serves Swagger UI without a CDN")
    assert "//cdn" not in http.get("/docs").text
    assert http.get("/static-offline-docs/swagger-ui-bundle.js").status_code == 200


def test_chat_ui_is_served_at_root(http):
    r = http.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]


# ---------------------------------------------------------------------------------------------- /v1 (OpenAI clients)


def test_openai_client_plain(client):
    reply = client.chat.completions.create(model="eventbot", messages=[{"role": "user", "content": GOLD}])
    assert reply.object == "chat.completion" and reply.model == "eventbot"
    [choice] = reply.choices
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert "Alysa Liu" in choice.message.content
    check_cited(choice.message.content, reply.model_extra["citations"])


def test_openai_client_streamed(client):
    plain = client.chat.completions.create(model="eventbot", messages=[{"role": "user", "content": GOLD}])
    chunks = list(
        client.chat.completions.create(model="eventbot", messages=[{"role": "user", "content": GOLD}], stream=True)
    )
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == plain.choices[0].message.content
    assert len([c for c in chunks if c.choices[0].delta.content]) > 1  # streamed in pieces, not one lump
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["citations"] == plain.model_extra["citations"]


def test_raw_stream_is_sse_ending_with_done(http):
    body = {"model": "eventbot", "stream": True, "messages": [{"role": "user", "content": GOLD}]}
    with http.stream("POST", "/v1/chat/completions", json=body) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    first = json.loads(events[0][6:])
    assert first["choices"][0]["delta"]["role"] == "assistant"


def test_openai_follow_up_uses_earlier_messages(client, bot):
    messages = [
        {"role": "system", "content": "Be brief."},
        *SILVER_TURNS,
        {"role": "user", "content": "How old is she?"},
    ]
    reply = client.chat.completions.create(model="eventbot", messages=messages)
    expected = bot.ask("How old is she?", [Turn(**t) for t in SILVER_TURNS])
    assert reply.choices[0].message.content == expected.answer


def test_openai_content_parts_are_read(client):
    reply = client.chat.completions.create(
        model="eventbot", messages=[{"role": "user", "content": [{"type": "text", "text": GOLD}]}]
    )
    assert "Alysa Liu" in reply.choices[0].message.content


def test_openai_models(client):
    assert "eventbot" in [m.id for m in client.models.list()]
    assert client.models.retrieve("eventbot").id == "eventbot"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"model": "eventbot", "messages": []}, "at least 1"),
        ({"model": "eventbot"}, "required"),
        ({"model": "eventbot", "messages": [{"role": "user", "content": GOLD}], "stream": "lots"}, "bool"),
        ({"model": "eventbot", "messages": [{"role": "assistant", "content": "Hello"}]}, "last message"),
        ({"model": "eventbot", "messages": [{"role": "user", "content": ""}]}, "empty"),
        ({"model": "eventbot", "messages": [{"role": "user", "content": LONG}], "stream": True}, "limit"),
    ],
)
def test_openai_bad_input_is_4xx(http, body, problem):
    r = http.post("/v1/chat/completions", json=body)
    assert 400 <= r.status_code < 500, r.text
    assert problem in json.dumps(r.json()["detail"]).lower()


def test_openai_client_raises_on_bad_request(client):
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="eventbot", messages=[{"role": "user", "content": "  "}])


# ---------------------------------------------------------------------------------------------- auth


@pytest.mark.parametrize("path", ["/api/ask", "/v1/chat/completions", "/v1/models"])
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": API_KEY}, {"Authorization": f"Basic {API_KEY}"}],
)
def test_auth_rejects_missing_or_wrong_key(secured_url, path, headers):
    body = {"question": GOLD, "messages": [{"role": "user", "content": GOLD}]}
    method = "GET" if path == "/v1/models" else "POST"
    r = httpx.request(method, secured_url + path, json=body if method == "POST" else None, headers=headers)
    assert r.status_code == 401 and "detail" in r.json()
    assert r.headers["www-authenticate"] == "Bearer"


def test_auth_accepts_the_key(secured_url):
    r = httpx.post(
        f"{secured_url}/api/ask", json={"question": GOLD}, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60
    )
    assert r.status_code == 200 and "Alysa Liu" in r.json()["answer"]
    client = openai.OpenAI(base_url=f"{secured_url}/v1", api_key=API_KEY, max_retries=0)
    assert (
        "Alysa Liu"
        in client.chat.completions.create(model="eventbot", messages=[{"role": "user", "content": GOLD}])
        .choices[0]
        .message.content
    )
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{secured_url}/v1", api_key="wrong", max_retries=0).models.list()


def test_auth_leaves_health_docs_and_ui_open(secured_url):
    for path in ("/healthz", "/", "/docs", "/openapi.json"):
        assert httpx.get(secured_url + path).status_code == 200, path


def test_no_key_configured_means_no_auth(http):
    assert http.get("/v1/models").status_code == 200
    assert http.get("/v1/models", headers={"Authorization": "Bearer anything"}).status_code == 200


# ---------------------------------------------------------------------------------------------- an unreadable store


@pytest.fixture(scope="module")
def broken_store_url(settings, tmp_path_factory) -> Iterator[str]:
    """A server whose index vanished after start-up (its collection deleted under it)."""
    from bot.event_bot import EventBot
    from bot.indexing import build_index
    from index.store import open_client

    own = settings.model_copy(update={"index_dir": tmp_path_factory.mktemp("vanishing"), "api_key": None})
    build_index(own)
    bot = EventBot(own)
    open_client(own.index_dir, None).delete_collection(own.collection)
    with running(create_app(bot)) as url:
        yield url


def test_unreadable_store_makes_healthz_503(broken_store_url):
    r = httpx.get(f"{broken_store_url}/healthz")
    assert r.status_code == 503 and "index" in r.json()["detail"]


def test_unreadable_store_makes_ask_503(broken_store_url):
    r = httpx.post(f"{broken_store_url}/api/ask", json={"question": GOLD}, timeout=60)
    assert r.status_code == 503 and "detail" in r.json()


# ---------------------------------------------------------------------------------------------- the chat handler


def test_chat_handler_streams_and_passes_history(served, bot):
    """The UI's handler (what Gradio calls) streams growing text, then adds a collapsed Sources panel, and
    hands the conversation to the bot as history, leaving Sources panels out."""
    earlier = [
        {"role": "user", "content": "Who won silver?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Kaori Sakamoto won the silver medal [1]."}]},
        {"role": "assistant", "content": "**[1]** …", "metadata": {"title": "Sources (1)", "status": "done"}},
    ]
    assert to_turns(earlier, 40) == [Turn(**t) for t in SILVER_TURNS]
    updates = list(respond(served, [*earlier, {"role": "user", "content": "How old is she?"}]))
    expected = bot.ask("How old is she?", [Turn(**t) for t in SILVER_TURNS])
    streamed = [from_text(u[4]["content"]) for u, _ in updates[:-1] if len(u) > 4]  # shown escaped, as text
    assert len(streamed) > 1 and streamed[-1] == expected.answer
    assert all(expected.answer.startswith(t) for t in streamed)
    final, answers = updates[-1]
    assert answers[4].answer == expected.answer  # the session keeps the answer object by its reply's index
    assert to_turns(final, 40, answers)[-1].content == expected.answer  # history: the answer, not the links
    for c in expected.citations:  # each marker a link to its passage
        assert f"[\\[{c.n}\\]](#source-4-{c.n})" in final[4]["content"]
    if expected.citations:
        assert final[-1]["metadata"]["title"] == f"Sources ({len(expected.citations)})"
        assert all(c.quote.split("\n")[0] in from_text(final[-1]["content"]) for c in expected.citations)


def test_chat_handler_notes_why_it_did_not_answer(served):
    """An abstained reply is shown under a note saying it is not an answer (muted by the page's style)."""
    updates = list(respond(served, [{"role": "user", "content": "What did Amber Glenn eat for breakfast?"}]))
    final, answers = updates[-1]
    assert answers[1].abstained
    assert final[1]["content"].startswith('<span class="reply-note">')
    assert "Not found in the documents" in final[1]["content"] or "Unsure" in final[1]["content"]
    confident = list(respond(served, [{"role": "user", "content": "How old is Sakamoto?"}]))[-1]
    assert not confident[1][1].abstained and "reply-note" not in confident[0][1]["content"]


def test_chat_handler_shows_bad_questions_plainly(served):
    [(update, answers)] = list(respond(served, [{"role": "user", "content": "x" * 5000}]))
    assert "limit" in update[-1]["content"] and update[-1]["role"] == "assistant"
    assert answers == {}  # nothing to rate or open


# ---------------------------------------------------------------------------------------------- cited passages


def test_a_citation_opens_its_passage(http):
    """`GET /api/documents/{name}/passage`: the quote verbatim, where it sits in the document, a few paragraphs of
    the text around it on each side."""
    cited = http.post("/api/ask", json={"question": "How old is Sakamoto?"}).json()["citations"][0]
    r = http.get(
        f"/api/documents/{cited['source']}/passage", params={"chunk_id": cited["chunk_id"], "quote": cited["quote"]}
    )
    assert r.status_code == 200, r.text
    passage = r.json()
    assert passage["quote"] == cited["quote"] and passage["page"] is None
    assert passage["before"] + passage["quote"] + passage["after"] in ARTICLE_TEXT
    assert passage["before"].count("\n\n") >= 1 and passage["after"].count("\n\n") >= 1  # paragraphs around it
    whole = http.get(f"/api/documents/{cited['source']}/passage", params={"chunk_id": cited["chunk_id"]}).json()
    assert cited["quote"] in whole["quote"] and whole["quote"] in ARTICLE_TEXT  # no quote: the whole chunk


@pytest.mark.parametrize(
    ("name", "params", "status"),
    [
        ("nothing-like-it.txt", {}, 404),  # no such document
        ("event-article.txt", {"chunk_id": "0" * 32}, 404),  # no such chunk
        ("event-article.txt", {"quote": "Words the article never wrote."}, 422),  # not in that chunk
        ("event-article.txt", {"chunk_id": "x" * 65}, 422),  # over-long id
        ("..%2F..%2Fetc%2Fpasswd", {}, 404),  # a name with folders in it
        ("event-article.txt", {"chunk_id": None}, 422),  # no chunk id
    ],
)
def test_a_bad_passage_request_is_4xx_json(http, name, params, status):
    cited = http.post("/api/ask", json={"question": "How old is Sakamoto?"}).json()["citations"][0]
    query = {"chunk_id": cited["chunk_id"], **params}
    r = http.get(f"/api/documents/{name}/passage", params={k: v for k, v in query.items() if v is not None})
    assert r.status_code == status, r.text
    assert r.json()["detail"]


# ---------------------------------------------------------------------------------------------- eventbot serve


def test_serve_without_index_exits_2(tmp_path):
    proc = run_cli("serve", "--port", "0", env={"EVENTBOT_INDEX_DIR": str(tmp_path / "none")}, check=False)
    assert proc.returncode == 2
    assert "run `eventbot index`" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_serve_command_prints_url_and_serves(index_dir):
    """`eventbot serve` as `make run` starts it: prints the URL once the bot is open, then serves."""
    with serve_process({"EVENTBOT_INDEX_DIR": str(index_dir)}) as served:
        assert served.ready_line.startswith("eventbot is ready") and f"{served.url}/" in served.ready_line
        r = httpx.get(f"{served.url}/healthz")
        assert r.status_code == 200 and r.json()["status"] == "ok"
        assert httpx.get(served.url + "/").status_code == 200
