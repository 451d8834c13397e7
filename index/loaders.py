"""Read documents from files and folders: .txt and .md as they are, .html through BeautifulSoup."""

import re
from pathlib import Path

from bs4 import BeautifulSoup
from langchain_core.documents import Document

SUPPORTED_SUFFIXES = {".txt", ".md", ".markdown", ".html", ".htm"}


class DocumentLoadError(Exception):
    """A path given to the indexer is missing, unreadable or of a type we do not read."""


def find_files(paths: list[Path]) -> list[Path]:
    """Expand folders into the supported files they hold; reject missing paths before anything is indexed."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED_SUFFIXES))
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise DocumentLoadError(f"{path}: unsupported file type (use .txt, .md or .html)")
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


def load_document(path: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Document:
    """One file → one Document whose text is what citations quote from; title is its first line or <title>.
    A file over `max_bytes` is refused: parsing and embedding take about a minute per megabyte on a laptop."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DocumentLoadError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    if size > max_bytes:
        raise DocumentLoadError(
            f"{path}: {size / 1e6:.1f} MB is over the limit of {max_bytes / 1e6:g} MB per file "
            "(EVENTBOT_MAX_FILE_BYTES; indexing takes about a minute per MB)"
        )
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentLoadError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    title = None
    if path.suffix.lower() in {".html", ".htm"}:
        raw, title = _html_to_text(raw)
    text = raw.replace("\r\n", "\n").strip()
    if not text:
        raise DocumentLoadError(f"{path}: file is empty")
    if title is None:
        title = text.split("\n", 1)[0].lstrip("# ").strip()
    resolved = path.resolve()
    return Document(
        page_content=text,
        metadata={"source": path.name, "path": str(resolved), "title": title},
    )


def load_documents(paths: list[Path], max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[Document]:
    """Load every supported file under `paths`; raises DocumentLoadError naming the first bad one."""
    files = find_files(paths)
    if not files:
        raise DocumentLoadError(f"no .txt, .md or .html files in {', '.join(map(str, paths))}")
    return [load_document(f, max_file_bytes) for f in files]
