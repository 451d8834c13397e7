"""Word, PowerPoint, Excel, CSV and EPUB files as text, through markitdown (Microsoft's converter to Markdown, which
wraps mammoth, python-pptx, openpyxl and pandas), then made plain for quoting: headings, list items and slide titles
stay lines of their own, a table's rows become lines that name their columns ("Skater: Alysa Liu; Medal: Gold"), and
where each slide or heading starts is kept, so that a citation can say where its quote is.

markitdown rather than each format's library by hand: one well-kept package reads all five, keeps the headings,
lists and slide titles, and is what the tools people use for this read these files with (choice and figures in
docs/documents.md). Each format goes straight to its own converter: nothing is read from the network and no model
is loaded. `.odt` is not read: the library has no converter for it.
"""

import io
import re
import zipfile
from dataclasses import dataclass

from index.errors import InputError

CONVERTED_SUFFIXES = {".docx", ".pptx", ".xlsx", ".csv", ".epub"}  # each read by its markitdown converter
ZIPPED_SUFFIXES = {".docx", ".pptx", ".xlsx", ".epub"}  # each is a zip archive of XML
MAX_UNZIPPED_SHARE = 100  # an archive that unzips to more than 100 times its size (a zip bomb) is refused

SLIDE = re.compile(r"<!-- Slide number: (\d+) -->")
HEADING = re.compile(r"#{1,6}\s+(.*?)\s*#*")
BULLET = re.compile(r"[*+-]\s+")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")  # [text](target) and ![alt](image): the text
EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?")


class ConversionError(InputError):
    """A file markitdown cannot read: damaged, password-protected, or not the format its name says."""


@dataclass
class ConvertedText:
    text: str
    sections: list[tuple[int, str]]  # (offset in text, "slide 3" or a heading) where each slide or section starts
    title: str | None


def converted_text(data: bytes, suffix: str) -> ConvertedText:
    """The file's text as the index keeps it (see the module's docstring); ConversionError with one line when it
    cannot be read. Each format goes to its own markitdown converter (no guessing of the format from the bytes); a
    CSV file is UTF-8 (index.loaders checks it as it checks a .txt)."""
    from markitdown import StreamInfo, converters

    converter = {
        ".docx": converters.DocxConverter,
        ".pptx": converters.PptxConverter,
        ".xlsx": converters.XlsxConverter,
        ".csv": converters.CsvConverter,
        ".epub": converters.EpubConverter,
    }[suffix]()
    if suffix in ZIPPED_SUFFIXES:
        check_archive(data, suffix)
    info = StreamInfo(extension=suffix, charset="utf-8" if suffix == ".csv" else None)
    try:
        result = converter.convert(io.BytesIO(data), info)
    except Exception as exc:  # each library raises its own errors
        raise ConversionError(f"cannot be read as {suffix} ({_reason(exc)})") from None
    return plain_text(result.markdown, slides=suffix == ".pptx", title=result.title)


def check_archive(data: bytes, suffix: str) -> None:
    """An Office file or e-book is a zip archive: one that is not (a password-protected Office file is not), or
    that would unzip to over MAX_UNZIPPED_SHARE times its size, is refused before any of it is unpacked."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile:
        raise ConversionError(
            f"not a {suffix} file (not a zip archive: damaged, password-protected, or another format)"
        ) from None
    if unzipped > MAX_UNZIPPED_SHARE * max(len(data), 1):
        raise ConversionError(
            f"unzips to {unzipped / 1e6:.0f} MB from {len(data) / 1e6:.1f} MB (over {MAX_UNZIPPED_SHARE} times its size:"
            " a zip bomb?); save it again or as .txt"
        )


def _reason(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else exc.__class__.__name__


def plain_text(markdown: str, slides: bool = False, title: str | None = None) -> ConvertedText:
    """markitdown's Markdown made plain, line by line; `slides`: a presentation, whose sections are its slides."""
    lines: list[str] = []
    sections: list[tuple[int, str]] = []
    at = 0  # the offset where the next line starts
    table: list[list[str]] = []

    def add(line: str) -> None:
        nonlocal at
        lines.append(line)
        at += len(line) + 1

    def flush_table() -> None:
        for row in table_lines(table):
            add(row)
        table.clear()

    for raw in markdown.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if line.startswith("|"):
            if not TABLE_RULE.fullmatch(line):
                table.append([_inline(cell.strip()) for cell in line.strip("|").split("|")])
            continue
        flush_table()
        if slide := SLIDE.fullmatch(line):
            if slides:
                sections.append((at, f"slide {slide.group(1)}"))
            continue
        if heading := HEADING.fullmatch(line):
            line = _inline(heading.group(1))
            if not slides and line:
                sections.append((at, line))
        elif bullet := BULLET.match(line):
            line = _inline(line[bullet.end() :])
        else:
            line = _inline(line)
        if line or (lines and lines[-1]):  # one blank line between paragraphs
            add(line)
    flush_table()
    return ConvertedText("\n".join(lines).rstrip("\n"), sections, title)  # no blank line ever leads


def _inline(text: str) -> str:
    """Markdown's inline marks dropped: links and images to their text, bold to its words, escapes undone."""
    text = LINK.sub(r"\1", text)
    text = EMPHASIS.sub(r"\2", text)
    return ESCAPED.sub(r"\1", text).strip()


def table_lines(rows: list[list[str]]) -> list[str]:
    """A table's rows as lines that name their columns ("Skater: Alysa Liu; Country: USA"), so that each row reads
    as a sentence on its own; a table of one row (a header alone) is that row's cells. pandas names a column it
    found no header for "Unnamed: 2": such a cell is given without a name."""
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    if not body:
        return ["; ".join(cell for cell in header if cell)]
    named = [h if h and not h.startswith("Unnamed:") else "" for h in header]
    out = []
    for row in body:
        cells = [f"{name}: {cell}" if name else cell for name, cell in zip(named, row, strict=False) if cell]
        if cells:
            out.append("; ".join(cells))
    return out
