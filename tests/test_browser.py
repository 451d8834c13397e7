"""The chat UI in a real Chromium (Debian's, driven by Playwright), against `eventbot serve` as a user runs it."""

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ARTICLE, EVENTBOT, ROOT, SAFETY_TIMEOUT_S, serve_process

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("no /usr/bin/chromium (apt-get install chromium); CI installs it", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

# The page is waited for as long as it takes (a busy machine is slow); a hang fails only after the safety limit.
WAIT_MS = SAFETY_TIMEOUT_S * 1000
expect.set_options(timeout=WAIT_MS)
ARTICLE_TEXT = ARTICLE.read_text(encoding="utf-8")
API_KEY = "browser-test-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture(scope="module")
def server_url(index_dir, tmp_path_factory) -> Iterator[str]:
    """`eventbot serve --port 0` in a subprocess, with an API key set: the chat asks for it (Gradio's login)."""
    feedback = tmp_path_factory.mktemp("feedback") / "feedback.sqlite3"
    yield from serving(
        {"EVENTBOT_INDEX_DIR": str(index_dir), "EVENTBOT_API_KEY": API_KEY, "EVENTBOT_FEEDBACK_PATH": str(feedback)}
    )


def serving(settings: dict[str, str]) -> Iterator[str]:
    """Run `eventbot serve --port 0` with these settings (no API key unless they set one); yield its URL once
    /healthz answers."""
    with serve_process({"EVENTBOT_API_KEY": "", **settings}) as served:
        yield served.url


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


def new_page(browser: Browser, **options) -> Page:
    """A page whose actions and navigations wait as long as `expect` does."""
    page = browser.new_page(**options)
    page.set_default_timeout(WAIT_MS)
    page.set_default_navigation_timeout(WAIT_MS)
    return page


def open_chat(page: Page, url: str) -> None:
    """Open the chat, logging in with the server's API key as the password (any user name)."""
    page.goto(url)
    page.get_by_label("username").fill("me")
    page.get_by_label("password").fill(API_KEY)
    page.get_by_role("button", name="Login").click()
    expect(page.get_by_placeholder("Ask about the event")).to_be_visible()


def bot_messages(page: Page):
    """Answer bubbles (not the Sources panels, which Gradio renders as 'thought' messages)."""
    return page.locator("#chat .message:not(.thought) > [data-testid='bot']")


def ask(page: Page, question: str) -> str:
    """Type a question, send it, wait until its answer has streamed in completely; return the answer text."""
    before = bot_messages(page).count()
    box = page.get_by_placeholder("Ask about the event")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("#chat [data-testid='user']").last).to_contain_text(question)
    # the box is locked with the question shown and unlocked once its answer has streamed in whole (ui.chat)
    expect(box).to_be_editable()
    answer = bot_messages(page).nth(before)
    expect(answer).to_be_visible()
    expect(page.locator("#chat [data-testid='status-tracker'].hide").first).to_be_attached()
    return answer.inner_text().strip()


def kept_conversations(url: str) -> list[dict]:
    return httpx.get(f"{url}/api/conversations", headers=AUTH).json()["conversations"]


def test_chat_answers_cites_and_follows_up(server_url, browser, tmp_path):
    external: list[str] = []
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.on(
        "request",
        lambda r: None if r.url.startswith(server_url) or r.url.startswith("data:") else external.append(r.url),
    )
    open_chat(page, server_url)

    expect(page.locator("#header")).to_contain_text("event-article.txt")
    expect(page.locator("#header")).to_contain_text("only")

    first = ask(page, "How old is Sakamoto?")
    assert "[1]" in first and "25" in first

    sources = page.locator("#chat .thought-group").last
    expect(sources).to_contain_text("Sources (")
    sources.locator(".title").click()
    expect(sources).to_contain_text("event-article.txt")
    expect(sources).to_contain_text("score")
    shown = sources.inner_text()
    quote = re.search(r"\n([^\n]{25,})", shown.split("score", 1)[1]).group(1).strip()
    assert quote in ARTICLE_TEXT  # the panel shows the verbatim passage

    follow_up = ask(page, "How many points behind Liu did she finish?")
    assert "1.91" in follow_up  # "she" is Sakamoto from the previous turn
    assert bot_messages(page).count() == 2
    # kept, and listed over the API for the same key (the chat logged in with it)
    deadline = time.monotonic() + 60
    while not any(c["title"] == "How old is Sakamoto?" and c["turns"] == 2 for c in kept_conversations(server_url)):
        assert time.monotonic() < deadline, kept_conversations(server_url)
        time.sleep(0.2)

    page.screenshot(path=str(tmp_path / "chat-desktop.png"))
    assert (tmp_path / "chat-desktop.png").stat().st_size > 10_000

    page.locator("#clear").click()
    expect(bot_messages(page)).to_have_count(0)
    assert not external, f"the page reached outside the server: {external}"


def test_chat_on_a_phone_and_with_examples(server_url, browser, tmp_path):
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    open_chat(page, server_url)
    page.locator("#chat button.example").first.click()  # the examples are questions the bot answers
    answer = bot_messages(page).first
    expect(answer).to_contain_text("[1]")
    expect(page.locator("#chat .thought-group").first).to_contain_text("Sources (")
    # nothing wider than the phone: no sideways scrolling
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    expect(page.get_by_placeholder("Ask about the event")).to_be_in_viewport()
    page.screenshot(path=str(tmp_path / "chat-phone.png"))


@pytest.mark.parametrize("width", [1280, 390])
def test_a_citation_opens_its_passage_and_a_thumb_is_kept(server_url, browser, tmp_path, width):
    """Click `[1]`: the cited sentence shows highlighted in its document, over the chat. Thumb down with a comment,
    reload: the rating is kept and listed by `GET /api/feedback`. A reply that is not an answer looks unsure."""
    page = new_page(browser, viewport={"width": width, "height": 900 if width > 600 else 844}, is_mobile=width < 600)
    open_chat(page, server_url)
    answer = ask(page, "How old is Sakamoto?")
    assert "25" in answer
    cited = httpx.post(
        f"{server_url}/api/ask", json={"question": "How old is Sakamoto?"}, headers=AUTH, timeout=SAFETY_TIMEOUT_S
    ).json()["citations"][0]

    bot_messages(page).last.get_by_role("link", name="[1]").click()
    highlighted = page.locator("#passage mark")
    expect(highlighted).to_be_visible()
    expect(highlighted).to_be_in_viewport()
    assert highlighted.inner_text().strip() == cited["quote"].strip()  # the quote, verbatim
    around = page.locator("#passage .passage-text").inner_text()
    assert len(around) > len(cited["quote"]) + 200 and around.strip() in ARTICLE_TEXT  # with the text around it
    page.screenshot(path=str(tmp_path / f"passage-{width}.png"))
    page.locator("#passage-close").click()
    expect(page.locator("#passage")).to_be_hidden()

    declined = ask(page, "What did Amber Glenn eat for breakfast?")
    note = bot_messages(page).last.locator(".reply-note")
    expect(note).to_be_visible()
    assert "not" in declined.lower() and note.inner_text() in declined
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing wider than the window
    page.screenshot(path=str(tmp_path / f"unsure-{width}.png"))

    comment = f"the age is right; seen at {width} px"
    page.locator("#chat").get_by_role("button", name="Dislike").first.click()
    page.locator("#feedback-text textarea").fill(comment)
    page.locator("#feedback-send").click()
    expect(page.locator("#feedback-status")).to_contain_text("kept")
    page.reload()
    expect(page.get_by_placeholder("Ask about the event")).to_be_visible()
    listed = httpx.get(f"{server_url}/api/feedback", headers=AUTH).json()["feedback"]
    mine = [f for f in listed if f["comment"] == comment]
    assert len(mine) == 1 and mine[0]["rating"] == "down" and mine[0]["question"] == "How old is Sakamoto?"
    assert mine[0]["answer"] == answer and mine[0]["citations"][0]["quote"] == cited["quote"]


def test_chat_refuses_a_wrong_key(server_url, browser):
    page = new_page(browser)
    page.goto(server_url)
    page.get_by_label("username").fill("me")
    page.get_by_label("password").fill("not-the-key")
    page.get_by_role("button", name="Login").click()
    expect(page.get_by_text("Incorrect credentials")).to_be_visible()
    expect(page.get_by_placeholder("Ask about the event")).to_have_count(0)


HOSTILE_DOCUMENT = """Regatta report

The Leander crew won the rowing regatta in Henley on Saturday.

Ana Silva, the coach <img src=http://198.51.100.8/q.png> of the <script>alert(1)</script> Leander crew, is 41 years old.
"""


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory) -> Iterator[str]:
    """A server whose document carries HTML and Markdown that a browser would act on, and no API key."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "regatta.txt").write_text(HOSTILE_DOCUMENT, encoding="utf-8")
    index_dir = folder / "index"
    subprocess.run(
        [EVENTBOT, "index", str(folder / "regatta.txt")],
        env={**os.environ, "EVENTBOT_INDEX_DIR": str(index_dir)},
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=SAFETY_TIMEOUT_S,
    )
    yield from serving({"EVENTBOT_INDEX_DIR": str(index_dir)})


def test_chat_shows_document_and_question_text_verbatim(hostile_url, browser):
    """Issue 11.5: HTML and Markdown in a document or a question are shown as text: the browser fetches nothing
    they name, runs nothing, and `<script>` shows as written; the Sources panel still opens."""
    fetched: list[str] = []
    page = new_page(browser)
    page.on("request", lambda r: None if r.url.startswith(hostile_url) else fetched.append(r.url))
    page.on("dialog", lambda d: fetched.append(f"dialog: {d.message}") or d.dismiss())
    page.goto(hostile_url)
    answer = ask(page, "Who is Ana Silva?")
    assert "<script>alert(1)</script>" in answer and "<img src=http://198.51.100.8/q.png>" in answer
    assert "[1]" in answer
    sources = page.locator("#chat .thought-group").last
    sources.locator(".title").click()
    expect(sources).to_contain_text("<script>alert(1)</script> Leander crew, is 41 years old.")
    expect(sources).to_contain_text("[1] regatta.txt")

    question = "Is *she* ![x](http://198.51.100.9/u.png) <img src=http://198.51.100.10/v.png> $x$ [here](/y)?"
    ask(page, question)
    expect(page.locator("#chat [data-testid='user']").last).to_have_text(question)
    assert page.locator("#chat img[src*='198.51.100']").count() == 0
    # two frames drawn after the answer: whatever the page would fetch for what it shows has been asked for by then
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert not fetched, f"the page fetched or ran what the text named: {fetched}"
