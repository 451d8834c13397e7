"""Text out of a PDF, page by page, through pypdf: lines reflowed into paragraphs, words hyphenated at a line end
joined again, running headers and footers ("Report · page 3") dropped so that a sentence across a page break
reads whole, and where each page starts in the text kept, so that a citation can name its page. A page with no
text (a scan: a picture of the page) is read by OCR, Tesseract through pytesseract, from the images it holds.

pypdf rather than pdfminer.six, by measurement (README "Documents"): on the same generated reports both give the
same text in the same order (every sentence found, none out of place) and leave hyphenated line ends to the
caller; pypdf reads a page in 4 ms against pdfminer's 22 ms, and needs no other package.
"""

import io
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field

from tqdm import tqdm

from index.errors import InputError

SENTENCE_END = re.compile(r"[.!?:;…][\"'’”)\]]*$")
HYPHENATED = re.compile(r"[^\W\d_]-$")  # a letter, then a hyphen at the end of the line
DIGITS = re.compile(r"\d+")
PAGE_NUMBER = re.compile(r"^(page\s*)?#(\s*(/|of)\s*#)?$", re.I)  # "3", "Page 3", "3 of 20"
SHORT_LINE = 0.8  # a line ending a sentence and shorter than this share of the page's longest ends a paragraph


class PdfTextError(InputError):
    """The PDF cannot be read for text: damaged, encrypted, or images only."""


INSTALL_TESSERACT = "install Tesseract to read scanned pages (Debian/Ubuntu: apt-get install tesseract-ocr)"


@dataclass
class PdfText:
    text: str
    page_starts: list[int]  # page n (1-based) starts at text offset page_starts[n - 1]
    pages: int
    read_by_ocr: list[int] = field(default_factory=list)  # pages (1-based) without a text layer, read by OCR
    unread: list[int] = field(default_factory=list)  # pages without a text layer that OCR did not read
    why_unread: str = ""  # what to do about them


def ocr_available() -> bool:
    return shutil.which("tesseract") is not None


def pdf_text(data: bytes, ocr: bool = True, name: str = "PDF") -> PdfText:
    """The PDF's text and where its pages start; pages without a text layer are read by OCR when `ocr` is on and
    Tesseract is installed (a progress bar per page), else listed in `unread`. PdfTextError when nothing is left."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # with an owner password only, "" opens it
            raise PdfTextError("the PDF is encrypted (password-protected): save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except PdfTextError:
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file (PdfReadError, ValueError, KeyError, …)
        if isinstance(exc, FileNotDecryptedError | DependencyError):
            raise PdfTextError("the PDF is encrypted (password-protected): save an unprotected copy") from exc
        raise PdfTextError(f"not a readable PDF ({exc.__class__.__name__}: {str(exc)[:120]})") from exc
    if not pages:
        raise PdfTextError("the PDF has no pages")
    page_lines = [_lines(page) for page in pages]
    blank = [i for i, lines in enumerate(page_lines) if not lines]
    why = "OCR is off (EVENTBOT_OCR=off)" if not ocr else "" if ocr_available() else INSTALL_TESSERACT
    read_by_ocr = []
    if blank and not why:
        for i in tqdm(blank, desc=f"Indexing: OCR of {name}", unit="page", disable=None):
            page_lines[i] = _lines(page_by_ocr(reader.pages[i]))
            if page_lines[i]:
                read_by_ocr.append(i + 1)
        why = "no text found in their images (OCR reads a page's scanned images, not its drawings)"
    lines = _without_running_lines(page_lines)
    unread = [i + 1 for i in blank if not page_lines[i]]
    if not any(lines):
        raise PdfTextError(f"no text in the PDF's {len(pages)} page(s) (a scan's pages are pictures of text): {why}")
    read = _reflow(lines)
    read.read_by_ocr, read.unread, read.why_unread = read_by_ocr, unread, why if unread else ""
    return read


def page_by_ocr(page) -> str:
    """The text Tesseract reads in the images a page holds (a scanned page is one image), in their order."""
    import pytesseract

    texts = []
    for image in page.images:
        try:
            texts.append(pytesseract.image_to_string(image.image))
        except Exception:  # an image pypdf cannot decode, or Tesseract refuses: the page stays unread
            continue
    return "\n".join(texts)


def _lines(page: str) -> list[str]:
    return [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in page.splitlines() if line.strip()]


def _without_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Drop the lines at a page's top or bottom (two each: a header may take two lines) that recur, digits aside,
    on at least half of the pages, and bare page numbers: headers and footers, which would otherwise cut a sentence
    that runs on to the next page."""
    if len(pages) < 2:
        return pages
    edges = Counter(DIGITS.sub("#", line) for page in pages for line in {*page[:2], *page[-2:]})
    running = {shape for shape, n in edges.items() if n >= max(2, len(pages) / 2)}

    def is_running(line: str) -> bool:
        shape = DIGITS.sub("#", line)
        return shape in running or bool(PAGE_NUMBER.match(shape))

    return [
        [line for j, line in enumerate(page) if not ((j < 2 or j >= len(page) - 2) and is_running(line))]
        for page in pages
    ]


def _reflow(pages: list[list[str]]) -> PdfText:
    """One text of paragraphs (a blank line between) from the pages' lines. A line joins the one before with a
    space, or without the hyphen when that one ended in a word hyphenated before a lower-case letter; a blank line
    goes after a line clearly short of its page's longest line that ends a sentence (a paragraph's last line) or
    comes before a capital (a heading).
    Paragraphs run on across pages; each page's start is where its first line went."""
    parts: list[str] = []
    length, starts = 0, []
    previous: tuple[str, int] | None = None  # the last line placed, and its page's longest line
    for lines in pages:
        longest = max((len(line) for line in lines), default=0)
        page_start = None
        for line in lines:
            if previous is not None:
                before, before_longest = previous
                short = len(before) < SHORT_LINE * before_longest
                if short and (SENTENCE_END.search(before) or line[:1].isupper()):  # a paragraph's end, a heading
                    separator = "\n\n"
                elif HYPHENATED.search(before) and line[:1].islower():
                    parts[-1], length, separator = before[:-1], length - 1, ""
                else:
                    separator = " "
                parts.append(separator)
                length += len(separator)
            if page_start is None:
                page_start = length
            parts.append(line)
            length += len(line)
            previous = (line, longest)
        starts.append(length if page_start is None else page_start)  # a page without text: where the next starts
    return PdfText(text="".join(parts), page_starts=starts, pages=len(pages))
