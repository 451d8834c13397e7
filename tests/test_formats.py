"""Word, PowerPoint, Excel, CSV and EPUB files, written here by the libraries that write them, each holding a fact that
is nowhere else: indexed with `eventbot index` and asked with `eventbot ask`, each answered with its fact and a
citation that says where it is (the slide, the heading, the sheet); a damaged, disguised or zip-bomb file is a
one-line error that indexes nothing."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from index.convert import MAX_UNZIPPED_SHARE, plain_text
from index.loaders import DocumentLoadError, read_document
from tests.conftest import run_cli

# (file, question, the fact its answer must name, where the citation must say it is)
FACTS = [
    ("ferry-report.docx", "What pay rise did the ferry union accept on Friday?", "4.5 percent", "Outcome"),
    ("lab-plans.pptx", "How much will the new laboratory in Lyon cost?", "2 million euros", "slide 2"),
    ("bridges.xlsx", "Who was the architect of the Tolva Bridge?", "Marta Veske", "Bridges"),
    ("river-book.epub", "Who designed the new bridge that opened in 1914?", "Paula Brandt", "Chapter Two"),
]


def write_docx(path: Path) -> None:
    from docx import Document

    doc = Document()
    doc.add_heading("Harbour Ferry Report", 0)
    doc.add_paragraph("The ferry strike in Kestrel Bay began on Monday, when the crews stayed in port.")
    doc.add_heading("Demands", 1)
    doc.add_paragraph("Higher pay for the night crews.", style="List Bullet")
    doc.add_paragraph("Two more deckhands on every boat.", style="List Bullet")
    doc.add_heading("Outcome", 1)
    doc.add_paragraph("On Friday the ferry union accepted a pay rise of 4.5 percent, and the boats sailed again.")
    doc.save(path)


def write_pptx(path: Path) -> None:
    from pptx import Presentation

    deck = Presentation()
    for title, body in [
        ("Research plans", "The institute will hire thirty engineers next year.\nTeams move to the new building."),
        ("Next steps", "The new laboratory in Lyon will cost 2 million euros.\nIt opens in the spring."),
    ]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(path)


def write_xlsx(path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Bridges"
    for row in [
        ("Bridge", "Opened", "Architect"),
        ("Tolva Bridge", 1903, "Marta Veske"),
        ("Orn Bridge", 1921, "Jon Ask"),
    ]:
        sheet.append(row)
    book.create_sheet("Notes").append(["The survey of the bridges was finished in May."])
    book.save(path)


def write_epub(path: Path) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("river-book")
    book.set_title("The River Book")
    book.set_language("en")
    chapters = [
        epub.EpubHtml(title="Chapter One", file_name="one.xhtml", content="<h1>Chapter One</h1><p>The Kessel bridge was built of stone by the town's masons.</p>"),
        epub.EpubHtml(title="Chapter Two", file_name="two.xhtml", content="<h1>Chapter Two</h1><p>Floods closed the Kessel bridge in 1911. The new bridge that opened in 1914 was designed by the engineer Paula Brandt.</p>"),
    ]  # fmt: skip
    for chapter in chapters:
        book.add_item(chapter)
    book.toc = chapters
    book.spine = ["nav", *chapters]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(path), book)


WRITERS = {".docx": write_docx, ".pptx": write_pptx, ".xlsx": write_xlsx, ".epub": write_epub}


@pytest.fixture(scope="module")
def office_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("office")
    for name, *_ in FACTS:
        WRITERS[Path(name).suffix](folder / name)
    return folder


def test_each_format_reads_as_plain_lines_with_its_places(office_folder):
    """What the index keeps of each file: headings, list items and slide titles as lines, a table's rows naming
    their columns, no Markdown marks; and where each slide or heading starts."""
    texts = {}
    for name, *_ in FACTS:
        doc = read_document((office_folder / name).read_bytes(), name=name, path=str(office_folder / name))
        texts[Path(name).suffix] = doc
        assert "#" not in doc.page_content and "**" not in doc.page_content and "|" not in doc.page_content, name
        for start, label in doc.metadata["section_starts"]:
            assert doc.page_content[start:].startswith(label) or label.startswith("slide "), (name, label)
    assert "Higher pay for the night crews.\nTwo more deckhands on every boat." in texts[".docx"].page_content
    assert [label for _, label in texts[".docx"].metadata["section_starts"]] == ["Demands", "Outcome"]
    deck = texts[".pptx"]
    assert [label for _, label in deck.metadata["section_starts"]] == ["slide 1", "slide 2"]
    assert deck.page_content[deck.metadata["section_starts"][1][0] :].startswith("Next steps\n")
    assert "Bridge: Tolva Bridge; Opened: 1903; Architect: Marta Veske" in texts[".xlsx"].page_content
    assert texts[".epub"].metadata["title"] == "The River Book"


def test_markdown_made_plain():
    converted = plain_text(
        "# Report\n\nSee [the map](http://x/map.png) and ![a photo](p.jpg).\n\n* one \\*starred\\* item\n- **bold** two\n"
        "\n| Name | Unnamed: 1 |\n|:---|---:|\n| Ada | 36 |\n| | |\n\n## Next\n\n1. first\n"
    )
    assert converted.text == (
        "Report\n\nSee the map and a photo.\n\none *starred* item\nbold two\n\nName: Ada; 36\n\nNext\n\n1. first"
    )
    assert converted.sections == [(0, "Report"), (converted.text.index("Next"), "Next")]


def test_each_file_is_answered_with_its_fact_and_where_it_is(office_folder, tmp_path):
    env = {"EVENTBOT_INDEX_DIR": str(tmp_path / "index")}
    report = json.loads(run_cli("index", "--json", str(office_folder), env=env).stdout.splitlines()[-1])
    assert report["documents"] == len(FACTS), report
    lines = run_cli("ask", "--json", *(q for _, q, _, _ in FACTS), env=env).stdout.splitlines()
    failures = []
    for (name, question, fact, place), line in zip(FACTS, lines, strict=True):
        answer = json.loads(line)
        cited = [c for c in answer["citations"] if c["source"] == name]
        if answer["abstained"] or fact not in answer["answer"] or not cited or cited[0].get("section") != place:
            failures.append(f"{question} → {answer['answer']!r} {answer['citations']}")
    assert not failures, "\n".join(failures)
    readable = run_cli("ask", FACTS[1][1], env=env).stdout
    assert "lab-plans.pptx, slide 2: “" in readable, readable  # the CLI's sources say where the quote is


def bomb() -> bytes:
    """A small zip archive that unzips to far more than MAX_UNZIPPED_SHARE times its size."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"0" * 5_000_000)
    assert len(buffer.getvalue()) * MAX_UNZIPPED_SHARE < 5_000_000
    return buffer.getvalue()


def plain_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "Not a Word document.")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "word"),
    [
        ("damaged.docx", b"PK\x03\x04 not really a zip archive", "not a zip archive"),
        ("locked.pptx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512, "password-protected"),  # an OLE file
        ("bomb.docx", bomb(), "zip bomb"),
        ("other.xlsx", plain_zip(), "cannot be read as .xlsx"),
        ("latin1.csv", "Café,Müller\n".encode("latin-1"), "utf-8"),
    ],
)
def test_a_bad_file_is_one_line_naming_it(name, data, word):
    with pytest.raises(DocumentLoadError) as raised:
        read_document(data, name=name, path=f"/tmp/{name}")
    message = str(raised.value)
    assert message.startswith(f"{name}: ") and "\n" not in message and word in message.lower(), message


def test_eventbot_index_refuses_a_bad_file_and_indexes_nothing(office_folder, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ferry-report.docx").write_bytes((office_folder / "ferry-report.docx").read_bytes())
    (folder / "bomb.docx").write_bytes(bomb())
    env = {"EVENTBOT_INDEX_DIR": str(tmp_path / "index")}
    result = run_cli("index", str(folder), env=env, check=False)
    assert result.returncode == 2 and "bomb.docx" in result.stderr and "zip bomb" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    asked = run_cli("ask", FACTS[0][1], env=env, check=False)  # nothing was indexed: there is no index to ask
    assert asked.returncode == 2 and "eventbot index" in asked.stderr, asked.stderr
