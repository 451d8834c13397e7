"""Documents changed through the server when the index is a real `chroma run` server on loopback (issue 23, items 4
and 6): with the Chroma server down an upload is a 503 with a one-line reason and nothing is lost (once it is back,
the documents and the chunk count are as before, and the same upload goes in); and with two `eventbot serve`
processes over one Chroma server, a document added through one is answered by the other."""

import httpx

from bot.eval.bench import live_server
from bot.event_bot import EventBot
from bot.serving import ServedBot
from bot.settings import Settings
from tests.conftest import run_cli
from tests.test_api import running
from tests.test_chroma_server import chroma_run, free_port, stop
from tests.test_reliability import wait_for
from ui.server import create_app

REGATTA = """Harbour Regatta: Moreau takes the single sculls title

PORTSEA. Ines Moreau won the single sculls final at the Harbour Regatta on Saturday, four minutes ahead of
Lars Eriksen. Moreau said the last leg had been the hardest of her career.
"""
RELAY = """Quarry Hill Relay: Vasseur-Lind anchors the winning team

The Quarry Hill Relay was won by Oriane Vasseur-Lind, who ran the last leg in forty-one minutes. The race drew
sixty teams from across the valley, and the organisers said the course would be the same next year.
"""
RELAY_QUESTION = "Who ran the last leg of the Quarry Hill Relay?"  # "Oriane Vasseur-Lind" (issue 30's reader is unsure of "Who won …")


def upload(http: httpx.Client, name: str, text: str) -> httpx.Response:
    return http.post("/api/documents", files=[("files", (name, text.encode(), "text/plain"))])


def stored(settings: Settings) -> tuple[list[str], int]:
    """What the Chroma server holds, read by a bot of its own: document names and chunk count."""
    bot = EventBot(settings)
    stats = bot.stats()
    return sorted(source for source, _title in bot.knowledge.sources.values()), stats["chunks"]


def test_an_upload_with_the_chroma_server_down_is_503_and_loses_nothing(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    settings = Settings(
        index_dir=tmp_path / "unused",
        chroma_url=url,
        uploads="on",
        uploads_dir=tmp_path / "uploads",
        store_timeout_s=5.0,
        api_key=None,
        rate_limit=0,
    )
    with chroma_run(tmp_path / "chroma", port) as chroma:
        run_cli("index", env={"EVENTBOT_CHROMA_URL": url, "EVENTBOT_INDEX_DIR": str(settings.index_dir)})
        served = ServedBot(EventBot(settings), settings, watch=False)  # the swaps come from the uploads
        with running(create_app(served)) as base, httpx.Client(base_url=base, timeout=300) as http:
            r = upload(http, "regatta.txt", REGATTA)
            assert r.status_code == 200, r.text
            listed = http.get("/api/documents").json()
            counts = http.get("/healthz").json()
            assert [d["name"] for d in listed["documents"]] == ["event-article.txt", "regatta.txt"]
            before = stored(settings)
            assert before == (["event-article.txt", "regatta.txt"], counts["chunks"])

            stop(chroma)
            r = upload(http, "relay.txt", RELAY)
            assert r.status_code == 503, r.text
            assert list(r.json()) == ["detail"], r.json()  # the API's one error shape
            detail = r.json()["detail"]
            assert detail.strip() and "\n" not in detail and "Chroma server" in detail, detail
            assert sorted(p.name for p in settings.uploads_dir.iterdir() if not p.name.startswith(".")) == [
                "regatta.txt"
            ]  # the failed upload's file is not kept
            assert not (settings.uploads_dir / f".pending.{settings.collection}.json").exists()
            r = http.delete("/api/documents/regatta.txt")  # a removal too
            assert r.status_code == 503 and "\n" not in r.json()["detail"], r.text
            assert (settings.uploads_dir / "regatta.txt").exists()
            assert http.get("/healthz").status_code == 503

            with chroma_run(tmp_path / "chroma", port):  # the same data, the same address
                assert stored(settings) == before  # nothing lost, nothing half-written
                wait_for(lambda: http.get("/healthz").status_code == 200, "the server sees the Chroma server again")
                assert http.get("/api/documents").json() == listed
                assert http.get("/healthz").json()["chunks"] == counts["chunks"]
                assert "Vasseur" not in http.post("/api/ask", json={"question": RELAY_QUESTION}).json()["answer"]

                r = upload(http, "relay.txt", RELAY)  # the same upload, tried again, goes in
                assert r.status_code == 200, r.text
                assert r.json()["index"]["documents"] == 3
                answer = http.post("/api/ask", json={"question": RELAY_QUESTION}).json()
                assert not answer["abstained"] and "Vasseur-Lind" in answer["answer"], answer
                assert answer["citations"][0]["source"] == "relay.txt"
                names, chunks = stored(settings)
                assert names == ["event-article.txt", "regatta.txt", "relay.txt"] and chunks > before[1]
        served.close()


def test_a_document_added_through_one_server_is_answered_by_another(tmp_path):
    """Issue 23.6: two `eventbot serve` processes over one Chroma server (docs/operations.md, "Scaling out"): what one takes in,
    the other answers from once it has seen the index change (its watcher, about two seconds); what the other
    removes, the first no longer answers from."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    settings = Settings(index_dir=tmp_path / "unused", chroma_url=url, uploads="on", uploads_dir=tmp_path / "up")
    with chroma_run(tmp_path / "chroma", port):
        run_cli("index", env={"EVENTBOT_CHROMA_URL": url, "EVENTBOT_INDEX_DIR": str(settings.index_dir)})
        with (
            live_server(settings) as first,
            live_server(settings) as second,
            httpx.Client(base_url=first.url, timeout=300) as one,
            httpx.Client(base_url=second.url, timeout=300) as other,
        ):
            assert other.post("/api/ask", json={"question": RELAY_QUESTION}).json()["abstained"]
            r = upload(one, "relay.txt", RELAY)
            assert r.status_code == 200, r.text

            def answered_by_the_other():
                answer = other.post("/api/ask", json={"question": RELAY_QUESTION}).json()
                cited = [c["source"] for c in answer.get("citations", [])]
                return not answer["abstained"] and "Vasseur-Lind" in answer["answer"] and "relay.txt" in cited

            # The trained reader answers from chunks the shared store returns before the other's watcher has swapped
            # in the new index (measured: answered about 4 s before relay.txt is listed), so wait for the other to
            # have seen the change, its listing, and then it must answer.
            wait_for(
                lambda: "relay.txt" in [d["name"] for d in other.get("/api/documents").json()["documents"]],
                "the document added through one server listed by the other",
            )
            assert answered_by_the_other(), other.post("/api/ask", json={"question": RELAY_QUESTION}).json()

            r = other.delete("/api/documents/relay.txt")
            assert r.status_code == 200, r.text
            wait_for(
                lambda: one.post("/api/ask", json={"question": RELAY_QUESTION}).json()["abstained"],
                "the document removed through the other server declined by the first",
            )
