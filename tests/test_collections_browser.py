"""The chat's collection picker in a real Chromium against `eventbot serve`: with two collections in the index, a
question reads the picked one only, and picking another starts a new conversation."""

from collections.abc import Iterator

import pytest

from tests import test_browser
from tests.test_browser import ask, bot_messages, expect, new_page, serving
from tests.test_collections import index_dir as index_dir  # the article, and the regatta report in `regatta`
from tests.test_documents import REGATTA_ANSWER, REGATTA_QUESTION

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module's Chromium fixture, shared


@pytest.fixture(scope="module")
def url(index_dir) -> Iterator[str]:
    yield from serving({"EVENTBOT_INDEX_DIR": str(index_dir)})


def test_a_question_reads_the_picked_collection(url, browser):
    page = new_page(browser)
    page.goto(url)
    picker = page.locator("#collection")
    expect(picker).to_be_visible()
    expect(page.locator("#header")).to_contain_text("event-article.txt")
    assert REGATTA_ANSWER not in ask(page, REGATTA_QUESTION)  # the server's own collection: the article

    picker.locator("input").click()
    page.get_by_role("option", name="regatta").click()
    expect(page.locator("#header")).to_contain_text("regatta.txt")
    expect(bot_messages(page)).to_have_count(0)  # a new conversation
    answer = ask(page, REGATTA_QUESTION)
    assert REGATTA_ANSWER in answer and "[1]" in answer
