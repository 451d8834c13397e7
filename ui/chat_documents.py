"""The chat's Documents panel: the documents the bot answers from, files to add (click or drop), a name to remove,
over the same `bot.library` functions as `/api/documents`."""

import html
import os

import gradio as gr

from bot.errors import (
    DocumentConflictError,
    DocumentLoadError,
    DocumentNotFoundError,
    StoreUnavailableError,
    UploadsOffError,
)
from bot.library import Library, Upload, documents
from bot.serving import ServedBot
from index.loaders import SUPPORTED, SUPPORTED_SUFFIXES
from ui.chat_common import PRIVATE, as_text


def header(bot: ServedBot) -> str:
    docs = bot.documents()
    if len(docs) == 1:
        source, title = docs[0]
        knows = f"one document: <em>{html.escape(title)}</em> (<code>{html.escape(source)}</code>)"
    else:
        shown = ", ".join(f"<code>{html.escape(source)}</code>" for source, _ in docs[:6])
        more = f" and {len(docs) - 6} more" if len(docs) > 6 else ""
        knows = f"{len(docs)} documents: {shown}{more}"
    return (
        "<h1>Ask about the event</h1>"
        f"<p>I answer <strong>only</strong> from {knows}. When {'it doesn' if len(docs) == 1 else 'they don'}'t "
        "say, I tell you so. "
        "<span class='wide-only'>Answers cite their passages as [1], [2]…: click one to read it in its "
        "document. A thumb up or down under a reply tells us how it did.</span></p>"
    )


DOCUMENT_ERRORS = (DocumentLoadError, DocumentConflictError, DocumentNotFoundError, StoreUnavailableError)


def document_table(bot: ServedBot, library: Library) -> str:
    """The documents the bot answers from, each with its summary, as an HTML table (names and summaries escaped:
    they are the uploaders' words)."""
    rows = "".join(
        f"<tr><td><code>{html.escape(d['name'])}</code></td><td>{html.escape(d['summary'] or '')}</td>"
        f"<td>{d['source']}</td><td>{d['chunks']}</td><td>{size(d['bytes'])}</td></tr>"
        for d in documents(bot.bot, library.settings)
    )
    return f"<table><tr><th>document</th><th>summary</th><th>from</th><th>chunks</th><th>size</th></tr>{rows}</table>"


def size(n: int | None) -> str:
    return "" if n is None else f"{n / 1000:,.0f} KB"


def add_uploaded(bot: ServedBot, library: Library, paths: list[str] | None) -> str:
    """Index the files dropped on the upload control (all or none) and serve them; a one-line outcome."""
    if not paths:
        return ""
    uploads = []
    for path in paths:
        with open(path, "rb") as f:
            uploads.append(
                Upload(os.path.basename(path), f.read(library.settings.max_file_bytes + 1), os.path.getsize(path))
            )
    try:
        added = library.add(uploads, then=bot.reload)
    except DOCUMENT_ERRORS as exc:
        return f"Not added: {exc}"
    return "Added " + ", ".join(f"{a.name} ({a.chunks} chunks)" for a in added) + ": ask about it."


def remove_named(bot: ServedBot, library: Library, name: str | None) -> str:
    if not name:
        return ""
    try:
        library.remove(name, then=bot.reload)
    except DOCUMENT_ERRORS as exc:
        return f"Not removed: {exc}"
    return f"Removed {name}."


def changeable(library: Library | None) -> Library | None:
    """`library` if its documents may be changed through the server, else None (the chat shows no panel)."""
    try:
        if library is not None:
            library.check_allowed()
    except UploadsOffError:
        return None
    return library


def documents_panel(demo: gr.Blocks, bot: ServedBot, library: Library, heading: gr.HTML) -> None:
    """The Documents panel: the table of documents, an upload control and a name to remove; each change
    refreshes the table, the header and the names."""
    with gr.Accordion("Documents", open=False, elem_id="documents"):
        table = gr.HTML(document_table(bot, library), padding=False)
        upload = gr.File(
            label=f"Add documents ({SUPPORTED}): click or drop",
            file_count="multiple",
            file_types=sorted(SUPPORTED_SUFFIXES),
            type="filepath",
            elem_id="upload",
        )
        with gr.Row(equal_height=True):
            names = gr.Dropdown(
                [],
                label="Remove a document",
                elem_id="remove-name",
                scale=1,
                allow_custom_value=True,
            )
            remove = gr.Button("Remove", elem_id="remove", variant="secondary", scale=0, min_width=0)
        outcome = gr.Markdown(elem_id="documents-outcome")

    def listed() -> tuple[str, str, gr.Dropdown]:
        names_now = [d["name"] for d in documents(bot.bot, library.settings)]
        return header(bot), document_table(bot, library), gr.Dropdown(choices=names_now, value=None)

    def uploaded(paths: list[str] | None) -> tuple:
        return (as_text(add_uploaded(bot, library, paths)), None, *listed())

    def removed(name: str | None) -> tuple:
        return (as_text(remove_named(bot, library, name)), *listed())

    demo.load(listed, None, [heading, table, names], queue=False, **PRIVATE)
    upload.upload(uploaded, upload, [outcome, upload, heading, table, names], show_progress="full", **PRIVATE)
    remove.click(removed, names, [outcome, heading, table, names], show_progress="full", **PRIVATE)
