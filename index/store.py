"""The Chroma store: embedded (a folder) or a `chroma run` server, and idempotent indexing into it.

This is the one module that talks to Chroma (a `Store`: the client, the collection, the embedder its vectors come
from), through chromadb's public API: every read and write of chunks elsewhere goes through the functions under
"Reading and writing chunks", and a store's failure becomes `StoreUnavailableError` at one boundary, `store_errors`
(httpx's `map_exceptions` is the model)."""

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import chromadb
import httpx
from chromadb.config import Settings as ChromaSettings
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from index.chunking import attach_sentences, split_documents
from index.errors import UnavailableError

log = logging.getLogger(__name__)

EMBED_BATCH = 256  # chunks per add to the store (the model encodes them 64 at a time)
INDEX_FILE = "chroma.sqlite3"  # what Chroma writes in an index folder; named nowhere else
T = TypeVar("T")


class StoreUnavailableError(UnavailableError):
    """The store cannot be opened or read (no index yet, server down)."""


def open_client(index_dir: Path, chroma_url: str | None, timeout_s: float | None = None) -> chromadb.ClientAPI:
    """A Chroma client with telemetry off: an HTTP client when `chroma_url` is set, else a local folder.

    With `timeout_s`, every call to a Chroma server is bounded: opening the client (which already asks the
    server) and then each request of its HTTP session (chromadb 1.5 builds that session with no timeout and
    no setting for one), so a stalled server raises instead of hanging."""
    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_url:
        url = urlparse(chroma_url)

        def connect() -> chromadb.ClientAPI:
            return chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=settings,
            )

        try:
            client = within(timeout_s, connect)
        except TimeoutError:
            raise StoreUnavailableError(
                f"the Chroma server at {chroma_url} did not answer within {timeout_s:g} s"
            ) from None
        except Exception as exc:
            raise StoreUnavailableError(f"cannot reach the Chroma server at {chroma_url}: {exc}") from exc
        session = getattr(getattr(client, "_server", None), "_session", None)
        if timeout_s and isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(timeout_s)
        return client
    index_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(index_dir), settings=settings)


def index_file(index_dir: Path) -> Path:
    """The database file of an embedded index: it exists once something has been indexed into `index_dir`."""
    return index_dir / INDEX_FILE


def local_index_exists(index_dir: Path) -> bool:
    return index_file(index_dir).exists()


# Chroma keeps one client system per folder and process, whose in-memory vector index does not see what another
# process (`eventbot index`) wrote since, nor a folder deleted and made again. A client opened after
# `detach_local_client` gets a system of its own; the detached one keeps serving the clients that hold it until
# `close_detached` (these reach into chromadb's SharedSystemClient: nowhere else does).


def detach_local_client(index_dir: Path) -> Any:
    """Take the embedded index's client system out of Chroma's per-process cache; a handle for
    `reattach_local_client` or `close_detached` (None if there was none)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    return SharedSystemClient._identifier_to_system.pop(str(index_dir), None)


def reattach_local_client(index_dir: Path, handle: Any) -> None:
    """Put a detached client system back, so that clients opened from now on share it again."""
    if handle is not None:
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient._identifier_to_system[str(index_dir)] = handle


def close_detached(handle: Any) -> None:
    """Stop a detached client system (its clients can no longer read)."""
    handle.stop()


def within(timeout_s: float | None, call: Callable[[], T]) -> T:
    """`call()`, or TimeoutError after `timeout_s` (None: no limit). The call goes on in a daemon thread, which
    ends when it returns; nothing waits for it."""
    if not timeout_s:
        return call()
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc
        done.set()

    threading.Thread(target=run, name="store-call", daemon=True).start()
    if not done.wait(timeout_s):
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@dataclass(frozen=True)
class Store:
    """One Chroma collection (cosine distance) and the embedder its vectors come from: Chroma is given vectors,
    never asked to embed."""

    client: chromadb.ClientAPI
    collection: chromadb.Collection
    embedder: Embeddings


def open_store(client: chromadb.ClientAPI, collection: str, embedder: Embeddings) -> Store:
    """The collection `collection` (created when missing) as a `Store`."""
    return Store(
        client=client,
        collection=client.get_or_create_collection(
            name=collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
        ),
        embedder=embedder,
    )


def collection_exists(client: chromadb.ClientAPI, collection: str) -> bool:
    return collection in collection_names(client)


def collection_names(client: chromadb.ClientAPI) -> list[str]:
    """The collections in the index, sorted."""
    return sorted(c if isinstance(c, str) else c.name for c in client.list_collections())


@dataclass
class IndexReport:
    documents: int
    chunks: int
    added: int
    unchanged: int
    removed: int
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self) | {"seconds": round(self.seconds, 2)}


def index_documents(
    store: Store,
    docs: list[Document],
    chunk_size: int,
    chunk_overlap: int,
    show_progress: bool = False,
    roots: list[Path] | None = None,
) -> IndexReport:
    """Bring the store in line with `docs`: embed only new chunks, delete each document's vanished ones, and
    delete the chunks of documents under one of the folders `roots` that are no longer among `docs` (files
    renamed, moved or deleted since the folder was last indexed)."""
    started = time.perf_counter()
    chunks = split_documents(docs, chunk_size, chunk_overlap)
    wanted = {c.metadata["chunk_id"]: c for c in chunks}
    paths = {d.metadata["path"] for d in docs}
    existing: set[str] = set()
    for path in paths:
        existing |= set(read_metadatas(store, where={"path": path}))
    gone = _chunks_of_vanished_files(store, roots or [], paths)
    if gone:
        log.info("removing %d chunks of files no longer under %s", len(gone), ", ".join(map(str, roots or [])))
    stale = sorted((existing - wanted.keys()) | gone)
    new = [c for cid, c in wanted.items() if cid not in existing]

    # Only documents with new chunks are parsed; their unchanged chunks get fresh offsets and sentences too
    # (an edit earlier in the document moves them), without being embedded again. One bar counts both steps.
    changed = {c.metadata["path"] for c in new}
    to_parse = [c for c in chunks if c.metadata["path"] in changed]
    with tqdm(total=len(to_parse) + len(new), desc="Indexing: parsing", unit="chunk", disable=not show_progress) as bar:
        attach_sentences(
            to_parse, {d.metadata["path"]: d.page_content for d in docs if d.metadata["path"] in changed}, bar.update
        )
        moved = [c for cid, c in wanted.items() if cid in existing and c.metadata["path"] in changed]
        if moved:
            update_metadatas(store, moved)
        if stale:
            delete_chunks(store, stale)
        bar.set_description("Indexing: embedding")
        for i in range(0, len(new), EMBED_BATCH):
            batch = new[i : i + EMBED_BATCH]
            write_chunks(store, batch, embed_chunks(store, batch))
            bar.update(len(batch))
    if new or stale or moved:
        record_counts(store)
    report = IndexReport(
        documents=len(docs),
        chunks=len(chunks),
        added=len(new),
        unchanged=len(wanted) - len(new),
        removed=len(stale),
        seconds=time.perf_counter() - started,
    )
    log.info("indexed %s", report)
    return report


def _chunks_of_vanished_files(store: Store, roots: list[Path], kept: set[str]) -> set[str]:
    """Ids of stored chunks whose document lies under one of `roots` but is not one of the `kept` paths."""
    if not roots:
        return set()
    resolved = [root.resolve() for root in roots]
    return {
        cid
        for cid, meta in read_metadatas(store).items()
        if meta["path"] not in kept and any(Path(meta["path"]).is_relative_to(root) for root in resolved)
    }


def record_counts(store: Store) -> None:
    """Keep in the collection's metadata how many documents it holds and a new generation (something changed),
    so that health checks and served bots read them in O(1) instead of reading every chunk. Counted once per
    indexing run that changed something (indexing reads the whole store anyway)."""
    _record_counts(store.collection)


def _record_counts(collection: chromadb.Collection) -> None:
    paths = {meta["path"] for meta in collection.get(include=["metadatas"])["metadatas"]}
    collection.modify(metadata={"documents": len(paths), "generation": uuid.uuid4().hex})


def collection_stats(client: chromadb.ClientAPI, name: str) -> dict:
    """{"documents", "chunks", "generation"} in O(1): chunks by the store's count, the rest as indexing recorded
    them (an index from before counts were recorded is counted once, the slow way). `generation` changes when
    the collection's content does, or when it is a new collection (a reset). Read fresh each call: another
    process may have indexed meanwhile."""
    collection = client.get_collection(name)
    chunks = collection.count()
    meta = collection.metadata or {}
    if "documents" not in meta and chunks:
        _record_counts(collection)
        meta = client.get_collection(name).metadata or {}
    return {
        "documents": int(meta.get("documents", 0)),
        "chunks": chunks,
        "generation": f"{collection.id}:{meta.get('generation', '')}",
    }


def store_stats(store: Store) -> dict:
    """`collection_stats` of the collection `store` holds."""
    return collection_stats(store.client, store.collection.name)


# ---------------------------------------------------------------------------------------------- reading and writing chunks


@contextmanager
def store_errors(what: str = "cannot read the index") -> Iterator[None]:
    """The one boundary where a store's failure (a Chroma server down or stalled, an index folder deleted: Chroma
    raises many kinds) becomes `StoreUnavailableError("<what>: <reason>")`, which callers answer as 503."""
    try:
        yield
    except StoreUnavailableError:
        raise
    except Exception as exc:
        raise StoreUnavailableError(f"{what}: {exc}") from exc


def _documents(got: dict) -> list[Document]:
    return [
        Document(page_content=text, metadata=meta | {"chunk_id": cid})
        for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    ]


def read_chunks(store: Store, ids: list[str] | None = None) -> list[Document]:
    """The stored chunks of these ids (every chunk: None) with their metadata and `chunk_id`; a missing id is left
    out."""
    if ids is not None and not ids:
        return []
    return _documents(store.collection.get(ids=ids, include=["documents", "metadatas"]))


def all_chunks(store: Store) -> list[Document]:
    """Every stored chunk with its metadata: what learning the documents reads, once per change of the index."""
    return read_chunks(store)


def read_metadatas(
    store: Store, ids: list[str] | None = None, where: dict | None = None, limit: int | None = None
) -> dict[str, dict]:
    """Chunk id → metadata of the chunks of these ids, or those matching `where` (at most `limit`), or all."""
    if ids is not None and not ids:
        return {}
    got = store.collection.get(ids=ids, where=where, limit=limit, include=["metadatas"])
    return dict(zip(got["ids"], got["metadatas"], strict=True))


def read_with_vectors(store: Store, ids: list[str]) -> list[tuple[Document, list[float]]]:
    """The chunks of these ids with their stored vectors (a missing id is left out)."""
    got = store.collection.get(ids=ids, include=["embeddings", "documents", "metadatas"])
    return list(zip(_documents(got), got["embeddings"], strict=True))


def nearest(store: Store, vector: list[float], n: int, where: dict | None = None) -> list[str]:
    """Ids of the `n` chunks nearest to `vector` (cosine), best first; only those matching `where` when given."""
    return store.collection.query(query_embeddings=[vector], n_results=n, where=where, include=[])["ids"][0]


def embed_chunks(store: Store, chunks: list[Document]) -> list[list[float]]:
    """The vectors of the chunks' texts, by the store's embedder."""
    return store.embedder.embed_documents([c.page_content for c in chunks])


def write_chunks(store: Store, chunks: list[Document], vectors: list[list[float]]) -> None:
    """Add chunks with their vectors, in batches the store takes (ids: their `chunk_id`)."""
    batch_size = max_batch(store)
    for i in range(0, len(chunks), batch_size):
        batch = chunks[i : i + batch_size]
        store.collection.upsert(
            ids=[c.metadata["chunk_id"] for c in batch],
            embeddings=vectors[i : i + len(batch)],
            documents=[c.page_content for c in batch],
            metadatas=[c.metadata for c in batch],
        )


def update_metadatas(store: Store, chunks: list[Document]) -> None:
    """Replace the stored metadata of these chunks by theirs (new offsets and sentences: no new vectors)."""
    store.collection.update(ids=[c.metadata["chunk_id"] for c in chunks], metadatas=[c.metadata for c in chunks])


def delete_chunks(store: Store, ids: list[str]) -> None:
    """Delete the chunks of these ids, in batches the store takes."""
    batch_size = max_batch(store)
    for i in range(0, len(ids), batch_size):
        store.collection.delete(ids=ids[i : i + batch_size])


def max_batch(store: Store) -> int:
    """How many records the store takes in one call (Chroma's limit; a few thousand)."""
    try:
        return max(1, min(5000, int(store.client.get_max_batch_size())))
    except Exception:  # an older server without the call: a size every version takes
        return 1000
