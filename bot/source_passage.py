"""Where a citation sits in its document.

A cited quote with the paragraphs around it, rebuilt from the stored chunks next to the cited one, for the chat's
citation view and `GET /api/documents/{name}/passage`; for a PDF, the page it is on (from what indexing kept of each
chunk's pages: index.chunking.place_pages). The citations of an answer name their pages already (bot.answer.cite).
"""

import re

from pydantic import BaseModel, Field

from bot.answer.corpus import page_at, section_at, stitch
from bot.errors import DocumentNotFoundError, InputError, PassageNotFoundError
from index.store import read_chunks, store_errors

NEIGHBOUR_CHUNKS = 2  # chunks read on each side of the cited one (~400 characters each)
AROUND_PARAGRAPHS = 2  # paragraphs shown on each side of the quote's own
AROUND_CHARS = 1200  # at most this much on each side (a PDF's text may have no paragraph breaks)
PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\n")


class SourcePassage(BaseModel):
    """A cited quote in its document: the text before it, the quote verbatim, the text after it."""

    source: str = Field(description="The document's name, as citations give it")
    chunk_id: str
    before: str = Field(description="The paragraphs before the quote, up to its first character")
    quote: str = Field(description="The cited text, verbatim (the whole chunk when no quote was asked for)")
    after: str = Field(description="From the quote's last character to the end of the paragraphs after it")
    page: int | None = Field(None, description="The page of a PDF the quote is on; null for other documents")
    section: str | None = Field(None, description="The slide or heading it is under (a converted document); else null")


def passage_of(bot, name: str, chunk_id: str, quote: str | None = None) -> SourcePassage:
    """Where `quote` (by default the whole chunk) sits in the document called `name`: the chunk `chunk_id` with
    its neighbours, cut to a few paragraphs on each side. DocumentNotFoundError / PassageNotFoundError (404) for
    an unknown name or a chunk not in it, InputError (422) for a quote the chunk does not hold."""
    knowledge = bot.knowledge
    path = next((path for path, (source, _title) in knowledge.sources.items() if source == name), None)
    if path is None:
        raise DocumentNotFoundError(f"no indexed document is called {name!r}")
    starts = knowledge.chunk_starts.get(path, [])
    at = next((i for i, (_start, cid) in enumerate(starts) if cid == chunk_id), None)
    if at is None:
        raise PassageNotFoundError(f"{name} has no chunk {chunk_id!r}")
    ids = [cid for _start, cid in starts[max(0, at - NEIGHBOUR_CHUNKS) : at + NEIGHBOUR_CHUNKS + 1]]
    with store_errors():
        chunks = {c.metadata["chunk_id"]: (c.metadata, c.page_content) for c in read_chunks(bot.store, ids)}
    if chunk_id not in chunks:
        raise PassageNotFoundError(f"{name} has no chunk {chunk_id!r}")
    meta, text = chunks[chunk_id]
    quote = quote if quote is not None else text
    offset = text.find(quote) if quote.strip() else -1
    if offset < 0:
        raise InputError("the quote is not in that chunk: send a citation's `quote` with its own `chunk_id`")
    pieces = sorted((int(m["start"]), t) for m, t in chunks.values())
    origin = pieces[0][0]
    whole = stitch(pieces, origin)
    at_quote = int(meta["start"]) + offset - origin
    return SourcePassage(
        source=name,
        chunk_id=chunk_id,
        before=_last_paragraphs(whole[:at_quote]),
        quote=quote,
        after=_first_paragraphs(whole[at_quote + len(quote) :]),
        page=page_at(meta, offset),
        section=section_at(meta, offset),
    )


def _last_paragraphs(text: str) -> str:
    """The end of `text`: the paragraph the quote starts in and AROUND_PARAGRAPHS before it, at most AROUND_CHARS."""
    breaks = [m.end() for m in PARAGRAPH_BREAK.finditer(text)]
    cut = breaks[-AROUND_PARAGRAPHS - 1] if len(breaks) > AROUND_PARAGRAPHS else 0
    return text[max(cut, len(text) - AROUND_CHARS) :]


def _first_paragraphs(text: str) -> str:
    """The start of `text`: to the end of the quote's paragraph and AROUND_PARAGRAPHS after it, at most AROUND_CHARS."""
    breaks = [m.start() for m in PARAGRAPH_BREAK.finditer(text)]
    cut = breaks[AROUND_PARAGRAPHS] if len(breaks) > AROUND_PARAGRAPHS else len(text)
    return text[: min(cut, AROUND_CHARS)]
