"""Documents added to, or removed from, a store whole or not at all: what uploads through the server need (a bad
file, a store going down half-way, the process killed during an upload must all leave the index as it was).

Adding does all the slow work before the store is touched (split, parse, embed every new chunk), then writes a
journal of the chunk ids it is about to add (and the files kept for them), then writes the chunks and records
the new counts, then deletes the journal. A failure rolls back what was written; a journal found later (the
process was killed) is rolled back by `recover` before anything else changes the store.
"""

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from langchain_chroma import Chroma
from langchain_core.documents import Document

from index.chunking import attach_sentences, split_documents
from index.store import StoreUnavailableError, record_counts

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
    store: Chroma, docs: list[Document], chunk_size: int, chunk_overlap: int, journal: Path, files: list[Path]
) -> list[Added]:
    """Add `docs` (new documents: no stored chunk has their paths) all or none. `files` are the copies kept for
    them, deleted too if the documents do not go in. Raises StoreUnavailableError when the store fails (after
    rolling back what it wrote, or leaving the journal for `recover` when it cannot)."""
    prepared: list[tuple[Document, list[Document], list[list[float]], float]] = []
    for doc in docs:
        started = time.perf_counter()
        chunks = split_documents([doc], chunk_size, chunk_overlap)
        attach_sentences(chunks, {doc.metadata["path"]: doc.page_content})
        vectors = store.embeddings.embed_documents([c.page_content for c in chunks])
        prepared.append((doc, chunks, vectors, time.perf_counter() - started))
    ids = [c.metadata["chunk_id"] for _, chunks, _, _ in prepared for c in chunks]
    write_journal(journal, ids, files)
    collection = store._collection
    batch_size = max_batch(store)
    try:
        started = time.perf_counter()
        for _, chunks, vectors, _ in prepared:
            for i in range(0, len(chunks), batch_size):
                batch = chunks[i : i + batch_size]
                collection.add(
                    ids=[c.metadata["chunk_id"] for c in batch],
                    embeddings=vectors[i : i + len(batch)],
                    documents=[c.page_content for c in batch],
                    metadatas=[c.metadata for c in batch],
                )
        record_counts(collection)
        written = time.perf_counter() - started
    except Exception as exc:
        log.warning("adding %d documents failed, rolling back: %s", len(docs), exc)
        recover(collection, journal)
        raise StoreUnavailableError(f"the index could not be written ({exc.__class__.__name__}: {exc})") from exc
    journal.unlink()
    share = written / max(1, len(ids))
    return [
        Added(doc.metadata["source"], len(chunks), len(chunks), seconds + share * len(chunks))
        for doc, chunks, _, seconds in prepared
    ]


def remove_whole(store: Chroma, paths: list[str]) -> int:
    """Delete every chunk of the documents at `paths` (one delete call) and record the new counts; the number of
    chunks removed."""
    collection = store._collection
    ids = [cid for path in paths for cid in collection.get(where={"path": path}, include=[])["ids"]]
    if ids:
        collection.delete(ids=ids)
        record_counts(collection)
    return len(ids)


def recover(collection, journal: Path) -> bool:
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
    try:
        for i in range(0, len(pending["ids"]), 5000):
            collection.delete(ids=pending["ids"][i : i + 5000])
        record_counts(collection)
    except Exception as exc:
        raise StoreUnavailableError(f"an unfinished upload could not be rolled back yet: {exc}") from exc
    for file in pending["files"]:
        Path(file).unlink(missing_ok=True)
    journal.unlink(missing_ok=True)
    log.info("rolled back an unfinished addition of %d chunks", len(pending["ids"]))
    return True


def write_journal(journal: Path, ids: list[str], files: list[Path]) -> None:
    """Written whole (a temporary file renamed into place, then synced) before the store is touched."""
    journal.parent.mkdir(parents=True, exist_ok=True)
    tmp = journal.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump({"ids": ids, "files": [str(p) for p in files]}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, journal)


def max_batch(store: Chroma) -> int:
    """How many records the store takes in one call (Chroma's limit; a few thousand)."""
    try:
        return max(1, min(5000, int(store._client.get_max_batch_size())))
    except Exception:
        return 1000
