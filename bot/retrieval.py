"""Find the passages that may answer a question: dense (Chroma) or hybrid (dense + BM25, rank-fused), and read the
stored chunks around them for the answerer. Nothing here holds the corpus in memory: chunks are read from the store
per question; the BM25 index is built when indexing changes the store and kept beside the index (memory-mapped)."""

import json
import logging
import re
import shutil
import threading
from bisect import bisect_left, bisect_right
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from cachetools import LRUCache
from langchain_chroma import Chroma
from langchain_core.documents import Document

from bot.types import Passage
from bot.vectors import CachedEmbeddings
from index.store import StoreUnavailableError

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index build at DEBUG

RRF_K = 60  # the usual reciprocal-rank-fusion constant: rank matters, raw scores do not
AROUND_CHARS = 3000  # the answerer reads the chunks within this many characters of each passage
STEMMER = Stemmer.Stemmer("english")


class KeywordIndex:
    """BM25 over every stored chunk, with the chunk ids in index order. Built once per change of the store and kept
    in a folder named for the store's generation, so a reader never sees a half-written one."""

    def __init__(self, bm25: bm25s.BM25, ids: list[str]):
        self.bm25, self.ids = bm25, ids

    @classmethod
    def build(cls, store: Chroma) -> "KeywordIndex":
        got = store._collection.get(include=["documents"])
        bm25 = bm25s.BM25()
        bm25.index(
            bm25s.tokenize(got["documents"], stopwords="en", stemmer=STEMMER, show_progress=False), show_progress=False
        )
        return cls(bm25, list(got["ids"]))

    def save(self, folder: Path) -> None:
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.bm25.save(str(tmp), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps(self.ids))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
        for old in folder.parent.glob("*"):  # earlier generations
            if old != folder and not old.name.endswith(".tmp"):
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> "KeywordIndex | None":
        try:
            ids = json.loads((folder / "ids.json").read_text())
            return cls(bm25s.BM25.load(str(folder), mmap=True, show_progress=False), ids)
        except (OSError, ValueError):
            return None

    @classmethod
    def load_or_build(cls, store: Chroma, folder: Path) -> "KeywordIndex":
        found = cls.load(folder)
        if found is None:
            found = cls.build(store)
            folder.parent.mkdir(parents=True, exist_ok=True)
            found.save(folder)
        return found

    def top(self, question: str, pool: int) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="en", stemmer=STEMMER, show_progress=False)
        if not any(len(t) for t in tokens.ids) or not re.search(r"\w", question):
            return []
        docs, scores = self.bm25.retrieve(tokens, k=min(pool, len(self.ids)), show_progress=False)
        return [self.ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


def keyword_folder(index_dir: Path, collection: str, generation: str) -> Path:
    return index_dir / f"{collection}.bm25" / re.sub(r"[^\w-]", "-", generation)


class Retriever:
    """Top-k passages for a question, and the chunks around passages. One per bot (a bot serves one generation of
    the store; a server swaps in a fresh bot when the store changes)."""

    def __init__(
        self,
        store: Chroma,
        vectors: CachedEmbeddings,
        chunks: int,
        keywords: KeywordIndex | None,
        k: int = 4,
        cache_entries: int = 2000,
    ):
        self.store, self.vectors, self.chunks, self.keywords, self.k = store, vectors, chunks, keywords, k
        self._chunks: LRUCache[str, Document] = LRUCache(maxsize=max(1, cache_entries))  # read chunks, by id
        self._lock = threading.Lock()

    def __call__(self, question: str) -> list[Passage]:
        if not self.chunks:
            return []
        try:
            return self._retrieve(question)
        except Exception as exc:  # the store went away under us (server down, folder deleted)
            raise StoreUnavailableError(f"cannot read the index: {exc}") from exc

    def _retrieve(self, question: str) -> list[Passage]:
        query_vec = self.vectors.vector(question)  # the answerer finds it in the same cache
        pool = min(self.chunks, max(3 * self.k, 10))
        dense = self.store.similarity_search_by_vector_with_relevance_scores(query_vec.tolist(), k=pool)
        ranked = [doc.metadata["chunk_id"] for doc, _ in dense]
        if self.keywords is not None:
            ranked = _rrf([ranked, self.keywords.top(question, pool)])
        top = ranked[: self.k]
        got = self.store._collection.get(ids=top, include=["embeddings", "documents", "metadatas"])
        found = {
            cid: (text, meta, float(np.asarray(vec) @ query_vec))
            for cid, text, meta, vec in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
            )
        }
        self._keep(got["ids"], got["documents"], got["metadatas"])
        return [_passage(cid, *found[cid]) for cid in top if cid in found]  # unless deleted meanwhile

    def around(self, passages: list[Passage], chunk_starts: dict[str, list[tuple[int, str]]]) -> list[Document]:
        """The stored chunks that start within AROUND_CHARS of a passage, in its document (found in `chunk_starts`,
        each document's chunks by start, as indexing learnt them): what the answerer reads for one question.
        Bounded by the passages, never a whole document; read by id, from the cache when there."""
        wanted: dict[str, None] = {}
        for p in passages:
            starts = chunk_starts.get(p.path, [])
            lo = bisect_left(starts, (p.start - AROUND_CHARS, ""))
            hi = bisect_right(starts, (p.start + len(p.text) + AROUND_CHARS, "\uffff"))
            wanted.update(dict.fromkeys(cid for _, cid in starts[lo:hi]))
            wanted[p.chunk_id] = None
        with self._lock:
            missing = [cid for cid in wanted if cid not in self._chunks]
        try:
            if missing:
                got = self.store._collection.get(ids=missing, include=["documents", "metadatas"])
                self._keep(got["ids"], got["documents"], got["metadatas"])
        except Exception as exc:
            raise StoreUnavailableError(f"cannot read the index: {exc}") from exc
        with self._lock:
            return [self._chunks[cid] for cid in wanted if cid in self._chunks]

    def _keep(self, ids: list[str], texts: list[str], metas: list[dict]) -> None:
        with self._lock:
            for cid, text, meta in zip(ids, texts, metas, strict=True):
                self._chunks[cid] = Document(page_content=text, metadata=meta | {"chunk_id": cid})


def _passage(cid: str, text: str, meta: dict, score: float) -> Passage:
    return Passage(
        chunk_id=cid,
        source=meta["source"],
        path=meta["path"],
        title=meta.get("title", ""),
        text=text,
        start=int(meta["start"]),
        score=score,
    )


def _rrf(rankings: list[list[str]]) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=scores.__getitem__, reverse=True)
