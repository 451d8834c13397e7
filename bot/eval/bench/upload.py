"""Issue 23's new user: a generated 20-page PDF report sent to a live server's `POST /api/documents`, then a question
only that report answers, against `eventbot index` of the same file as a whole process."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bot.eval.bench.figures import SectionSkipped, ms, ratio
from bot.eval.bench.processes import EVENTBOT, SERVER_START_TIMEOUT_S, eventbot_env, live_server, timed_output
from bot.eval.distractors import article
from bot.settings import Settings

# Issue 23's user: a 20-page PDF report added in the chat, then a question that only that report answers. The fact is
# made up here (no distractor names it) and opens page UPLOAD_PDF_FACT_PAGE; the other pages are generated news.
UPLOAD_PDF_PAGES = 20
UPLOAD_PDF_FACT_PAGE = 14
UPLOAD_PDF_FACT = (
    "The Quarry Hill Relay, the valley's oldest club race, was won by Oriane Vasseur-Lind, who ran the last leg in "
    "forty-one minutes and brought her team home ahead of sixty others."
)
UPLOAD_PDF_QUESTION = (
    "Who ran the last leg of the Quarry Hill Relay?"  # issue 30's reader declines "Who won …" (p 0.26)
)
UPLOAD_PDF_ANSWER = "Vasseur-Lind"


def upload_pdf(folder: Path) -> tuple[Path, int]:
    """The report a new user adds: UPLOAD_PDF_PAGES pages of generated news (bot.eval.distractors) laid out as a
    PDF with running headers and footers, UPLOAD_PDF_FACT opening page UPLOAD_PDF_FACT_PAGE. Returns its path and
    the page the fact is on in the written PDF (read back with pypdf). SectionSkipped without fpdf2."""
    try:
        from bot.eval.pdfs import make_pdf, paginate
    except ImportError as exc:
        raise SectionSkipped(f"making the PDF needs fpdf2, a dev dependency (pip install -e '.[dev]'): {exc}") from exc
    from pypdf import PdfReader

    def news() -> Iterator[str]:
        number = 0
        while True:  # stories other than the corpus's and the large document's
            yield from article(7907, number).strip().split("\n\n")
            number += 1

    pages = paginate(news(), UPLOAD_PDF_PAGES, first={UPLOAD_PDF_FACT_PAGE: [UPLOAD_PDF_FACT]})
    folder.mkdir(parents=True, exist_ok=True)
    path = make_pdf(folder / "valley-sport-review.pdf", "Valley sport and news review", pages)
    texts = [" ".join(page.extract_text().split()) for page in PdfReader(path).pages]
    fact_pages = [n for n, text in enumerate(texts, 1) if "Quarry Hill Relay" in text]
    if len(texts) != UPLOAD_PDF_PAGES or fact_pages != [UPLOAD_PDF_FACT_PAGE]:
        raise RuntimeError(f"the generated PDF has {len(texts)} pages, the fact on {fact_pages}")
    return path, UPLOAD_PDF_FACT_PAGE


def measure_upload_pdf(f: dict, root: Path) -> None:
    """Issue 23: a new user adds a 20-page PDF in the chat (POST /api/documents, as the chat's upload does) to a
    live server over the article and asks about it (POST /api/ask): seconds from sending the file to the cited
    answer, against `eventbot index` of the same file as a whole process into a fresh index (goal: ≤ 1.2 × that).
    The answer must not abstain and must cite the PDF with the fact's page."""
    import httpx

    from bot.indexing import build_index

    pdf, page = upload_pdf(root / "report")
    f["upload_pdf_pages"] = UPLOAD_PDF_PAGES
    f["upload_pdf_kb"] = round(pdf.stat().st_size / 1000, 1)
    settings = Settings(
        index_dir=root / "served",
        chroma_url=None,
        collection="bench",
        uploads="on",
        uploads_dir=root / "uploads",
        llm="none",
    )
    build_index(settings)  # the article, as a new user finds the bot
    with live_server(settings) as server:
        # `eventbot index` of the file while the server idles (both find the model's files in the page cache)
        fresh = Settings(index_dir=root / "cli-index", chroma_url=None, collection="bench", llm="none")
        seconds, out = timed_output([EVENTBOT, "index", "--json", str(pdf)], eventbot_env(fresh))
        f["index_pdf_s"] = round(seconds, 2)
        f["index_pdf_work_s"] = json.loads(out.strip().splitlines()[-1])["seconds"]  # from chunking to learning
        with httpx.Client(base_url=server.url, timeout=SERVER_START_TIMEOUT_S) as http:
            t0 = time.perf_counter()
            r = http.post("/api/documents", files=[("files", (pdf.name, pdf.read_bytes(), "application/pdf"))])
            uploaded = time.perf_counter()
            r.raise_for_status()
            answer = http.post("/api/ask", json={"question": UPLOAD_PDF_QUESTION})
            answered = time.perf_counter()
            answer.raise_for_status()
    added = r.json()["documents"][0]
    f["upload_pdf_chunks"] = added["chunks"]
    f["upload_pdf_s"] = round(uploaded - t0, 2)
    f["upload_pdf_ask_ms"] = ms(answered - uploaded)
    f["upload_pdf_first_answer_s"] = round(answered - t0, 2)
    f["upload_pdf_vs_index_ratio"] = ratio(f["upload_pdf_first_answer_s"], f["index_pdf_s"])
    f["upload_pdf_vs_index_work_ratio"] = ratio(f["upload_pdf_first_answer_s"], f["index_pdf_work_s"])
    body = answer.json()
    cited = [c for c in body["citations"] if c["source"] == pdf.name]
    if body["abstained"] or UPLOAD_PDF_ANSWER not in body["answer"] or not cited or cited[0].get("page") != page:
        raise RuntimeError(f"not the cited answer expected (page {page}): {body['answer']!r}, {body['citations']}")


OCR_PAGES = 3
DOCX_TEXT_MB = 1.0


def news_paragraphs(chars: int) -> list[str]:
    """Generated news (bot.eval.distractors), at least `chars` characters of it, paragraph by paragraph."""
    paragraphs: list[str] = []
    number = 0
    while sum(map(len, paragraphs)) < chars:
        paragraphs += article(7907, number).strip().split("\n\n")
        number += 1
    return paragraphs


def measure_ocr(f: dict, root: Path) -> None:
    """Issue 60: a scanned PDF (OCR_PAGES pages, each a picture of generated news at 150 dpi, no text layer) read as
    indexing and uploads read it (`index.loaders.read_document`): milliseconds of OCR per page, and the share of the
    words written that it reads back exactly."""
    from index.loaders import read_document
    from index.pdf import INSTALL_TESSERACT, ocr_available

    if not ocr_available():
        raise SectionSkipped(INSTALL_TESSERACT)
    try:
        from bot.eval.pdfs import make_scanned_pdf
    except ImportError as exc:
        raise SectionSkipped(f"making the PDF needs fpdf2, a dev dependency (pip install -e '.[dev]'): {exc}") from exc
    paragraphs, pages = iter(news_paragraphs(20_000)), []
    for _ in range(OCR_PAGES):  # about 1,800 characters a page: what fits the scan's 40 lines
        page = [next(paragraphs)]
        while sum(map(len, page)) < 1_500:
            page.append(next(paragraphs))
        pages.append(page)
    root.mkdir(parents=True, exist_ok=True)
    scan = make_scanned_pdf(root / "scan.pdf", pages)
    started = time.perf_counter()
    doc = read_document(scan.read_bytes(), name=scan.name, path=str(scan))
    f["ocr_pages"] = OCR_PAGES
    f["ocr_ms_per_page"] = ms((time.perf_counter() - started) / OCR_PAGES)
    f["ocr_chars_per_page"] = round(len(doc.page_content) / OCR_PAGES)
    written, read = (Counter(text.split()) for text in (" ".join(p for page in pages for p in page), doc.page_content))
    f["ocr_words_read"] = round(sum((written & read).values()) / sum(written.values()), 3)


def measure_docx(f: dict, root: Path) -> None:
    """Issue 60: DOCX_TEXT_MB of generated news as a Word file and as .txt, each read as indexing reads it
    (`index.loaders.read_document`: markitdown's conversion, made plain; the .txt's checks): seconds each and their
    ratio. Chunking, parsing and embedding, the same for both, take about a minute per MB on 2 cores."""
    from index.loaders import read_document

    try:
        from docx import Document
    except ImportError as exc:
        raise SectionSkipped(f"writing the .docx needs python-docx, a dev dependency: {exc}") from exc
    paragraphs = news_paragraphs(int(DOCX_TEXT_MB * 1e6))
    root.mkdir(parents=True, exist_ok=True)
    word = Document()
    for paragraph in paragraphs:
        word.add_paragraph(paragraph)
    word.save(root / "news.docx")
    (root / "news.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    seconds = {}
    for name in ("news.docx", "news.txt"):
        started = time.perf_counter()
        doc = read_document((root / name).read_bytes(), name=name, path=str(root / name))
        seconds[name] = time.perf_counter() - started
        if doc.page_content != "\n\n".join(paragraphs):
            raise RuntimeError(f"{name} did not read back as the text written")
    f["docx_text_mb"] = DOCX_TEXT_MB
    f["docx_read_s"] = round(seconds["news.docx"], 2)
    f["txt_read_s"] = round(seconds["news.txt"], 3)
