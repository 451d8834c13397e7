"""Read documents from files and folders: .txt and .md as they are, .html through BeautifulSoup, .pdf through pypdf
(index.pdf), Word, PowerPoint, Excel, CSV and EPUB through markitdown (index.convert). The same checks for a file on
disk (`eventbot index`) and for one uploaded (bytes and a name)."""

import logging
import re
import time
import unicodedata
from pathlib import Path

from bs4 import BeautifulSoup
from langchain_core.documents import Document

from index.convert import CONVERTED_SUFFIXES, ConversionError, converted_text
from index.errors import InputError, TooLargeError, UnsupportedError
from index.pdf import PdfTextError, pdf_text

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", *CONVERTED_SUFFIXES}
SUPPORTED = ".txt, .md, .html, .pdf, .docx, .pptx, .xlsx, .csv or .epub"  # how errors and the UI name them
BINARY_SHARE = 0.01  # a "text" file with more control characters than this (or any NUL) is binary


class DocumentLoadError(InputError):
    """A path given to the indexer is missing, unreadable or of a type we do not read; a file that cannot be
    read as a document (empty, binary, invalid UTF-8, a PDF without text)."""


class UnsupportedTypeError(DocumentLoadError, UnsupportedError):
    """A file of a type we do not read (by its name's suffix)."""


class FileTooLargeError(DocumentLoadError, TooLargeError):
    """A file over the size limit (EVENTBOT_MAX_FILE_BYTES)."""


def find_files(paths: list[Path]) -> list[Path]:
    """Expand folders into the supported files they hold; reject missing paths before anything is indexed."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED_SUFFIXES))
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise UnsupportedTypeError(f"{path}: unsupported file type (use {SUPPORTED})")
            files.append(path)
        else:
            raise DocumentLoadError(f"{path}: no such file or folder")
    return files


# Tags that sit inside a sentence ("Ines <b>Moreau</b> won"): their text joins its neighbours. Every other tag
# (p, div, li, h1, td, br, …) ends a line.
INLINE_TAGS = [
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i", "ins", "kbd", "mark",
    "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr",
]  # fmt: skip
DEFAULT_MAX_FILE_BYTES = 5_000_000


def _html_to_text(html: str) -> tuple[str, str | None]:
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "nav", "header", "footer", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(strip=True) if soup.title else None
    for tag in soup(INLINE_TAGS):
        tag.unwrap()
    soup.smooth()  # the text pieces an inline tag split become one
    for text in soup.find_all(string=True):  # HTML's whitespace: a line break inside a paragraph is a space
        if not text.find_parent("pre"):
            text.replace_with(re.sub(r"\s+", " ", text))
    lines = (line.strip() for line in soup.get_text("\n").splitlines())
    return "\n\n".join(line for line in lines if line), title


def load_document(path: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES, ocr: bool = True) -> Document:
    """One file → one Document whose text is what citations quote from; title is its first line or <title>.
    A file over `max_bytes` is refused: parsing and embedding take about a minute per megabyte on a laptop."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DocumentLoadError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    check_size(str(path), size, max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentLoadError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    return read_document(data, name=path.name, path=str(path.resolve()), shown=str(path), ocr=ocr)


def check_size(shown: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise FileTooLargeError(
            f"{shown}: {size / 1e6:.1f} MB is over the limit of {max_bytes / 1e6:g} MB per file "
            "(EVENTBOT_MAX_FILE_BYTES; indexing takes about a minute per MB)"
        )


def read_document(data: bytes, name: str, path: str, shown: str | None = None, ocr: bool = True) -> Document:
    """The Document of a file's bytes: `name` is its source (what citations name), `path` where it is kept (the
    document's identity in the index), `shown` how errors name it; `ocr`: whether a PDF's scanned pages are read by
    OCR. Raises DocumentLoadError with one line; a PDF's pages left unread are said in one logged line."""
    shown = shown or name
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnsupportedTypeError(f"{shown}: unsupported file type (use {SUPPORTED})")
    if not data.strip():
        raise DocumentLoadError(f"{shown}: file is empty")
    metadata = {
        "source": name,
        "path": path,
        "bytes": len(data),
        "indexed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    title = None
    if suffix == ".pdf":
        try:
            read = pdf_text(data, ocr, name)
        except PdfTextError as exc:
            raise DocumentLoadError(f"{shown}: {exc}") from None
        raw, metadata["page_starts"] = read.text, read.page_starts
        if read.unread:
            pages = ", ".join(map(str, read.unread))
            log.warning("%s: page(s) %s have no text and were not read: %s", shown, pages, read.why_unread)
    elif suffix in CONVERTED_SUFFIXES:
        if suffix == ".csv":  # text: the same checks as a .txt
            data = _decode(data, shown).encode()
        try:
            converted = converted_text(data, suffix)
        except ConversionError as exc:
            raise DocumentLoadError(f"{shown}: {exc}") from None
        raw, title = converted.text, converted.title
        if converted.sections:
            metadata["section_starts"] = converted.sections
    else:
        raw = _decode(data, shown)
        if suffix in {".html", ".htm"}:
            raw, title = _html_to_text(raw)
    text = raw.replace("\r\n", "\n")
    stripped = text.strip()
    if not stripped:
        raise DocumentLoadError(f"{shown}: file is empty")
    lead = len(text) - len(text.lstrip())  # offsets into the text as stored (stripped at the front)
    if "page_starts" in metadata:
        metadata["page_starts"] = [max(0, start - lead) for start in metadata["page_starts"]]
    if "section_starts" in metadata:
        metadata["section_starts"] = [(max(0, start - lead), label) for start, label in metadata["section_starts"]]
    if title is None:
        title = stripped.split("\n", 1)[0].lstrip("# ").strip()
    return Document(page_content=stripped, metadata=metadata | {"title": title})


def _decode(data: bytes, shown: str) -> str:
    """UTF-8 text, or DocumentLoadError: a binary file under a text name, or text in another encoding."""
    if b"\x00" in data:
        raise DocumentLoadError(f"{shown}: a binary file, not text (it holds NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentLoadError(f"{shown}: not valid UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark
    controls = sum(1 for c in text if unicodedata.category(c) == "Cc" and c not in "\t\n\r\f")
    if controls > BINARY_SHARE * len(text):
        raise DocumentLoadError(f"{shown}: a binary file, not text ({controls} control characters)")
    return text


def load_documents(paths: list[Path], max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, ocr: bool = True) -> list[Document]:
    """Load every supported file under `paths`; raises DocumentLoadError naming the first bad one."""
    files = find_files(paths)
    if not files:
        raise DocumentLoadError(f"no documents in {', '.join(map(str, paths))} (it reads {SUPPORTED})")
    return [load_document(f, max_file_bytes, ocr) for f in files]
