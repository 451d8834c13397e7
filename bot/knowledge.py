"""What is known of all the indexed documents together (bot.answer.corpus.Knowledge), learnt once from every stored
chunk when indexing changes the store, and kept beside the index with the store's generation. A bot starting up
loads it instead of reading every chunk; when it is missing or stale (an index built elsewhere, a Chroma server
indexed from another machine) the bot learns it from the store once and keeps it."""

import logging
import os
import pickle
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from bot.answer.corpus import Corpus, Knowledge
from bot.answer.extractive import synonym_candidates
from bot.suggestions import candidate_questions
from index.store import all_chunks

log = logging.getLogger(__name__)

FORMAT = 3  # bump when Knowledge changes shape: older files are then learnt again


WORD_BATCH = 512


def learn(
    store, embedder: Embeddings, show_progress: bool = False, known: Mapping[str, np.ndarray] | None = None
) -> Knowledge:
    """Read every chunk of the store once and learn what the documents tell together, with a vector for each of
    their content words (short texts: a few seconds per thousand words). Words in `known` (what an earlier
    generation learnt) keep their vectors: only words new to the documents are embedded."""
    corpus = Corpus(all_chunks(store))
    knowledge = corpus.knowledge
    knowledge.example_questions = candidate_questions(corpus)
    vocabulary = sorted({w for sents in corpus.sentences.values() for s in sents for w in synonym_candidates(s.text)})
    known = known or {}
    new = [w for w in vocabulary if w not in known]
    matrix = np.zeros((len(new), 0), dtype=np.float32)
    with tqdm(total=len(new), desc="Embedding words", unit="word", disable=not show_progress or not new) as bar:
        rows = []
        for i in range(0, len(new), WORD_BATCH):
            rows.append(np.asarray(embedder.embed_documents(new[i : i + WORD_BATCH]), dtype=np.float32))
            bar.update(len(rows[-1]))
        if rows:
            matrix = np.concatenate(rows)
    fresh = dict(zip(new, matrix, strict=True))  # rows of one matrix
    knowledge.word_vectors = {w: fresh[w] if w in fresh else known[w] for w in vocabulary}
    return knowledge


def knowledge_path(index_dir: Path, collection: str) -> Path:
    return index_dir / f"{collection}.knowledge.pickle"


def save(knowledge: Knowledge, path: Path, generation: str) -> None:
    """Written whole or not at all (a temporary file renamed into place), for readers in other processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, delete=False) as tmp:
        pickle.dump({"format": FORMAT, "generation": generation, "knowledge": knowledge}, tmp)
    os.replace(tmp.name, path)


def load(path: Path, generation: str | None) -> Knowledge | None:
    """The kept knowledge when it was learnt from this generation of the store (any generation: None), else None.
    (A file this program wrote beside the index, trusted like the index itself.)"""
    try:
        with path.open("rb") as f:
            kept = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    if kept.get("format") != FORMAT or generation not in (None, kept.get("generation")):
        return None
    return kept["knowledge"]


def load_or_learn(store, embedder: Embeddings, path: Path, generation: str, show_progress: bool = False) -> Knowledge:
    knowledge = load(path, generation)
    if knowledge is None:
        log.info("learning the documents from every stored chunk (once per change of the index)")
        earlier = load(path, None)
        knowledge = learn(store, embedder, show_progress, earlier.word_vectors if earlier else None)
        save(knowledge, path, generation)
    return knowledge
