"""Issue 11: no hang, no global lock, no stale index, ready means warm, a rate limit, fuzzing, a load test.

Everything real: uvicorn on loopback (in-process or `eventbot serve`), a `chroma run` server paused with SIGSTOP,
`eventbot index` run beside a serving bot, httpx and schemathesis as clients."""

import itertools
import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import hypothesis
import pytest
import schemathesis
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from bot.serving import ServedBot
from tests.conftest import SAFETY_TIMEOUT_S, run_cli, serve_process
from tests.test_api import API_KEY, GOLD, SILVER_TURNS, running
from tests.test_chroma_server import chroma_url  # noqa: F401  (a fixture: a real `chroma run` on loopback)
from ui.server import create_app

# A second document, made up here: nothing in the article answers questions about it.
REGATTA = """Harbour Regatta: Okonkwo-Lindqvist takes the single sculls title

PORT ELLEN — Thandiwe Okonkwo-Lindqvist won the women's single sculls final at the Harbour Regatta on Saturday,
finishing in seven minutes and twelve seconds. Marisol Kepplinger of Austria finished second, two seconds behind.
Okonkwo-Lindqvist, who is 24, said the crosswind over the last 500 metres made it the hardest race of her career.
The final was delayed by forty minutes because of fog over the harbour.
"""
REGATTA_QUESTION = "Why was the final delayed?"  # answered from the regatta only (p = 0.79: the reader declines "who won the final?" here)
REGATTA_ANSWER = "harbour"  # "Fog over the harbour [1]."


def write_regatta(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "regatta.txt").write_text(REGATTA, encoding="utf-8")
    return folder


def own_index(tmp_path: Path, **env: str) -> dict[str, str]:
    """An index of the article of its own (tests here change it), built by the real CLI; its environment."""
    env = {"EVENTBOT_INDEX_DIR": str(tmp_path / "index"), **env}
    run_cli("index", env=env)
    return env


def bot_on(env: dict[str, str], **settings):
    from bot.event_bot import EventBot
    from bot.settings import Settings

    fields = {"index_dir": Path(env["EVENTBOT_INDEX_DIR"]), "chroma_url": env.get("EVENTBOT_CHROMA_URL")}
    return EventBot(Settings(**fields, **settings))


def wait_for(check, what: str, seconds: float = SAFETY_TIMEOUT_S):
    """Poll `check()` until it returns something true, however long that takes; fail naming `what` only when it
    never does (after `seconds`: a safety limit, so that a hang cannot block the run forever)."""
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            got = check()
            if got:
                return got
            last = got
        except (httpx.HTTPError, AssertionError) as exc:
            last = exc
        time.sleep(0.25)
    pytest.fail(f"{what}: not within {seconds} s (last: {last!r})")


# ---------------------------------------------------------------------------------------------- a stalled store


STORE_TIMEOUT_S = 4.0


def timed_request(http: httpx.Client, method: str, path: str, **kwargs) -> tuple[httpx.Response, float]:
    """The response, and when it came (a hang fails at the client's own timeout)."""
    r = http.request(method, path, **kwargs)
    return r, time.monotonic()


def unread_by_the_store(port: int) -> bool:
    """Whether a request waits unread in a connection to the (paused) server on loopback `port`: an established
    socket of that port with bytes in its receive queue (/proc/net/tcp)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port, state, received = int(fields[1].rsplit(":", 1)[1], 16), fields[3], fields[4].split(":")[1]
            if local_port == port and state == "01" and int(received, 16) > 0:
                return True
    return False


def test_a_stalled_chroma_server_gets_503_in_time_and_blocks_no_other_request(chroma_url, tmp_path):  # noqa: F811
    """Issue 11.2: with the Chroma server paused (SIGSTOP), /api/ask, /v1 and /healthz answer 503 with the reason
    naming EVENTBOT_STORE_TIMEOUT_S (before: they hung for over 100 s), requests sent while another is stuck are
    not queued behind it (before: one lock), a question answered before the pause is still answered (from the
    bot's answer cache), and once the server goes on (SIGCONT) the bot answers again. No limit on how long each
    takes (a busy machine may be slow), only on the order the answers come in."""
    url, proc = chroma_url
    env = own_index(tmp_path, EVENTBOT_CHROMA_URL=url)
    served = ServedBot(bot_on(env, store_timeout_s=STORE_TIMEOUT_S, rate_limit=0))
    new_questions = ["Who won silver?", "How old is Sakamoto?", "Who blocked the camera?"]  # none asked before
    with running(create_app(served)) as base, httpx.Client(base_url=base, timeout=60) as http:
        assert http.post("/api/ask", json={"question": GOLD}).status_code == 200
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            with ThreadPoolExecutor(4) as pool:
                first = pool.submit(timed_request, http, "POST", "/api/ask", json={"question": new_questions[0]})
                port = int(url.rsplit(":", 1)[1])
                wait_for(lambda: unread_by_the_store(port) or first.done(), "the first question stuck on the store")
                others = [
                    pool.submit(timed_request, http, "POST", "/api/ask", json={"question": new_questions[1]}),
                    pool.submit(
                        timed_request,
                        http,
                        "POST",
                        "/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": new_questions[2]}]},
                    ),
                    pool.submit(timed_request, http, "GET", "/healthz"),
                ]
                results = [first.result(), *(f.result() for f in others)]
            for r, _ in results:
                assert r.status_code == 503, r.text
                assert "EVENTBOT_STORE_TIMEOUT_S" in r.json()["detail"]  # the store's time limit ended the wait
            first_answered = results[0][1]
            for r, answered in results[1:]:  # had it waited for the first, it would have come a whole limit later
                assert answered < first_answered + STORE_TIMEOUT_S, (r.request.url, answered - first_answered)
            assert results[-1][0].json()["status"] == "degraded"
            again = http.post("/api/ask", json={"question": GOLD})
            assert again.status_code == 200 and "cached" in again.json()["timings_ms"], again.text
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        ok = wait_for(lambda: http.post("/api/ask", json={"question": new_questions[0]}).status_code == 200, "recovery")
        assert ok
        health = http.get("/healthz").json()
        assert health["status"] == "ok" and health["documents"] == 1
    served.close()


def test_opening_a_bot_on_a_stalled_server_is_bounded(chroma_url, tmp_path):  # noqa: F811
    """The Chroma client asks the server while it opens: that is bounded too (`eventbot ask` exits 2)."""
    url, proc = chroma_url
    env = own_index(tmp_path, EVENTBOT_CHROMA_URL=url)
    os.kill(proc.pid, signal.SIGSTOP)
    try:  # a hang would be forever: run_cli fails it after its safety limit
        r = run_cli("ask", GOLD, env={**env, "EVENTBOT_STORE_TIMEOUT_S": "2"}, check=False)
        assert r.returncode == 2 and "did not answer within 2 s" in r.stderr, r.stderr
    finally:
        os.kill(proc.pid, signal.SIGCONT)


# ---------------------------------------------------------------------------------------------- a changing index


def test_the_served_index_is_read_fresh(tmp_path):
    """Issue 11.3: a document indexed while the server runs is answered (before: 503 "cannot read the index");
    `eventbot index --reset` is served again (before: a lasting 503 "Collection … does not exist"); the index
    folder deleted under the server makes /healthz degraded (before: "ok")."""
    env = own_index(tmp_path)
    served = ServedBot(bot_on(env, rate_limit=0))
    with running(create_app(served)) as base, httpx.Client(base_url=base, timeout=60) as http:
        before = http.post("/api/ask", json={"question": REGATTA_QUESTION})
        assert before.status_code == 200 and REGATTA_ANSWER not in before.json()["answer"]

        run_cli("index", str(write_regatta(tmp_path / "news")), env=env)

        def regatta_answered():
            r = http.post("/api/ask", json={"question": REGATTA_QUESTION})
            assert r.status_code == 200, r.text
            return REGATTA_ANSWER in r.json()["answer"] and r.json()["citations"][0]["source"] == "regatta.txt"

        wait_for(regatta_answered, "the new document answered")
        assert http.get("/healthz").json()["documents"] == 2

        run_cli("index", "--reset", env=env)  # the bundled article only

        def gold_answered_from_the_reset_index():
            assert http.get("/healthz").json()["documents"] == 1
            r = http.post("/api/ask", json={"question": GOLD})
            assert r.status_code == 200, r.text
            return "Alysa Liu" in r.json()["answer"]

        wait_for(gold_answered_from_the_reset_index, "the reset index served")
        gone = http.post("/api/ask", json={"question": REGATTA_QUESTION}).json()
        assert REGATTA_ANSWER not in gone["answer"]

        shutil.rmtree(env["EVENTBOT_INDEX_DIR"])
        r = http.get("/healthz")
        assert r.status_code == 503 and r.json()["status"] == "degraded", r.text
        assert "run `eventbot index`" in r.json()["detail"]
    served.close()


def page_examples(http: httpx.Client) -> list[str]:
    """The example questions a chat page offers, as the browser gets them: those the page was built with
    (`/config`), or what its load events (run as the browser runs them) set instead."""
    config = http.get("/config").json()
    [chat] = [c for c in config["components"] if c["props"].get("elem_id") == "chat"]
    examples = chat["props"]["examples"]
    for dep in config["dependencies"]:
        if any(event == "load" for _, event in dep["targets"]) and chat["id"] in dep["outputs"]:
            body = {"data": [], "fn_index": dep["id"], "session_hash": "page", "event_data": None, "trigger_id": None}
            r = http.post("/gradio_api/run/predict", json=body)
            assert r.status_code == 200, r.text
            examples = r.json()["data"][dep["outputs"].index(chat["id"])].get("examples", examples)
    return [example["text"] for example in examples or []]


ARTICLE_EXAMPLE = "Who is Kaori Sakamoto?"  # an example question the article's bot answers


def test_the_chats_examples_follow_the_served_index(tmp_path):
    """Issue 17.6: once `eventbot index --reset` has put other documents in the index and the server has swapped in
    a fresh bot, a chat page offers the new documents' example questions (before: those worked out at start-up,
    about a document no longer indexed)."""
    env = own_index(tmp_path)
    served = ServedBot(bot_on(env, rate_limit=0))
    with running(create_app(served)) as base, httpx.Client(base_url=base, timeout=60) as http:
        assert ARTICLE_EXAMPLE in page_examples(http)
        run_cli("index", "--reset", str(write_regatta(tmp_path / "news")), env=env)

        def regatta_served():
            r = http.post("/api/ask", json={"question": REGATTA_QUESTION})
            return r.status_code == 200 and REGATTA_ANSWER in r.json()["answer"]

        wait_for(regatta_served, "the fresh index served")
        shown = page_examples(http)
        assert shown and ARTICLE_EXAMPLE not in shown, shown
        assert shown == served.example_questions()
    served.close()


# ---------------------------------------------------------------------------------------------- ready means warm


def test_healthz_says_ready_only_after_a_whole_answer(bot, settings):
    """Issue 11.7: /healthz is 503 "starting" until one whole answer has run (before: "ok" at once, and the first
    question after it took 5–13 s); `eventbot serve` warms the bot before it listens."""
    served = ServedBot(bot, settings.model_copy(update={"rate_limit": 0}), warm=False, watch=False)
    with running(create_app(served)) as base:
        r = httpx.get(f"{base}/healthz")
        assert r.status_code == 503 and r.json()["status"] == "starting", r.text
        served.warm_up()
        r = httpx.get(f"{base}/healthz")
        assert r.status_code == 200 and r.json()["status"] == "ok"


# ---------------------------------------------------------------------------------------------- rate limit


def test_rate_limit_per_client_is_429_with_retry_after(bot, settings):
    """Issue 11: EVENTBOT_RATE_LIMIT requests a minute per client IP on /api and /v1; then 429 with Retry-After.
    Another client (another loopback address) and /healthz are not held back."""
    served = ServedBot(bot, settings.model_copy(update={"rate_limit": 5}))
    with running(create_app(served)) as base:
        with httpx.Client(base_url=base, timeout=60) as http:
            for i in range(5):
                path, body = ("/api/ask", {"question": ""}) if i % 2 else ("/v1/chat/completions", {"messages": []})
                assert http.post(path, json=body).status_code == 422  # refused, but counted
            r = http.post("/api/ask", json={"question": GOLD})
            assert r.status_code == 429, r.text
            assert 1 <= int(r.headers["Retry-After"]) <= 60 and "EVENTBOT_RATE_LIMIT" in r.json()["detail"]
            assert http.get("/v1/models").status_code == 429
            assert http.get("/healthz").status_code == 200
        other = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=base, timeout=60, transport=other) as http:
            assert http.post("/api/ask", json={"question": GOLD}).status_code == 200


def test_rate_limit_zero_is_off(bot, settings):
    served = ServedBot(bot, settings.model_copy(update={"rate_limit": 0}))
    with running(create_app(served)) as base, httpx.Client(base_url=base, timeout=60) as http:
        assert all(http.get("/v1/models").status_code == 200 for _ in range(30))


# ---------------------------------------------------------------------------------------------- fuzzing


FUZZ_EXAMPLES = 100  # per route and mode (schema-valid, schema-breaking): about 20 s in all


@pytest.fixture(scope="module")
def fuzzed_api(bot, settings) -> Iterator[schemathesis.BaseSchema]:
    served = ServedBot(bot, settings.model_copy(update={"rate_limit": 0, "api_key": API_KEY}))
    with running(create_app(served)) as url:
        yield schemathesis.openapi.from_url(f"{url}/openapi.json")


# schemathesis.pytest.from_fixture reads a pytest-internal attribute that pytest 9 no longer has, so the cases are
# drawn here through Hypothesis from each operation's strategy (what `parametrize` does).
@pytest.mark.parametrize("path", ["/api/ask", "/v1/chat/completions"])
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzzing_from_the_openapi_schema_finds_no_server_error(fuzzed_api, path, mode):
    """Issue 11: schemathesis sends bodies drawn from the OpenAPI schema (valid ones, and ones that break it) to
    /api/ask and /v1/chat/completions: never a 5xx, and every response is one the schema documents."""
    sent: Counter[int] = Counter()

    @hypothesis.given(case=fuzzed_api[path]["POST"].as_strategy(mode))
    @hypothesis.settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        derandomize=True,  # the same examples each run: CI fails only on a change of code
        suppress_health_check=list(hypothesis.HealthCheck),
        database=None,
    )
    def fuzz(case) -> None:
        # Not "positive data acceptance": the question and history limits are settings and "the last message is
        # the user's" is a rule JSON Schema cannot state, so some schema-valid bodies are rightly 422.
        response = case.call_and_validate(
            headers={"Authorization": f"Bearer {API_KEY}"}, excluded_checks=[positive_data_acceptance], timeout=60
        )
        sent[response.status_code] += 1

    fuzz()
    print(f"fuzz {mode} {path}: {sum(sent.values())} requests, status codes {dict(sent)}")
    assert sent and not any(code >= 500 for code in sent), sent


# ---------------------------------------------------------------------------------------------- eventbot serve


@contextmanager
def serving(env: dict[str, str]) -> Iterator[str]:
    """`eventbot serve --port 0` as a user starts it; yields its URL once it says it is ready."""
    with serve_process(env) as served:
        yield served.url


# ---------------------------------------------------------------------------------------------- load


LOAD_REQUESTS = 300
LOAD_CONCURRENCY = 12
ANSWERABLE = [GOLD, "Who won silver?", "Who won the bronze medal?", "How old is Kaori Sakamoto?"]
UNANSWERABLE = ["What did Amber Glenn eat for breakfast?", "Who won the men's downhill?"]


def load_request(i: int) -> tuple[str, dict]:
    kind = i % 5
    if kind in (0, 1):
        return "/api/ask", {"question": ANSWERABLE[i % len(ANSWERABLE)]}
    if kind == 2:
        return "/api/ask", {"question": UNANSWERABLE[i % len(UNANSWERABLE)]}
    if kind == 3:
        return "/api/ask", {"question": "How old is she?", "history": SILVER_TURNS}
    messages = [*SILVER_TURNS, {"role": "user", "content": "Where is she from?"}]
    return "/v1/chat/completions", {"messages": messages, "stream": i % 2 == 0}


def test_load_with_indexing_during_it(tmp_path):
    """Issue 11: 300 requests or more at concurrency 12 (answerable, unanswerable, follow-ups, /api and /v1,
    streamed and not) against `eventbot serve`, with `eventbot index` of a new document running from the first
    request (the load goes on until it has ended): no errors, and the new document is answered once indexing has
    ended."""
    env = own_index(tmp_path, EVENTBOT_RATE_LIMIT="0")  # one client sends it all: its limit is tested elsewhere
    with serving(env) as url:
        statuses: Counter[int] = Counter()
        failures: list[str] = []
        indexed = threading.Event()
        during: dict[str, int] = {}

        def index_new_document() -> None:
            during["result"] = run_cli("index", str(write_regatta(tmp_path / "news")), env=env, check=False)
            during["answered"] = sum(statuses.values())
            indexed.set()

        with httpx.Client(base_url=url, timeout=120) as http:
            numbers = itertools.count()

            def send(i: int) -> None:
                path, body = load_request(i)
                r = http.post(path, json=body)
                statuses[r.status_code] += 1
                if r.status_code != 200 or (body.get("stream") and not r.text.rstrip().endswith("data: [DONE]")):
                    failures.append(f"{path} {json.dumps(body)[:80]} → {r.status_code} {r.text[:200]}")

            def client() -> None:
                while (i := next(numbers)) < LOAD_REQUESTS or not indexed.is_set():
                    send(i)

            indexer = threading.Thread(target=index_new_document)
            indexer.start()
            clients = [threading.Thread(target=client) for _ in range(LOAD_CONCURRENCY)]
            for thread in clients:
                thread.start()
            for thread in [indexer, *clients]:
                thread.join(SAFETY_TIMEOUT_S)
            sent = sum(statuses.values())
            print(f"load: {sent} requests, {during['answered']} answered while `eventbot index` ran, {statuses}")
            assert during["result"].returncode == 0, during["result"].stderr
            assert not failures, f"{len(failures)} of {sent} failed: {failures[:5]}"
            assert sent >= LOAD_REQUESTS and statuses == {200: sent}

            def regatta_answered():
                r = http.post("/api/ask", json={"question": REGATTA_QUESTION})
                return r.status_code == 200 and REGATTA_ANSWER in r.json()["answer"]

            wait_for(regatta_answered, "the new document answered after indexing")
            assert "Alysa Liu" in http.post("/api/ask", json={"question": GOLD}).json()["answer"]


def test_a_burst_of_one_question_is_read_once_and_each_asker_gets_the_same_answer(settings):
    from bot.event_bot import EventBot
    from bot.types import Turn

    bot = EventBot(settings)
    reads = []
    drafts = bot.drafts  # the chain up to its cite step: what one reading of a question runs
    bot.drafts = type(
        "Counting", (), {"invoke": lambda self, state, config=None: reads.append(1) or drafts.invoke(state, config)}
    )()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: bot.ask("Who consoled Sakamoto?"), range(8)))
    assert len(reads) == 1
    assert len({(a.answer, str(a.citations)) for a in answers}) == 1 and "Liu" in answers[0].answer
    again = bot.ask("Who consoled Sakamoto?")
    assert len(reads) == 1 and again.answer == answers[0].answer and set(again.timings_ms) == {"cached", "total"}
    bot.ask("Who consoled Sakamoto?", [Turn(role="user", content="hi"), Turn(role="assistant", content="Hello.")])
    assert len(reads) == 2  # another history is another question
