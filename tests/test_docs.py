"""The user documentation: README.md and docs/*.md. The settings page is generated from the code, the README stays
short, no tracker numbers reach users (history is in CHANGELOG.md), and every relative link leads somewhere."""

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from bot.settings_doc import settings_markdown

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
TRACKER_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
# [text](target) and ![alt](target), the target up to a space (a title) or the closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_settings_page_is_generated_from_settings():
    page = ROOT / "docs" / "settings.md"
    assert page.is_file(), "docs/settings.md is missing: run .venv/bin/python -m bot.settings_doc"
    assert page.read_text(encoding="utf-8") == settings_markdown(), "run .venv/bin/python -m bot.settings_doc"


def test_readme_is_short_and_has_the_two_commands():
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail into docs/"
    assert "make run" in text
    assert "make test" in text


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_tracker_numbers_in_user_documentation(page):
    hits = [
        f"{page_id(page)}:{number}: {match.group(0)}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for match in TRACKER_NUMBER.finditer(line)
    ]
    assert not hits, "tracker numbers belong in CHANGELOG.md, not user documentation:\n" + "\n".join(hits)


def without_code_blocks(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


def relative_links(text: str) -> list[tuple[str, str]]:
    """(path, anchor) of each link that is neither a URL nor a mail address; path "" for an in-page anchor."""
    links = []
    for target in LINK.findall(without_code_blocks(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue
        path, _, anchor = target.partition("#")
        links.append((unquote(path), anchor))
    return links


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    slugs = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", without_code_blocks(markdown), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n, unique = 0, slug
        while unique in slugs:
            n += 1
            unique = f"{slug}-{n}"
        slugs.add(unique)
    return slugs


def test_links_and_anchors_are_read_as_github_does():
    assert relative_links("[a](docs/x.md#part) ![b](images/c.png) [c](https://x.org) [d](#here)") == [
        ("docs/x.md", "part"),
        ("images/c.png", ""),
        ("", "here"),
    ]
    assert anchors("# Using it: the chat\n## `eventbot serve`, then open it\n## Notes\n## Notes\n") == {
        "using-it-the-chat",
        "eventbot-serve-then-open-it",
        "notes",
        "notes-1",
    }


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_relative_links_lead_somewhere(page):
    broken = []
    for path, anchor in relative_links(page.read_text(encoding="utf-8")):
        target = page.parent / path if path else page
        if not target.exists():
            broken.append(f"{path}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{path}#{anchor}: no such heading")
    assert not broken, f"{page_id(page)} has broken links: {broken}"
