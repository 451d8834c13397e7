"""Find the passages that may answer a question: dense (Chroma) or hybrid (dense + BM25, rank-fused)."""

import logging
import re

import bm25s
import numpy as np
import Stemmer
from langchain_chroma import Chroma

from bot.types import Passage
from bot.vectors import CachedEmbeddings
from index.store import StoreUnavailableError, all_chunks

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index build at DEBUG

RRF_K = 60  # the usual reciprocal-rank-fusion constant: rank matters, raw scores do not


class Retriever:
    """Top-k passages for a question. Built once per process; `refresh()` after the store changes."""

    def __init__(self, store: Chroma, vectors: CachedEmbeddings, k: int = 4, mode: str = "hybrid"):
        self.store, self.vectors, self.k, self.mode = store, vectors, k, mode
        self.stemmer = Stemmer.Stemmer("english")
        self.refresh()

    def refresh(self) -> None:
        self.chunks = all_chunks(self.store)
        self.by_id = {c.metadata["chunk_id"]: c for c in self.chunks}
        self.bm25 = None
        if self.mode == "hybrid" and self.chunks:
            self.bm25 = bm25s.BM25()
            tokens = bm25s.tokenize(
                [c.page_content for c in self.chunks], stopwords="en", stemmer=self.stemmer, show_progress=False
            )
            self.bm25.index(tokens, show_progress=False)

    def __call__(self, question: str) -> list[Passage]:
        if not self.chunks:
            return []
        try:
            return self._retrieve(question)
        except Exception as exc:  # the store went away under us (server down, folder deleted)
            raise StoreUnavailableError(f"cannot read the index: {exc}") from exc

    def _retrieve(self, question: str) -> list[Passage]:
        query_vec = self.vectors.vector(question)  # the answerer finds it in the same cache
        pool = min(len(self.chunks), max(3 * self.k, 10))
        dense = self.store.similarity_search_by_vector_with_relevance_scores(query_vec.tolist(), k=pool)
        # chunks indexed after this retriever was built are left to the fresh bot the server then swaps in
        dense_ids = [doc.metadata["chunk_id"] for doc, _ in dense if doc.metadata["chunk_id"] in self.by_id]
        ranked = dense_ids
        if self.bm25 is not None:
            ranked = _rrf([dense_ids, self._bm25_ids(question, pool)])
        top = ranked[: self.k]
        got = self.store._collection.get(ids=top, include=["embeddings"])
        cosine = dict(zip(got["ids"], np.asarray(got["embeddings"]) @ query_vec, strict=True))
        return [self._passage(cid, float(cosine[cid])) for cid in top if cid in cosine]  # unless deleted meanwhile

    def _bm25_ids(self, question: str, pool: int) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not any(len(t) for t in tokens.ids) or not re.search(r"\w", question):
            return []
        docs, scores = self.bm25.retrieve(tokens, k=pool, show_progress=False)
        return [self.chunks[i].metadata["chunk_id"] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def _passage(self, cid: str, score: float) -> Passage:
        chunk = self.by_id[cid]
        meta = chunk.metadata
        return Passage(
            chunk_id=cid,
            source=meta["source"],
            path=meta["path"],
            title=meta.get("title", ""),
            text=chunk.page_content,
            start=int(meta["start"]),
            score=score,
        )


def _rrf(rankings: list[list[str]]) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=scores.__getitem__, reverse=True)
