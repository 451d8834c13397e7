"""The bot as one object the CLI, the API and the chat all share: open once, then ask many times."""

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cachetools import LRUCache, cached
from cachetools.keys import hashkey

from bot.answer.cite import cite
from bot.answer.condense import condense_question
from bot.answer.corpus import Corpus
from bot.answer.decide import CALIBRATION_FILE
from bot.answer.read import SentenceReader
from bot.answer.retrieve import Retriever
from bot.chain import draft_chain
from bot.errors import StoreUnavailableError
from bot.indexing import index_missing, learn_index
from bot.models import shared_answerability, shared_embedder, shared_forms, shared_reader
from bot.questions import check_question
from bot.settings import Settings
from bot.suggestions import example_questions
from bot.types import Answer, CheckedQuestion, Passage, Turn
from bot.vectors import CachedEmbeddings
from index.embeddings import use_threads as use_threads  # for `eventbot serve`, which imports nothing of index/
from index.store import collection_exists, collection_stats, open_client, open_store, store_errors

if TYPE_CHECKING:
    from bot.answer.sentence_guard import SentenceGuard

log = logging.getLogger(__name__)


def answer_key(question: CheckedQuestion, on_sentence: object = None) -> tuple:
    """What makes two questions the same for the answer cache: the text and the history (not who hears it)."""
    return hashkey(question.text, tuple((t.role, t.content) for t in question.history))


class AnsweredWithoutTheLLM(Exception):
    """Raised through the answer cache, which keeps no exception, with an answer made while the LLM failed (it timed
    out waiting for its turn, say): that answer is given this once, and the question asked again meets the LLM."""

    def __init__(self, answer: Answer):
        super().__init__(answer.question)
        self.answer = answer


def llm_guard(settings: Settings, read_spans: Callable) -> "SentenceGuard":
    """The guard step over an LLM's answer: checked against the same documents' sentences, with the span reader's
    second reading, and given by the learnt decision (a single fact) or held sentence by sentence (a longer form)."""
    from bot.answer.guard import Guard
    from bot.answer.llm_decide import LLM_CALIBRATION_FILE, LLMDecision
    from bot.answer.sentence_guard import SentenceGuard

    decision = LLMDecision.load(settings.reader_weights.with_name(LLM_CALIBRATION_FILE))
    if settings.llm_answer_threshold is not None:
        decision.threshold = settings.llm_answer_threshold
    return SentenceGuard(Guard(decision, read_spans))


def index_command(settings: Settings) -> str:
    """The command that fills this bot's collection."""
    default = settings.collection == Settings.model_fields["collection"].default
    return "eventbot index" + ("" if default else f" --collection {settings.collection}")


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
                    f"no collection {settings.collection!r} yet: run `{index_command(settings)}`"
                )
        generate = None
        if settings.llm != "none":  # the LLM loads here, once per bot; a bad setting raises LLMSetupError
            from bot.answer.generative import load_generator

            generate = load_generator(settings)
        self.generate = generate
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
        calibration = settings.reader_weights.with_name(CALIBRATION_FILE)
        self.decide = shared_answerability(calibration, settings.answer_threshold).decide
        guard = llm_guard(settings, reader.read) if generate is not None else None
        # the chain before its cite step: `_read` cites its drafts (calibration reads them as they are)
        forms = shared_forms()
        self.drafts = draft_chain(
            self.knowledge.lexicon.link,
            self._condense,
            self.retriever,
            self.expand,
            self.read,
            self.decide,
            generate,
            guard,
            self.llm_reads,
            # retrieval embeds the question anyway; an overview must be of something the documents name
            question_form=lambda text: forms.form_of(text, vectors.vector(text), self.knowledge.df.__contains__),
            summaries=lambda: self.knowledge.summaries,
            hold=guard.hold if guard is not None else None,
            choose=self.read.closest,
        )
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

    def read_ahead(self, stop: threading.Event | None = None) -> int:
        """Have the in-process LLM read, before any question needs them, the documents it reads one at a time and
        has not saved (bot.answer.prompt_states), so that the first question on each does not wait while it reads
        it (a served bot runs this in the background after `preload`; `stop` ends it early). Returns how many it
        read."""
        read = 0
        if self.generate is None or not self.generate.may_read_ahead():
            return read
        for passages in self.retriever.read_one_at_a_time(
            self.knowledge.chunk_starts, self.settings.llm_document_chars
        ):
            if (stop is not None and stop.is_set()) or not self.generate.may_read_ahead():
                break  # stopped, or as much saved as is kept: reading more would push out what was read
            read += self.generate.read_ahead(passages, stop)
        return read

    def ask(
        self,
        question: str | CheckedQuestion,
        history: list[Turn] | None = None,
        on_sentence: Callable[[str], None] | None = None,
    ) -> Answer:
        """The answer to a question, checked here unless it comes checked (QuestionError when it fails). The same
        question with the same history is answered once per bot (a bot reads one state of the index: a changed
        index is served by a new bot); its copies say how long the lookup took, under "cached". `on_sentence` is
        given each sentence of an LLM's long answer as soon as it holds (the answer's text is those, in order); an
        answer found in the cache, or of another kind, comes whole."""
        if not isinstance(question, CheckedQuestion):
            question = check_question(self.settings, question, history)
        if self._answered is None:
            return self._read(question, on_sentence)
        started = time.perf_counter()
        hit = answer_key(question) in self._answered
        try:
            answer = self._answer(question, on_sentence).model_copy(deep=True)
        except AnsweredWithoutTheLLM as failed:
            return failed.answer
        if hit:
            ms = round((time.perf_counter() - started) * 1000, 3)
            answer.timings_ms = {"cached": ms, "total": ms}
        return answer

    def _read(self, question: CheckedQuestion, on_sentence: Callable[[str], None] | None = None) -> Answer:
        """The chain's answer; AnsweredWithoutTheLLM, carrying it, when the LLM failed on it (not to be kept)."""
        state = self.drafts.invoke(
            {"question": question.text, "history": list(question.history), "timings_ms": {}},
            {"configurable": {"on_sentence": on_sentence}},
        )
        answer = cite(state)
        generation = state.get("generation")
        if generation is not None and generation.error and self._answered is not None:
            raise AnsweredWithoutTheLLM(answer)
        return answer

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
