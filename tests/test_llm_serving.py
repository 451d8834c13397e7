"""A served bot with the default reader (the local LLM) while its documents change (issue 58): a document uploaded
and asked about at once, several times over, and the article's questions asked while the LLM reads a new document
ahead of them. Every question gets its answer, never a dropped connection, and the server lives: before, a question
that met the model while a swapped-in bot (or the one swapped out) used it crashed the process inside llama.cpp.
The same with `--workers 2`."""

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from bot.eval.distractors import article
from tests.conftest import ARTICLE, SAFETY_TIMEOUT_S, run_cli, serve_process

pytestmark = pytest.mark.llm

ARTICLE_TEXT = ARTICLE.read_text(encoding="utf-8")
# One line each, a fact no other document holds: (file name, text, question, the answer's words)
NOTES = [
    ("note-{n}.txt", "Talia Brennmoor{n} is 34 years old and works as a ferry pilot in Cobbleport.",
     "How old is Talia Brennmoor{n}?", "34"),
    ("note-{n}.txt", "The Lindqvale{n} footbridge was opened in 1987 by the mayor of Cobbleport.",
     "When was the Lindqvale{n} footbridge opened?", "1987"),
    ("note-{n}.txt", "Oskar Feldmarr{n} has kept the Cobbleport lighthouse for nineteen years.",
     "How long has Oskar Feldmarr{n} kept the Cobbleport lighthouse?", "nineteen years"),
]  # fmt: skip
ARTICLE_QUESTIONS = [
    ("Who consoled Sakamoto?", "Liu"),
    ("How old is Sakamoto?", "25"),
    ("Who blocked the camera's view?", "Glenn"),
]


def assert_answered_right_or_declined(answer: dict, expected: str, source: str) -> None:
    """An answer object: either it declines, or it names `expected` citing `source`; never a wrong answer."""
    if answer["abstained"]:
        assert answer["short_answer"] is None, answer
        return
    assert expected.lower() in answer["answer"].lower(), answer
    assert source in {c["source"] for c in answer["citations"]}, answer


def served_with_the_llm(tmp_path, *args: str):
    index = tmp_path / "index"
    run_cli("index", env={"EVENTBOT_INDEX_DIR": str(index)})
    env = {
        "EVENTBOT_INDEX_DIR": str(index),
        "EVENTBOT_LLM": "llamacpp",  # the default, which the rest of the suite turns off
        "EVENTBOT_LLM_STATE_DIR": str(tmp_path / "llm-states"),
        "EVENTBOT_UPLOADS": "on",
        "EVENTBOT_UPLOADS_DIR": str(tmp_path / "uploads"),
        "EVENTBOT_API_KEY": "",
        "EVENTBOT_RATE_LIMIT": "0",
        # the article and the notes are read together; a report added later makes them too long for that, so the
        # documents are then read one at a time, ahead of questions, in the background
        "EVENTBOT_LLM_DOCUMENT_CHARS": "6000",
    }
    return serve_process(env, *args)


def upload(http: httpx.Client, name: str, text: str) -> None:
    r = http.post("/api/documents", files=[("files", (name, text.encode(), "text/plain"))])
    assert r.status_code == 200, r.text


def ask(http: httpx.Client, question: str) -> dict:
    r = http.post("/api/ask", json={"question": question})
    assert r.status_code == 200, r.text
    return r.json()


def wait_for_a_reading(folder) -> None:
    """Until the server's LLM is reading a document ahead of questions (the mark file it keeps while it reads)."""
    deadline = time.monotonic() + SAFETY_TIMEOUT_S
    while not list(folder.glob("*.reading")):
        assert time.monotonic() < deadline, (
            f"no reading ahead began: {sorted(p.name for p in folder.parent.rglob('*'))}"
        )
        time.sleep(0.02)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_documents_added_and_asked_about_at_once_while_the_llm_reads(tmp_path, workers):
    with (
        served_with_the_llm(tmp_path, "--workers", workers) as served,
        httpx.Client(base_url=served.url, timeout=SAFETY_TIMEOUT_S) as http,
    ):
        right = 0
        for n, (name, text, question, expected) in enumerate(NOTES):
            name, text, question = name.format(n=n), text.format(n=n), question.format(n=n)
            upload(http, name, text)
            answer = ask(http, question)  # at once: the server may still be swapping in, or reading
            assert_answered_right_or_declined(answer, expected, name)
            right += not answer["abstained"]
        if workers == "1":  # with two, a question may reach the worker that has not swapped in the new note yet
            assert right >= 1, "no note was answered from the note just added"

        report = article(seed=58, number=0, target_chars=4000)
        upload(http, "report.txt", report)
        wait_for_a_reading(tmp_path / "llm-states" / "eventbot")  # the default collection's readings
        with ThreadPoolExecutor(len(ARTICLE_QUESTIONS)) as pool:
            answers = list(pool.map(lambda qa: ask(http, qa[0]), ARTICLE_QUESTIONS))
        for answer, (_, expected) in zip(answers, ARTICLE_QUESTIONS, strict=True):
            assert_answered_right_or_declined(answer, expected, "event-article.txt")
        assert sum(not a["abstained"] for a in answers) >= 1, answers
        assert http.get("/healthz").status_code == 200
        assert served.process.poll() is None, "the server died"
