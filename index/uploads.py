"""Documents added to, or removed from, a store whole or not at all: what uploads through the server need (a bad
file, a store going down half-way, the process killed during an upload must all leave the index as it was).

Adding does all the slow work before the store is touched (split, parse, embed every new chunk), then writes a
journal of the chunk ids it is about to add (and the files kept for them), then writes the chunks and records
the new counts, then deletes the journal. A failure rolls back what was written; a journal found later (the
process was killed) is rolled back by `recover` before anything else changes the store.
"""

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from langchain_core.documents import Document

from index.chunking import attach_sentences, split_documents
from index.files import write_whole
from index.store import (
    Store,
    StoreUnavailableError,
    delete_chunks,
    embed_chunks,
    read_metadatas,
    record_counts,
    store_errors,
    write_chunks,
)

log = logging.getLogger(__name__)


@dataclass
class Added:
    name: str
    chunks: int
    added: int
    seconds: float

    def as_dict(self) -> dict:
        return {"name": self.name, "chunks": self.chunks, "added": self.added, "seconds": round(self.seconds, 2)}


def add_whole(
    store: Store, docs: list[Document], chunk_size: int, chunk_overlap: int, journal: Path, files: list[Path]
) -> list[Added]:
    """Add `docs` (new documents: no stored chunk has their paths) all or none. `files` are the copies kept for
    them, deleted too if the documents do not go in. Raises StoreUnavailableError when the store fails (after
    rolling back what it wrote, or leaving the journal for `recover` when it cannot)."""
    prepared: list[tuple[Document, list[Document], list[list[float]], float]] = []
    for doc in docs:
        started = time.perf_counter()
        chunks = split_documents([doc], chunk_size, chunk_overlap)
        attach_sentences(chunks, {doc.metadata["path"]: doc.page_content})
        vectors = embed_chunks(store, chunks)
        prepared.append((doc, chunks, vectors, time.perf_counter() - started))
    ids = [c.metadata["chunk_id"] for _, chunks, _, _ in prepared for c in chunks]
    write_journal(journal, ids, files)
    try:
        started = time.perf_counter()
        with store_errors("the index could not be written"):
            for _, chunks, vectors, _ in prepared:
                write_chunks(store, chunks, vectors)
            record_counts(store)
        written = time.perf_counter() - started
    except StoreUnavailableError as exc:
        log.warning("adding %d documents failed, rolling back: %s", len(docs), exc)
        recover(store, journal)
        raise
    journal.unlink()
    share = written / max(1, len(ids))
    return [
        Added(doc.metadata["source"], len(chunks), len(chunks), seconds + share * len(chunks))
        for doc, chunks, _, seconds in prepared
    ]


def remove_whole(store: Store, paths: list[str]) -> int:
    """Delete every chunk of the documents at `paths` (one delete call) and record the new counts; the number of
    chunks removed."""
    ids = [cid for path in paths for cid in read_metadatas(store, where={"path": path})]
    if ids:
        delete_chunks(store, ids)
        record_counts(store)
    return len(ids)


def recover(store: Store, journal: Path) -> bool:
    """Undo an addition that did not finish (its journal is still there): delete the chunks and files it names,
    then the journal. True when there was one. When the store cannot be written the journal stays for next time
    and StoreUnavailableError is raised."""
    try:
        pending = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        log.warning("unreadable journal %s: removed", journal)
        journal.unlink(missing_ok=True)
        return False
    with store_errors("an unfinished upload could not be rolled back yet"):
        delete_chunks(store, pending["ids"])
        record_counts(store)
    for file in pending["files"]:
        Path(file).unlink(missing_ok=True)
    journal.unlink(missing_ok=True)
    log.info("rolled back an unfinished addition of %d chunks", len(pending["ids"]))
    return True


def write_journal(journal: Path, ids: list[str], files: list[Path]) -> None:
    """Written whole (a temporary file renamed into place, then synced) before the store is touched."""
    write_whole(journal, json.dumps({"ids": ids, "files": [str(p) for p in files]}))
