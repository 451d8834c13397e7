"""Kept conversations in a real Chromium against `eventbot serve` (no API key: each browser's are its own): a
conversation survives a page reload and a server restart, goes on where it stopped, can be reopened and deleted,
and another browser sees none of it."""

from pathlib import Path

import pytest

from tests import test_browser
from tests.conftest import serve_process
from tests.test_browser import ask, bot_messages, expect, new_page
from tests.test_chroma_server import free_port

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module's Chromium fixture, shared

SILVER, AGE, GOLD = "Who won the silver medal?", "How old is she?", "Who won the gold medal?"


def questions(page) -> list[str]:
    return [q.strip() for q in page.locator("#chat [data-testid='user']").all_inner_texts()]


def kept_choices(page) -> list[str]:
    """The Conversations panel's list (the panel opened, the picker's options read, then closed again)."""
    panel = page.locator("#conversations")
    if not panel.locator("#conversation-picker").is_visible():
        panel.get_by_text("Conversations").first.click()
    panel.locator("#conversation-picker input").click()
    options = page.get_by_role("option")
    names = options.all_inner_texts() if options.count() else []
    page.keyboard.press("Escape")
    return [n.removeprefix("✓").strip() for n in names]  # the open one is ticked


def test_a_conversation_survives_reload_and_restart_and_can_be_deleted(index_dir, tmp_path: Path, browser):
    port = str(free_port())  # the same origin after the restart: the browser's token is kept per origin
    env = {
        "EVENTBOT_INDEX_DIR": str(index_dir),
        "EVENTBOT_API_KEY": "",
        "EVENTBOT_CONVERSATIONS_PATH": str(tmp_path / "conversations.sqlite3"),
    }
    page = new_page(browser)
    with serve_process(env, "--port", port) as served:
        page.goto(served.url)
        assert "Sakamoto" in ask(page, SILVER)
        page.reload()
        expect(page.locator("#chat [data-testid='user']")).to_have_count(1)
        assert questions(page) == [SILVER] and "Sakamoto" in bot_messages(page).first.inner_text()
        assert "25" in ask(page, AGE)  # the follow-up reads the reopened conversation's history

        stranger = new_page(browser)  # another browser: its own local storage
        stranger.goto(served.url)
        expect(stranger.get_by_placeholder("Ask about the event")).to_be_visible()
        assert questions(stranger) == [] and kept_choices(stranger) == []

        page.locator("#clear").click()  # New: a new conversation, the first one kept
        expect(bot_messages(page)).to_have_count(0)
        assert "Liu" in ask(page, GOLD)
        choices = kept_choices(page)
        assert len(choices) == 2 and choices[0].startswith(GOLD) and "1 question" in choices[0]
        assert choices[1].startswith(SILVER) and "2 questions" in choices[1]

    with serve_process(env, "--port", port) as served:  # a restart: the open conversation is reopened
        page.goto(served.url)
        expect(page.locator("#chat [data-testid='user']")).to_have_count(1)
        assert questions(page) == [GOLD]
        panel = page.locator("#conversations")
        panel.get_by_text("Conversations").first.click()
        panel.locator("#conversation-picker input").click()
        page.get_by_role("option", name=SILVER, exact=False).click()
        expect(page.locator("#chat [data-testid='user']")).to_have_count(2)
        assert questions(page) == [SILVER, AGE]
        expect(page.locator("#chat .thought-group").first).to_contain_text("Sources (")  # its citations too

        panel.locator("#conversation-delete").click()
        expect(page.locator("#conversation-status")).to_contain_text("Deleted")
        expect(page.locator("#chat [data-testid='user']")).to_have_count(0)
        choices = kept_choices(page)
        assert len(choices) == 1 and choices[0].startswith(GOLD)
        page.reload()  # the deleted one is not reopened
        expect(page.get_by_placeholder("Ask about the event")).to_be_visible()
        assert questions(page) == []
