"""The embedding model at ask time, behind one bounded cache shared by retrieval and the answerer: a question is
embedded once per ask (retrieval embeds it, the answerer finds it) and a sentence or word once while it stays in the
cache. The cache is bounded in entries (`EVENTBOT_VECTOR_CACHE_ENTRIES`): memory does not grow with every new text
seen."""

import threading

import numpy as np
from cachetools import LRUCache
from langchain_core.embeddings import Embeddings


class CachedEmbeddings(Embeddings):
    """`embedder` with an LRU cache of its vectors (float32), keyed by text: this model encodes a query and a
    document alike. Safe to share between threads; `misses` counts texts the model had to embed."""

    def __init__(self, embedder: Embeddings, max_entries: int):
        self.embedder = embedder
        self._cache: LRUCache[str, np.ndarray] = LRUCache(maxsize=max(1, max_entries))
        self._lock = threading.Lock()
        self.misses = 0

    def vectors(self, texts: list[str]) -> list[np.ndarray]:
        with self._lock:
            found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        todo = [t for t in dict.fromkeys(texts) if t not in found]
        if todo:  # embedded outside the lock: other threads keep reading the cache meanwhile
            fresh = [np.asarray(v, dtype=np.float32) for v in self.embedder.embed_documents(todo)]
            with self._lock:
                self.misses += len(todo)
                for t, v in zip(todo, fresh, strict=True):
                    self._cache[t] = found[t] = v
        return [found[t] for t in texts]

    def vector(self, text: str) -> np.ndarray:
        return self.vectors([text])[0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [v.tolist() for v in self.vectors(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text).tolist()
