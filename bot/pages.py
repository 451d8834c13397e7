"""Pages in citations: a quote from a PDF names the page it is on, from what indexing kept of each chunk (the
page it starts on, and where later pages start in it: index.chunking.place_pages). Added after the answer is
made, from one store read of the cited chunks, and only when a PDF is cited: by the server (bot.served) and by
`eventbot ask` / `eventbot chat` alike."""

import logging

from bot.types import Answer
from index.chunking import page_at

log = logging.getLogger(__name__)


def with_pages(answer: Answer, collection) -> Answer:
    """`answer` with `page` set on each citation of a PDF (the answer is changed in place and returned)."""
    cited = [c for c in answer.citations if c.source.lower().endswith(".pdf")]
    if not cited:
        return answer
    try:
        got = collection.get(ids=sorted({c.chunk_id for c in cited}), include=["metadatas", "documents"])
    except Exception:  # a page is a nicety: the answer stands without it
        log.warning("could not read the cited chunks' pages", exc_info=True)
        return answer
    chunks = {cid: (meta, text) for cid, meta, text in zip(got["ids"], got["metadatas"], got["documents"], strict=True)}
    for citation in cited:
        if citation.chunk_id in chunks:
            meta, text = chunks[citation.chunk_id]
            citation.page = page_at(meta, max(0, text.find(citation.quote)))
    return answer


def ask_with_pages(bot, question: str, history=None) -> Answer:
    """`bot.ask(question, history)`, its PDF citations naming their pages (read from the bot's own store)."""
    return with_pages(bot.ask(question, history), bot.store._collection)
