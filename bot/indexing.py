"""Building the index from documents, and learning what answering needs of it as a whole (the documents'
knowledge and the BM25 index): at `eventbot index`, and when a bot opens an index built elsewhere."""

import time
from pathlib import Path

from bot.answer.corpus import Knowledge
from bot.answer.retrieve import KeywordIndex, keyword_folder
from bot.learning import knowledge_path, learn, load_or_learn
from bot.models import shared_embedder
from bot.settings import Settings
from index.loaders import load_documents
from index.store import (
    IndexReport,
    Store,
    collection_exists,
    collection_stats,
    index_documents,
    local_index_exists,
    open_client,
    open_store,
)


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
