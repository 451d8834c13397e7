"""Building the index from documents, and learning what answering needs of it as a whole (the documents'
knowledge and the BM25 index): at `eventbot index`, and when a bot opens an index built elsewhere."""

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from bot.answer.corpus import Knowledge
from bot.answer.retrieve import KeywordIndex, keyword_folder
from bot.errors import CollectionNotFoundError, DocumentConflictError, StoreUnavailableError
from bot.learning import knowledge_path, learn, load_or_learn
from bot.models import shared_embedder
from bot.settings import Settings, checked_collection
from index.loaders import load_documents
from index.store import (
    IndexReport,
    Store,
    collection_exists,
    collection_names,
    collection_stats,
    index_documents,
    local_index_exists,
    open_client,
    open_store,
    store_errors,
)

log = logging.getLogger(__name__)


def build_index(
    settings: Settings, paths: list[Path] | None = None, reset: bool = False, show_progress: bool = False
) -> IndexReport:
    """Index files or folders (default: the bundled corpus). Files are read before the store is touched,
    so a bad path leaves the existing index as it was."""
    paths = paths or settings.corpus
    docs = load_documents(paths, settings.max_file_bytes, settings.ocr == "on")
    client = open_client(settings.index_dir, settings.chroma_url, settings.store_timeout_s)
    if reset and collection_exists(client, settings.collection):
        client.delete_collection(settings.collection)
    store = open_store(client, settings.collection, shared_embedder(settings.embed_bf16))
    folders = [p for p in paths if p.is_dir()]  # what is no longer under an indexed folder is removed
    report = index_documents(store, docs, settings.chunk_size, settings.chunk_overlap, show_progress, roots=folders)
    if not settings.chroma_url:  # learnt now, once, rather than by the first bot to start
        started = time.perf_counter()
        learn_index(settings, client, store, show_progress)
        report.seconds += time.perf_counter() - started
    return report


def learn_index(
    settings: Settings, client, store: Store, show_progress: bool = False
) -> tuple[Knowledge, KeywordIndex | None]:
    """What answering needs of the store as a whole, for its current generation: the documents' knowledge and the
    BM25 index. With an index folder, each is loaded from beside the index, or learnt from every chunk once and kept
    there (at indexing, so that a bot starts without reading the corpus). With a Chroma server nothing is written
    locally: each bot learns them from the server when it starts. Each document's summary is chosen here too
    (bot.answer.summary; `settings.summaries`)."""
    generation = collection_stats(client, settings.collection)["generation"]
    keep = not settings.chroma_url
    summaries = settings.summaries == "on"
    if keep:
        path = knowledge_path(settings.index_dir, settings.collection)
        knowledge = load_or_learn(store, path, generation, summaries, show_progress)
    else:
        knowledge = learn(store, summaries, show_progress=show_progress)
    keywords = None
    if settings.retriever == "hybrid":
        folder = keyword_folder(settings.index_dir, settings.collection, generation)
        keywords = KeywordIndex.load_or_build(store, folder) if keep else KeywordIndex.build(store)
    return knowledge, keywords


def index_missing(settings: Settings) -> bool:
    """True when the embedded index has not been built (or its folder was deleted); never with a Chroma server."""
    return not settings.chroma_url and not local_index_exists(settings.index_dir)


def collections(settings: Settings) -> list[dict]:
    """The index's collections, each `{"name", "documents", "chunks"}`, by name."""
    client = _built_index(settings)
    with store_errors("cannot read the index's collections"):
        return [
            {"name": name, **{k: collection_stats(client, name)[k] for k in ("documents", "chunks")}}
            for name in collection_names(client)
        ]


@dataclass
class RemovedCollection:
    name: str
    documents: int
    chunks: int
    uploads: int  # uploaded files deleted (those no other collection holds)

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def remove_collection(settings: Settings, name: str) -> RemovedCollection:
    """Remove the collection `name` whole: its chunks, what was learnt of it beside the index (its knowledge and
    keyword index), the LLM's saved readings of its documents, and its uploaded files that no other collection
    holds. CollectionNotFoundError (404) when the index has none of that name; DocumentConflictError (409) for the
    last collection (`eventbot index --reset` empties that one)."""
    checked_collection(name)
    client = _built_index(settings)
    with store_errors("cannot read the index's collections"):
        names = collection_names(client)
    if name not in names:
        raise CollectionNotFoundError(f"no collection {name!r} in the index (it has {', '.join(names) or 'none'})")
    if len(names) == 1:
        raise DocumentConflictError(f"{name!r} is the index's only collection; `eventbot index --reset` empties it")
    with store_errors(f"cannot remove the collection {name}"):
        paths = _paths(client, name)
        elsewhere = set().union(*(_paths(client, other) for other in names if other != name))
        stats = collection_stats(client, name)
        client.delete_collection(name)
    learnt = [settings.index_dir / f"{name}.bm25", settings.llm_state_dir.expanduser() / name]
    for folder in learnt:
        shutil.rmtree(folder, ignore_errors=True)
    knowledge_path(settings.index_dir, name).unlink(missing_ok=True)
    uploads = settings.uploads_dir.resolve()
    uploaded = [Path(p) for p in paths - elsewhere if Path(p).resolve().parent == uploads]
    for file in uploaded:
        file.unlink(missing_ok=True)
    log.info("collection %s removed, with %d uploaded files", name, len(uploaded))
    return RemovedCollection(name, stats["documents"], stats["chunks"], len(uploaded))


def _paths(client, name: str) -> set[str]:
    """The paths of the documents a collection holds."""
    return {meta["path"] for meta in client.get_collection(name).get(include=["metadatas"])["metadatas"]}


def _built_index(settings: Settings):
    """A client of the index; StoreUnavailableError when it has not been built (an empty one is not made)."""
    if index_missing(settings):
        raise StoreUnavailableError("no index yet: run `eventbot index`")
    return open_client(settings.index_dir, settings.chroma_url, settings.store_timeout_s)
