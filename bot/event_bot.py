"""The bot as one object the CLI, the API and the chat all share: open once, then ask many times."""

import logging
import threading
import time
import unicodedata
from functools import cache
from pathlib import Path

from cachetools import LRUCache, cached
from cachetools.keys import hashkey
from langchain_core.embeddings import Embeddings

from bot.answer.corpus import Corpus, Knowledge
from bot.answer.decide import CALIBRATION_FILE, Answerability
from bot.answer.read import SentenceReader
from bot.chain import cited, draft_chain
from bot.conversation import condense_question
from bot.errors import QuestionError, StoreUnavailableError
from bot.learning import knowledge_path, learn, load_or_learn
from bot.reader.model import SpanReader
from bot.retrieval import KeywordIndex, Retriever, keyword_folder
from bot.settings import Settings
from bot.suggestions import example_questions
from bot.types import Answer, CheckedQuestion, Passage, Turn
from index.embeddings import CachedEmbeddings, bf16_fast, load_embedder
from index.embeddings import use_threads as use_threads  # for `eventbot serve`, which imports nothing of index/
from index.loaders import load_documents
from index.store import (
    IndexReport,
    collection_exists,
    collection_stats,
    index_documents,
    local_index_exists,
    open_client,
    open_store,
    store_errors,
)

log = logging.getLogger(__name__)


HISTORY_MESSAGE_FACTOR = 4  # a history message may be this many times as long as a question


def answer_key(question: CheckedQuestion) -> tuple:
    """What makes two questions the same for the answer cache: the text and the history."""
    return hashkey(question.text, tuple((t.role, t.content) for t in question.history))


@cache
def shared_embedder(bf16: bool) -> Embeddings:
    """The embedding model, loaded once per process."""
    return load_embedder(bf16)


@cache
def shared_reader(weights: Path, max_tokens: int, bf16: bool) -> SpanReader:
    """The span reader, loaded once per process."""
    return SpanReader(weights, max_tokens, bf16=bf16 and bf16_fast())


@cache
def shared_answerability(path: Path, threshold: float | None) -> Answerability:
    answerability = Answerability.load(path)
    if threshold is not None:
        answerability.threshold = threshold
    return answerability


def build_index(
    settings: Settings, paths: list[Path] | None = None, reset: bool = False, show_progress: bool = False
) -> IndexReport:
    """Index files or folders (default: the bundled corpus). Files are read before the store is touched,
    so a bad path leaves the existing index as it was."""
    paths = paths or settings.corpus
    docs = load_documents(paths, settings.max_file_bytes)
    client = open_client(settings.index_dir, settings.chroma_url, settings.store_timeout_s)
    if reset and collection_exists(client, settings.collection):
        client.delete_collection(settings.collection)
    store = open_store(client, settings.collection, shared_embedder(settings.embed_bf16))
    folders = [p for p in paths if p.is_dir()]  # what is no longer under an indexed folder is removed
    report = index_documents(store, docs, settings.chunk_size, settings.chunk_overlap, show_progress, roots=folders)
    if not settings.chroma_url:  # learnt now, once, rather than by the first bot to start
        started = time.perf_counter()
        learn_index(settings, client, store)
        report.seconds += time.perf_counter() - started
    return report


def learn_index(settings: Settings, client, store) -> tuple[Knowledge, KeywordIndex | None]:
    """What answering needs of the store as a whole, for its current generation: the documents' knowledge and the
    BM25 index. With an index folder, each is loaded from beside the index, or learnt from every chunk once and kept
    there (at indexing, so that a bot starts without reading the corpus). With a Chroma server nothing is written
    locally: each bot learns them from the server when it starts."""
    generation = collection_stats(client, settings.collection)["generation"]
    keep = not settings.chroma_url
    if keep:
        path = knowledge_path(settings.index_dir, settings.collection)
        knowledge = load_or_learn(store, path, generation)
    else:
        knowledge = learn(store)
    keywords = None
    if settings.retriever == "hybrid":
        folder = keyword_folder(settings.index_dir, settings.collection, generation)
        keywords = KeywordIndex.load_or_build(store, folder) if keep else KeywordIndex.build(store)
    return knowledge, keywords


def index_missing(settings: Settings) -> bool:
    """True when the embedded index has not been built (or its folder was deleted); never with a Chroma server."""
    return not settings.chroma_url and not local_index_exists(settings.index_dir)


def is_blank(text: str) -> bool:
    """True when `text` shows nothing: whitespace, control characters ("\\u0000\\u0001") and invisible format
    characters (a zero-width space) only. Such a question is empty, not one to retrieve for."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in text)


def check_question(settings: Settings, question: str, history: list[Turn] | None = None) -> CheckedQuestion:
    """The question, stripped, with its history; QuestionError when it is empty (or blank) or too long, or the
    history too long."""
    question = (question or "").strip()
    if is_blank(question):
        raise QuestionError("the question is empty")
    check_unicode(question, "the question")
    if len(question) > settings.max_question_chars:
        raise QuestionError(
            f"the question is {len(question)} characters long; the limit is {settings.max_question_chars}"
        )
    if history and len(history) > settings.max_history_messages:
        raise QuestionError(f"the history has {len(history)} messages; the limit is {settings.max_history_messages}")
    limit = HISTORY_MESSAGE_FACTOR * settings.max_question_chars  # answers run longer than questions
    for i, turn in enumerate(history or [], 1):
        if len(turn.content) > limit:
            raise QuestionError(f"history message {i} is {len(turn.content)} characters long; the limit is {limit}")
        check_unicode(turn.content, f"history message {i}")
    return CheckedQuestion(question, tuple(history or ()))


def check_unicode(text: str, what: str) -> None:
    """QuestionError when `text` holds a lone surrogate (JSON can carry "\\ud800"; no UTF-8 can)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QuestionError(f"{what} is not valid Unicode (a lone surrogate at character {exc.start + 1})") from None


class EventBot:
    """Retriever + answerer + chain over an existing index."""

    def __init__(self, settings: Settings):
        self.settings = settings
        started = time.perf_counter()
        if index_missing(settings):
            raise StoreUnavailableError(f"no index at {settings.index_dir} yet: run `eventbot index`")
        with store_errors("cannot open the index"):
            client = open_client(settings.index_dir, settings.chroma_url, settings.store_timeout_s)
            if not collection_exists(client, settings.collection):
                raise StoreUnavailableError(
                    f"no collection {settings.collection!r} in the index yet: run `eventbot index`"
                )
        generate = None
        if settings.llm != "none":  # the LLM loads here, once per bot; a bad setting raises LLMSetupError
            from bot.answer.generative import load_generator

            generate = load_generator(settings)
        self.client = client
        self.store = open_store(client, settings.collection, shared_embedder(settings.embed_bf16))
        chunks = collection_stats(client, settings.collection)["chunks"]
        if not chunks:
            raise StoreUnavailableError("the index is empty: run `eventbot index`")
        self.knowledge, keywords = learn_index(settings, client, self.store)
        embedder = shared_embedder(settings.embed_bf16)
        reader = shared_reader(settings.reader_weights, settings.reader_max_tokens, settings.reader_bf16)
        self.vectors = vectors = CachedEmbeddings(embedder, settings.vector_cache_entries)
        self.retriever = Retriever(self.store, vectors, chunks, keywords, settings.top_k, settings.chunk_cache_entries)
        # the answer step: the trained span reader, then its learnt decision to answer
        self.read = SentenceReader(vectors, reader, settings.reader_windows)
        answerability = shared_answerability(
            settings.reader_weights.with_name(CALIBRATION_FILE), settings.answer_threshold
        )
        self.decide = answerability.decide
        guard = None
        if generate is not None:  # the LLM's answer is checked against the same documents' sentences
            from bot.answer.guard import Guard
            from bot.answer.llm_decide import LLM_CALIBRATION_FILE, LLMDecision

            guard = Guard(LLMDecision.load(settings.reader_weights.with_name(LLM_CALIBRATION_FILE)))
        link = self.knowledge.lexicon.link
        # the chain before its cite step (calibration reads the drafts), and the whole chain
        self.drafts = draft_chain(
            link, self._condense, self.retriever, self.expand, self.read, self.decide, generate, guard, self.llm_reads
        )
        self.chain = cited(self.drafts)
        self._answered = LRUCache(settings.answer_cache_entries) if settings.answer_cache_entries else None
        # one reading per question: concurrent askers of the same question wait for it (cachetools' condition)
        self._answer = (
            cached(self._answered, key=answer_key, condition=threading.Condition())(self._read)
            if self._answered is not None
            else self._read
        )
        self._examples: list[str] | None = None
        log.info("bot ready in %.1fs", time.perf_counter() - started)

    def expand(self, passages: list[Passage]) -> Corpus:
        """The sentences of the stored chunks around the passages: what the answer step reads (and the guard checks
        an LLM's claims against)."""
        chunks = self.retriever.around(passages, self.knowledge.chunk_starts) if passages else []
        return Corpus(chunks, self.knowledge)

    def llm_reads(self, passages: list[Passage]) -> list[Passage]:
        """What the LLM reads for a question: the whole documents in a fixed order where they fit
        (`EVENTBOT_LLM_DOCUMENT_CHARS`), else the question's passages in document order."""
        return self.retriever.reading_order(passages, self.knowledge.chunk_starts, self.settings.llm_document_chars)

    def preload(self, stop: threading.Event | None = None, batch: int = 32) -> int:
        """Read the documents' chunks and embed their sentences into the caches, as far as the caches hold them, so
        that a first question over a long document costs what a later one does (a served bot runs this in the
        background after its warm-up; `stop` ends it early). Returns the sentences embedded."""
        room = min(self.settings.chunk_cache_entries, self.settings.vector_cache_entries // 8)  # ~8 sentences a chunk
        ids = [cid for starts in self.knowledge.chunk_starts.values() for _, cid in starts][:room]
        embedded = 0
        for at in range(0, len(ids), batch):
            if stop is not None and stop.is_set():
                break
            chunks = self.retriever.preload(ids[at : at + batch])
            corpus = Corpus(chunks, self.knowledge)
            texts = [s.text for sentences in corpus.sentences.values() for s in sentences]
            self.vectors.vectors(texts)
            embedded += len(texts)
        return embedded

    def ask(self, question: str | CheckedQuestion, history: list[Turn] | None = None) -> Answer:
        """The answer to a question, checked here unless it comes checked (QuestionError when it fails). The same
        question with the same history is answered once per bot (a bot reads one state of the index: a changed
        index is served by a new bot); its copies say how long the lookup took, under "cached"."""
        if not isinstance(question, CheckedQuestion):
            question = check_question(self.settings, question, history)
        if self._answered is None:
            return self._read(question)
        started = time.perf_counter()
        hit = answer_key(question) in self._answered
        answer = self._answer(question).model_copy(deep=True)
        if hit:
            ms = round((time.perf_counter() - started) * 1000, 2)
            answer.timings_ms = {"cached": ms, "total": ms}
        return answer

    def _read(self, question: CheckedQuestion) -> Answer:
        return self.chain.invoke({"question": question.text, "history": list(question.history), "timings_ms": {}})

    def example_questions(self) -> list[str]:
        """Questions about the indexed documents that the bot answers, for the chat to offer (worked out once)."""
        if self._examples is None:
            self._examples = example_questions(self.knowledge.example_questions, self.ask)
        return self._examples

    def documents(self) -> list[tuple[str, str]]:
        """(source, title) of each indexed document, as known at start-up."""
        return sorted(set(self.knowledge.sources.values()))

    def stats(self) -> dict:
        """Documents, chunks and the index's generation, in O(1) (counts kept by indexing, never a read of every
        chunk); raises StoreUnavailableError when the store cannot be read."""
        with store_errors():
            return collection_stats(self.client, self.settings.collection)

    def _condense(self, state: dict) -> str:
        return condense_question(
            state["linked"]["question"],
            state["linked"]["history"],
            lambda text: [p.text for p in self.knowledge.lexicon.people_in(text)],
        )
