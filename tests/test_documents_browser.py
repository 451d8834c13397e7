"""The chat's Documents panel in a real Chromium against `eventbot serve` (uploads on): a PDF added in the page is
answered with its page cited, and once removed the same question is declined; Word, PowerPoint, Excel and EPUB
files' answers cite their heading, slide, sheet or chapter."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.eval.pdfs import make_pdf, make_scanned_pdf
from bot.types import place_of
from index.pdf import ocr_available
from tests import test_browser
from tests.conftest import run_cli
from tests.test_browser import ask, bot_messages, expect, new_page, serving
from tests.test_documents import REGATTA_ANSWER, REGATTA_PAGES, REGATTA_QUESTION
from tests.test_formats import FACTS, WRITERS

pytestmark = pytest.mark.browser
browser = test_browser.browser  # the module's Chromium fixture, shared


@pytest.fixture(scope="module")
def uploads_url(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("chat-uploads")
    run_cli("index", env={"EVENTBOT_INDEX_DIR": str(folder / "index")})
    yield from serving(
        {
            "EVENTBOT_INDEX_DIR": str(folder / "index"),
            "EVENTBOT_UPLOADS": "on",
            "EVENTBOT_UPLOADS_DIR": str(folder / "uploads"),
        }
    )


def test_add_a_pdf_in_the_chat_ask_it_then_remove_it(uploads_url, browser, tmp_path):
    pdf = make_pdf(tmp_path / "regatta.pdf", "Harbour Regatta", REGATTA_PAGES)
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.goto(uploads_url)
    page.locator("#documents").get_by_text("Documents").first.click()
    panel = page.locator("#documents")
    expect(panel).to_contain_text("event-article.txt")
    expect(panel).to_contain_text("who would go on to win the gold medal")  # the article's summary: a key sentence

    page.locator("#upload input[type=file]").set_input_files(str(pdf))
    expect(page.locator("#documents-outcome")).to_contain_text("Added regatta.pdf")
    expect(panel).to_contain_text("regatta.pdf")
    expect(page.locator("#header")).to_contain_text("regatta.pdf")  # "I answer only from …" follows the index
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # still fits a phone

    answer = ask(page, REGATTA_QUESTION)
    assert REGATTA_ANSWER in answer and "[1]" in answer
    sources = page.locator("#chat .thought-group").last
    sources.locator(".title").click()
    expect(sources).to_contain_text("regatta.pdf, page 2")

    page.locator("#remove-name input").fill("regatta.pdf")
    page.locator("#remove-name input").press("Enter")
    page.locator("#remove").click()
    expect(page.locator("#documents-outcome")).to_contain_text("Removed regatta.pdf")
    expect(page.locator("#header")).not_to_contain_text("regatta.pdf")

    before = bot_messages(page).count()
    declined = ask(page, REGATTA_QUESTION)
    assert bot_messages(page).count() == before + 1
    assert REGATTA_ANSWER not in declined and "[1]" not in declined


def test_office_files_added_in_the_chat_are_cited_where_their_facts_are(uploads_url, browser, tmp_path):
    """A Word, PowerPoint, Excel and EPUB file added at once in the Documents panel: each fact answered, its
    Sources line naming the file and the heading, slide, sheet or chapter; then removed."""
    for name, *_ in FACTS:
        WRITERS[Path(name).suffix](tmp_path / name)
    page = new_page(browser)
    page.goto(uploads_url)
    page.locator("#documents").get_by_text("Documents").first.click()
    page.locator("#upload input[type=file]").set_input_files([str(tmp_path / name) for name, *_ in FACTS])
    for name, *_ in FACTS:
        expect(page.locator("#documents-outcome")).to_contain_text(name)

    for name, question, fact, place in FACTS:
        answer = ask(page, question)
        assert fact in answer and "[1]" in answer, answer
        sources = page.locator("#chat .thought-group").last
        sources.locator(".title").click()
        expect(sources).to_contain_text(name + place_of(None, place))
    for name, *_ in FACTS:
        assert httpx.delete(f"{uploads_url}/api/documents/{name}").status_code == 200


@pytest.mark.skipif(not ocr_available(), reason="no Tesseract (apt-get install tesseract-ocr); CI installs it")
def test_a_scanned_pdf_added_in_the_chat_is_read_and_cited_by_its_page(uploads_url, browser, tmp_path):
    scan = make_scanned_pdf(tmp_path / "regatta-scan.pdf", REGATTA_PAGES)
    page = new_page(browser)
    page.goto(uploads_url)
    page.locator("#documents").get_by_text("Documents").first.click()
    page.locator("#upload input[type=file]").set_input_files(str(scan))
    expect(page.locator("#documents-outcome")).to_contain_text("Added regatta-scan.pdf")
    answer = ask(page, REGATTA_QUESTION)
    assert REGATTA_ANSWER in answer and "[1]" in answer, answer
    sources = page.locator("#chat .thought-group").last
    sources.locator(".title").click()
    expect(sources).to_contain_text("regatta-scan.pdf, page 2")
    assert httpx.delete(f"{uploads_url}/api/documents/regatta-scan.pdf").status_code == 200
