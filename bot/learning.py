"""What is known of all the indexed documents together (bot.answer.corpus.Knowledge), learnt once from every stored
chunk when indexing changes the store, and kept beside the index with the store's generation. A bot starting up
loads it instead of reading every chunk; when it is missing or stale (an index built elsewhere, a Chroma server
indexed from another machine) the bot learns it from the store once and keeps it."""

import logging
import pickle
from pathlib import Path

from bot.answer.corpus import Corpus, Knowledge
from bot.answer.summary import summarize, way_of
from bot.models import shared_summary_model
from bot.suggestions import candidate_questions
from index.files import write_whole
from index.store import all_chunks

log = logging.getLogger(__name__)

FORMAT = 8  # bump when Knowledge changes shape: older files are then learnt again


def learn(store, summaries: bool = True, kept: Knowledge | None = None, show_progress: bool = False) -> Knowledge:
    """Read every chunk of the store once and learn what the documents tell together, and each document's summary
    (its key sentences, chosen by the learnt model when `summaries`, else its opening ones; a document unchanged
    since the `kept` knowledge keeps its summary)."""
    corpus = Corpus(all_chunks(store))
    knowledge = corpus.knowledge
    knowledge.example_questions = candidate_questions(corpus)
    model = shared_summary_model() if summaries else None
    knowledge.summaries = summarize(
        corpus, model, store.embedder, kept.summaries if kept else {}, show_progress=show_progress
    )
    return knowledge


def knowledge_path(index_dir: Path, collection: str) -> Path:
    return index_dir / f"{collection}.knowledge.pickle"


def save(knowledge: Knowledge, path: Path, generation: str) -> None:
    """Written whole or not at all (a temporary file renamed into place), for readers in other processes."""
    write_whole(path, pickle.dumps({"format": FORMAT, "generation": generation, "knowledge": knowledge}))


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


def load_or_learn(store, path: Path, generation: str, summaries: bool = True, show_progress: bool = False) -> Knowledge:
    """The kept knowledge of this generation of the store, or, when there is none or its summaries were chosen
    another way (the setting or the model changed), the knowledge learnt again (and kept)."""
    knowledge = load(path, generation)
    way = way_of(shared_summary_model() if summaries else None)
    if knowledge is not None and any(not s.digest.startswith(f"{way}:") for s in knowledge.summaries.values()):
        knowledge = None
    if knowledge is None:
        log.info("learning the documents from every stored chunk (once per change of the index)")
        knowledge = learn(store, summaries, kept=load(path, None), show_progress=show_progress)
        save(knowledge, path, generation)
    return knowledge
