"""Find the passages that may answer a question: dense (Chroma) or hybrid (dense + BM25, rank-fused), and read the
stored chunks around them for the answerer. Nothing here holds the corpus in memory: chunks are read from the store
per question; the BM25 index is built when indexing changes the store and kept beside the index (memory-mapped)."""

import json
import logging
import shutil
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np
from cachetools import LRUCache
from langchain_core.documents import Document

from bot.answer.terms import STEMMER
from bot.types import Passage
from bot.vectors import CachedEmbeddings
from index.store import Store, all_chunks, nearest, read_chunks, read_with_vectors, store_errors

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index build at DEBUG

RRF_K = 60  # the usual reciprocal-rank-fusion constant: rank matters, raw scores do not
AROUND_CHARS = 3000  # the answerer reads the chunks within this many characters of each passage


def _tokens(texts: list[str]) -> bm25s.tokenization.Tokenized:
    return bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False)


class KeywordIndex:
    """BM25 twice over the stored chunks: per chunk (its document's title prepended, so a passage that never
    repeats what its document is about still matches it) and per document (title and every chunk: which documents
    are about what the question names). Built once per change of the store and kept in a folder named for the
    store's generation, so a reader never sees a half-written one."""

    def __init__(self, chunks: bm25s.BM25, ids: list[str], documents: bm25s.BM25, paths: list[str], of: list[int]):
        self.chunks, self.ids, self.documents, self.paths = chunks, ids, documents, paths
        self.path_of = {cid: paths[n] for cid, n in zip(ids, of, strict=True)}  # chunk id → its document

    @classmethod
    def build(cls, store: Store) -> "KeywordIndex":
        stored = all_chunks(store)
        texts, metas = [c.page_content for c in stored], [c.metadata for c in stored]
        by_path: dict[str, list[str]] = {}
        for text, meta in zip(texts, metas, strict=True):
            by_path.setdefault(meta["path"], [meta.get("title", "")]).append(text)
        chunks, documents = bm25s.BM25(), bm25s.BM25()
        chunks.index(
            _tokens([f"{m.get('title', '')}\n{t}" for t, m in zip(texts, metas, strict=True)]), show_progress=False
        )
        documents.index(_tokens(["\n".join(parts) for parts in by_path.values()]), show_progress=False)
        paths = list(by_path)
        number = {p: n for n, p in enumerate(paths)}
        ids = [c.metadata["chunk_id"] for c in stored]
        return cls(chunks, ids, documents, paths, [number[m["path"]] for m in metas])

    def save(self, folder: Path) -> None:
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.chunks.save(str(tmp / "chunks"), show_progress=False)
        self.documents.save(str(tmp / "documents"), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({"chunks": self.ids, "documents": self.paths, "of": self._of()}))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
        for old in folder.parent.glob("*"):  # earlier generations
            if old != folder and not old.name.endswith(".tmp"):
                shutil.rmtree(old, ignore_errors=True)

    def _of(self) -> list[int]:
        number = {p: n for n, p in enumerate(self.paths)}
        return [number[self.path_of[cid]] for cid in self.ids]

    @classmethod
    def load(cls, folder: Path) -> "KeywordIndex | None":
        try:
            ids = json.loads((folder / "ids.json").read_text())
            return cls(
                bm25s.BM25.load(str(folder / "chunks"), mmap=True, show_progress=False),
                ids["chunks"],
                bm25s.BM25.load(str(folder / "documents"), mmap=True, show_progress=False),
                ids["documents"],
                ids["of"],
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @classmethod
    def load_or_build(cls, store: Store, folder: Path) -> "KeywordIndex":
        found = cls.load(folder)
        if found is None:
            found = cls.build(store)
            folder.parent.mkdir(parents=True, exist_ok=True)
            found.save(folder)
        return found

    def top(self, question: str, pool: int) -> list[str]:
        """Ids of the chunks that match the question best (none without a word to match)."""
        return self._top(self.chunks, self.ids, question, pool)

    def top_documents(self, question: str, pool: int) -> list[str]:
        """Paths of the documents that match the question best."""
        return self._top(self.documents, self.paths, question, pool)

    @staticmethod
    def _top(bm25: bm25s.BM25, names: list[str], question: str, pool: int) -> list[str]:
        tokens = _tokens([question])
        if not any(len(t) for t in tokens.ids) or not any(c.isalnum() or c == "_" for c in question) or not names:
            return []
        found, scores = bm25.retrieve(tokens, k=min(pool, len(names)), show_progress=False)
        return [names[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0]


def keyword_folder(index_dir: Path, collection: str, generation: str) -> Path:
    return index_dir / f"{collection}.bm25" / "".join(c if c.isalnum() or c in "_-" else "-" for c in generation)


@dataclass(frozen=True)
class Fusion:
    """How the rankings of a question's candidate chunks are fused (weighted reciprocal ranks). Tuned on the SQuAD
    train articles indexed together and on the bundled article among generated distractors (see README)."""

    pool: int = 30  # candidates per ranking (at least 3 × k)
    documents: int = 3  # documents the document step keeps (0: no document step)
    dense: float = 1.0  # the question's vector against each chunk's
    keywords: float = 1.0  # BM25 over chunks, with their document's title
    within: float = 0.5  # the question's vector, among the chunks of the documents BM25 ranks best for it
    document: float = 0.5  # the rank of the chunk's document by BM25 over whole documents


class Retriever:
    """Top-k passages for a question, and the chunks around passages. One per bot (a bot serves one generation of
    the store; a server swaps in a fresh bot when the store changes).

    Among many documents, the words a question shares with every news story ("won the gold medal") outweigh the
    few that say which story it means ("free skate"), and the passage that answers often does not repeat them.
    So besides the question's vector and BM25 over chunks, a document step finds the documents that match the
    question as a whole (BM25 over whole documents: the rare names weigh most) and ranks the chunks within them by
    the question's vector; the rankings are fused by weighted reciprocal rank."""

    def __init__(
        self,
        store: Store,
        vectors: CachedEmbeddings,
        chunks: int,
        keywords: KeywordIndex | None,
        k: int,
        cache_entries: int,
        fusion: Fusion = Fusion(),
    ):
        self.store, self.vectors, self.chunks, self.keywords, self.k = store, vectors, chunks, keywords, k
        self.fusion = fusion
        self._chunks: LRUCache[str, Document] = LRUCache(maxsize=max(1, cache_entries))  # read chunks, by id
        self._lock = threading.Lock()

    def __call__(self, question: str) -> list[Passage]:
        if not self.chunks:
            return []
        with store_errors():  # the store went away under us (server down, folder deleted)
            return self._retrieve(question)

    def _retrieve(self, question: str) -> list[Passage]:
        query_vec = self.vectors.vector(question)  # the answerer finds it in the same cache
        fusion = self.fusion
        pool = min(self.chunks, max(3 * self.k, fusion.pool))
        rankings: list[tuple[float, dict[str, int]]] = [(fusion.dense, _ranks(self._dense(query_vec, pool)))]
        if self.keywords is not None:
            rankings.append((fusion.keywords, _ranks(self.keywords.top(question, pool))))
            documents = self.keywords.top_documents(question, fusion.documents)
            if documents and len(self.keywords.paths) > 1:  # (one document: nothing to choose)
                within = self._dense(query_vec, pool, documents)
                rankings.append((fusion.within, _ranks(within)))
                rank_of = {path: n for n, path in enumerate(documents)}
                candidates = {cid for _, ranks in rankings for cid in ranks}
                path_of = self.keywords.path_of
                by_document = {c: rank_of[path_of[c]] for c in candidates if path_of.get(c) in rank_of}
                rankings.append((fusion.document, by_document))
        top = _fuse(rankings)[: self.k]
        read = read_with_vectors(self.store, top)
        found = {
            chunk.metadata["chunk_id"]: (chunk.page_content, chunk.metadata, float(np.asarray(vec) @ query_vec))
            for chunk, vec in read
        }
        self._keep([chunk for chunk, _ in read])
        return [_passage(cid, *found[cid]) for cid in top if cid in found]  # unless deleted meanwhile

    def _dense(self, query_vec: np.ndarray, pool: int, documents: list[str] | None = None) -> list[str]:
        """Chunk ids by the question's vector, best first; only in `documents` (paths) when given."""
        where = {"path": {"$in": documents}} if documents else None
        return nearest(self.store, query_vec.tolist(), pool, where)

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
        return self.read(list(wanted))

    def reading_order(
        self, passages: list[Passage], chunk_starts: dict[str, list[tuple[int, str]]], max_chars: int
    ) -> list[Passage]:
        """What an LLM reads for a question, in an order that depends on the question as little as it can, so that
        llama.cpp reuses the prompt it already read: every chunk of every document, in document order, when together
        they fit in `max_chars` (the bundled article: one prefix for every question); else the whole document of the
        best passage when it fits (questions in a row about one document share its prefix); else the question's
        passages in document order."""
        every = [cid for path in sorted(chunk_starts) for _, cid in chunk_starts[path]]
        whole = self._whole(every, max_chars)
        if whole is None and passages:  # passages come best first
            whole = self._whole([cid for _, cid in chunk_starts.get(passages[0].path, [])], max_chars)
        return whole if whole is not None else sorted(passages, key=lambda p: (p.path, p.start))

    def read_one_at_a_time(
        self, chunk_starts: dict[str, list[tuple[int, str]]], max_chars: int
    ) -> Iterator[list[Passage]]:
        """The documents an LLM reads one at a time, whole (see `reading_order`), each read from the store when its
        turn comes; none when all fit together."""
        every = [cid for path in sorted(chunk_starts) for _, cid in chunk_starts[path]]
        if self._whole(every, max_chars) is not None:
            return
        for path in sorted(chunk_starts):
            passages = self._whole([cid for _, cid in chunk_starts[path]], max_chars)
            if passages is not None:
                yield passages

    def _whole(self, ids: list[str], max_chars: int) -> list[Passage] | None:
        """These chunks as passages, in this order, when they hold at most `max_chars` characters; else None."""
        if not ids or len(ids) * 100 > max_chars:  # a chunk holds at least about 100 characters: not worth reading
            return None
        chunks = self.read(ids)
        if sum(len(c.page_content) for c in chunks) > max_chars:
            return None
        return [_passage(c.metadata["chunk_id"], c.page_content, c.metadata, 0.0) for c in chunks]

    def read(self, ids: list[str]) -> list[Document]:
        """These chunks, in this order, read from the store unless cached (a chunk deleted meanwhile is left out)."""
        with self._lock:
            missing = [cid for cid in ids if cid not in self._chunks]
        with store_errors():
            self._keep(read_chunks(self.store, missing))
        with self._lock:
            return [self._chunks[cid] for cid in ids if cid in self._chunks]

    def preload(self, ids: list[str]) -> list[Document]:
        """Read these chunks into the cache (as many as it holds) and return them: the warm-up after start."""
        chunks = read_chunks(self.store, ids)
        self._keep(chunks)
        return chunks

    def _keep(self, chunks: list[Document]) -> None:
        with self._lock:
            for chunk in chunks:
                self._chunks[chunk.metadata["chunk_id"]] = chunk


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


def _ranks(ranking: list[str]) -> dict[str, int]:
    return {cid: n for n, cid in enumerate(ranking)}


def _fuse(rankings: list[tuple[float, dict[str, int]]]) -> list[str]:
    """Weighted reciprocal-rank fusion: each ranking adds weight / (RRF_K + rank) to the chunks it ranks."""
    scores: dict[str, float] = {}
    for weight, ranks in rankings:
        for cid, rank in ranks.items():
            scores[cid] = scores.get(cid, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(scores, key=scores.__getitem__, reverse=True)
