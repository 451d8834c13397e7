"""PDFs made for the tests and `eventbot bench` (fpdf2, a dev dependency: import this module only where that is
installed, or catch the ImportError): laid out like real reports, with running headers and footers and words
hyphenated at line ends, so that what the loader reads back can be checked against the text put in. Also the bad
kinds an upload must refuse: an encrypted PDF and one of images only (no text layer)."""

from collections.abc import Iterator
from pathlib import Path

from fpdf import FPDF

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # Debian's fonts-dejavu-core (chromium needs it)
LINE_CHARS = 78  # characters per line of the body text
LINE_MM, GAP_MM = 5.2, 3.0  # height of a body line, gap after a paragraph
BODY_MM = 250.0  # what fits of them on an A4 page between the running header (20 mm) and the footer's margin (20 mm)
LATIN1 = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-", "…": "..."})


def wrap(paragraph: str, width: int = LINE_CHARS) -> list[str]:
    """Greedy line breaking that hyphenates a long word which does not fit (as typesetting does): the loader
    must join `medal-` + `ist` back into one word."""
    lines, line = [], ""
    for word in paragraph.split():
        candidate = f"{line} {word}".strip()
        if len(candidate) <= width:
            line = candidate
            continue
        room = width - len(line) - 2  # a space and the hyphen
        if len(word) >= 8 and word.isalpha() and room >= 3:
            cut = min(room, len(word) - 3)
            lines.append(f"{line} {word[:cut]}-".strip())
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


class Report(FPDF):
    def __init__(self, title: str):
        super().__init__(format="A4")
        self.title_text = title
        if FONT.exists():
            self.add_font("body", fname=str(FONT))
            self.family, self.latin1 = "body", False
        else:
            self.family, self.latin1 = "Helvetica", True
        self.set_auto_page_break(True, margin=20)

    def text_of(self, text: str) -> str:
        return text.translate(LATIN1) if self.latin1 else text

    def header(self) -> None:
        self.set_font(self.family, size=8)
        self.cell(0, 6, self.text_of(f"{self.title_text} · press release"), align="R")
        self.ln(10)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font(self.family, size=8)
        self.cell(0, 6, f"Page {self.page_no()}", align="C")


def make_pdf(path: Path, title: str, pages: list[list[str]]) -> Path:
    """A PDF of `pages`, each a list of paragraphs that start on that page (a paragraph too long for its page
    runs on to the next, as in any report)."""
    pdf = Report(title)
    for paragraphs in pages:
        pdf.add_page()
        pdf.set_font(pdf.family, size=10.5)
        for paragraph in paragraphs:
            for line in wrap(pdf.text_of(paragraph)):
                pdf.cell(0, LINE_MM, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(GAP_MM)
    pdf.output(str(path))
    return path


def paginate(paragraphs: Iterator[str], pages: int, first: dict[int, list[str]] | None = None) -> list[list[str]]:
    """`pages` pages for `make_pdf`, each filled with the next of `paragraphs` while they fit whole (so that no
    paragraph runs on to the next page and page `n` of the list is page `n` of the PDF); `first[n]`: paragraphs
    that open page `n` (counted from 1) before the filling."""
    filled: list[list[str]] = []
    pending: str | None = None
    for number in range(1, pages + 1):
        page = list((first or {}).get(number, []))
        used = sum(height(p) for p in page)
        while True:
            paragraph = pending if pending is not None else next(paragraphs, None)
            pending = None
            if paragraph is None:
                break
            need = height(paragraph)
            if used + need > BODY_MM and page:  # (a paragraph longer than a page runs on from an empty one)
                pending = paragraph
                break
            page.append(paragraph)
            used += need
        filled.append(page)
    return filled


def height(paragraph: str) -> float:
    """Millimetres a paragraph of body text takes on the page, its gap included."""
    return len(wrap(paragraph)) * LINE_MM + GAP_MM


def make_encrypted_pdf(path: Path, text: str) -> Path:
    pdf = Report("Encrypted")
    pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    pdf.add_page()
    pdf.set_font(pdf.family, size=11)
    pdf.multi_cell(0, 6, pdf.text_of(text))
    pdf.output(str(path))
    return path


def make_image_only_pdf(path: Path, pages: int = 2) -> Path:
    """What a scanner makes: pages of drawing and no text at all (no header or footer either)."""
    pdf = FPDF(format="A4")
    for _ in range(pages):
        pdf.add_page()
        for i in range(30):
            pdf.set_fill_color(20 + 7 * i, 40, 90)
            pdf.rect(20, 20 + 8 * i, 40 + 4 * i, 5, style="F")
    pdf.output(str(path))
    return path


def make_scanned_pdf(path: Path, pages: list[list[str]], dpi: int = 150) -> Path:
    """What a scanner makes of a printed report: each page one picture of its text (rendered with Pillow at `dpi`)
    and no text layer, so that only OCR can read it."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = round(210 / 25.4 * dpi), round(297 / 25.4 * dpi)
    font = ImageFont.truetype(str(FONT), round(dpi / 6)) if FONT.is_file() else ImageFont.load_default(dpi / 6)
    pdf = FPDF(format="A4")
    for paragraphs in pages:
        image = Image.new("L", (width, height), 255)
        draw, y = ImageDraw.Draw(image), dpi
        for paragraph in paragraphs:
            for line in wrap(paragraph, 60):
                draw.text((dpi, y), line, fill=0, font=font)
                y += round(dpi / 4)
            y += round(dpi / 6)
        pdf.add_page()
        pdf.image(image, x=0, y=0, w=210, h=297)
    pdf.output(str(path))
    return path
