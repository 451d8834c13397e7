"""Scanned PDFs: a page without a text layer is read by Tesseract; with OCR off, or no Tesseract, the text pages are
indexed and one line says which pages were not read and what to do; a PDF of scans alone is then a one-line error."""

import io
import logging
from pathlib import Path

import pytest
from pypdf import PdfWriter

import index.pdf
from bot.eval.pdfs import make_pdf, make_scanned_pdf
from index.loaders import DocumentLoadError, read_document
from tests.test_documents import REGATTA_PAGES

needs_tesseract = pytest.mark.skipif(
    not index.pdf.ocr_available(), reason="no Tesseract (apt-get install tesseract-ocr); CI installs it"
)


def text_then_scan(tmp_path: Path) -> bytes:
    """Page 1 with a text layer, page 2 a scan of the regatta's second page."""
    writer = PdfWriter()
    writer.append(make_pdf(tmp_path / "text.pdf", "Harbour Regatta", REGATTA_PAGES[:1]))
    writer.append(make_scanned_pdf(tmp_path / "scan.pdf", REGATTA_PAGES[1:]))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@needs_tesseract
def test_a_scanned_page_is_read_by_ocr_on_its_page(tmp_path):
    doc = read_document(text_then_scan(tmp_path), name="mixed.pdf", path="/tmp/mixed.pdf")
    second = doc.metadata["page_starts"][1]
    assert "The Harbour Regatta was won by Ines Moreau" in doc.page_content[second:], doc.page_content
    assert "The regatta opened on a grey morning at Portsea" in doc.page_content[:second]


@pytest.mark.parametrize(
    ("ocr", "tesseract", "hint"), [(False, True, "EVENTBOT_OCR=off"), (True, False, "apt-get install tesseract-ocr")]
)
def test_without_ocr_the_text_pages_are_indexed_and_one_line_names_the_rest(
    tmp_path, monkeypatch, caplog, ocr, tesseract, hint
):
    monkeypatch.setattr(index.pdf, "ocr_available", lambda: tesseract)
    with caplog.at_level(logging.WARNING, logger="index.loaders"):
        doc = read_document(text_then_scan(tmp_path), name="mixed.pdf", path="/tmp/mixed.pdf", ocr=ocr)
    assert "Portsea" in doc.page_content and "Ines Moreau" not in doc.page_content
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith("mixed.pdf: page(s) 2 have no text") and hint in line, line

    with pytest.raises(DocumentLoadError) as raised:  # scans alone: nothing to index
        read_document(
            make_scanned_pdf(tmp_path / "s.pdf", REGATTA_PAGES).read_bytes(), name="s.pdf", path="/tmp/s.pdf", ocr=ocr
        )
    assert str(raised.value).startswith("s.pdf: no text in the PDF's 2 page(s)") and hint in str(raised.value)
