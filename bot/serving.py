"""The bot as a server holds it: warmed up before it says it is ready, and swapped for a fresh one when the index
changes under it. The API and the chat share one `ServedBot`; `ui/` only routes requests to it."""

import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from bot.errors import CollectionNotFoundError, NotReadyError, StoreUnavailableError
from bot.event_bot import EventBot
from bot.indexing import index_missing
from bot.settings import Settings, checked_collection
from bot.types import Answer, CheckedQuestion, Turn
from index.store import (
    close_detached,
    collection_names,
    detach_local_client,
    index_file,
    reattach_local_client,
    store_errors,
)

__all__ = ["NotReadyError", "ServedBot"]

log = logging.getLogger(__name__)

WARM_UP_QUESTION = "Who won?"  # any question runs every step of the chain once
WATCH_INTERVAL_S = 1.0  # how often a served bot looks whether the index changed
RETIRED_STORE_GRACE_S = 120.0  # a swapped-out bot's store is closed this long after (its requests are done)


class ServedBot:
    """The one bot of the process, shared by the API and the chat UI.

    No lock around answers: each request takes the current `EventBot` once and answers with it to the end, so a
    request stuck on a stalled store holds up no other (what the bots share is safe between threads: the vector
    cache has its own lock, the rest is read only). `ready` turns true once one whole answer has run (warm-up),
    so the first question a client asks is not the one that pays for lazy loading.

    A watcher thread reads the index's generation (O(1)) about once a second; when it changed (documents indexed,
    removed, the collection reset) and has stayed the same for one more look (an indexing run is over), it
    opens a fresh `EventBot` on the same settings, warms it up and swaps it in: requests in flight finish on
    the old one. A bot that cannot be opened (the store down, a reset still half done) leaves the old one serving.
    """

    def __init__(self, bot: EventBot, settings: Settings | None = None, *, warm: bool = True, watch: bool = True):
        self.bot = bot
        self.settings = settings or bot.settings  # the server's view (API key, limits); the bot keeps its own
        self.ready = False
        self._signature = self._read_signature(bot)
        self._stop = threading.Event()
        self._preloading = threading.Event()
        self._swap_lock = threading.Lock()  # one rebuild at a time
        self._retired: list[tuple[float, Any]] = []  # (when, detached Chroma client) of bots swapped out
        self._others: dict[str, ServedBot] = {}  # the index's other collections, served as they are asked for
        self._others_lock = threading.Lock()
        self._watching = watch
        if warm:
            self.warm_up()
        if watch:
            threading.Thread(
                target=_watch, args=(weakref.ref(self), self._stop), name="index-watcher", daemon=True
            ).start()

    def warm_up(self) -> None:
        """Run one whole answer, then report ready. A store that cannot be read leaves the bot not ready (the
        watcher tries again)."""
        try:
            self.bot.ask(WARM_UP_QUESTION)
        except StoreUnavailableError as exc:
            log.warning("warm-up failed: %s", exc)
            return
        self.ready = True
        self._preload(self.bot)

    def _preload(self, bot: EventBot) -> None:
        """Fill the bot's caches in the background (EventBot.preload), then have its LLM read the documents it has
        not read yet (EventBot.read_ahead), until it is done or swapped out."""
        self._preloading.set()  # stops the preload of the bot served before
        stop = self._preloading = threading.Event()

        def run() -> None:
            try:
                log.info("preloaded the vectors of %d sentences", bot.preload(stop))
                log.info("the LLM read %d documents ahead of questions", bot.read_ahead(stop))
            except Exception as exc:  # a store gone or a bot retired meanwhile: the caches fill as questions come
                log.info("preload stopped: %s", exc)

        threading.Thread(target=run, name="preload", daemon=True).start()

    def close(self) -> None:
        """Stop watching the index and preloading (the other collections' bots too)."""
        self._stop.set()
        self._preloading.set()
        for other in list(self._others.values()):
            other.close()

    @property
    def collection(self) -> str:
        return self.bot.settings.collection

    def collection_names(self) -> list[str]:
        """The collections of the index (each a separate set of documents a question may name)."""
        with store_errors("cannot read the index's collections"):  # through the bot's own client: no new connection
            return collection_names(self.bot.client)

    def for_collection(self, name: str | None) -> "ServedBot":
        """The served bot of the collection `name` (None: this one): another collection's is opened, warmed and
        watched the first time it is asked for, then kept (its models are the process's, shared). CollectionNameError
        (422) for a name no collection can have, CollectionNotFoundError (404) for one the index does not hold."""
        if name is None or name == self.collection:
            return self
        checked_collection(name)
        with self._others_lock:
            if name not in self._others:
                if name not in self.collection_names():
                    raise CollectionNotFoundError(
                        f"no collection {name!r} in the index: index documents into it with "
                        f"`eventbot index --collection {name} PATH`"
                    )
                self._others[name] = ServedBot(
                    EventBot(self.bot.settings.model_copy(update={"collection": name})),
                    self.settings.model_copy(update={"collection": name}),
                    watch=self._watching,
                )
            return self._others[name]

    def forget_collection(self, name: str) -> None:
        """Stop serving another collection (it is being removed); asked for again, it is opened afresh."""
        with self._others_lock:
            other = self._others.pop(name, None)
        if other is not None:
            other.close()

    def ask(
        self,
        question: str | CheckedQuestion,
        history: list[Turn] | None = None,
        on_sentence: Callable[[str], None] | None = None,
    ) -> Answer:
        # this request answers with this bot, whatever is swapped in meanwhile (EventBot.ask checks the question)
        return self.bot.ask(question, history, on_sentence)

    def ask_streamed(
        self, question: str | CheckedQuestion, history: list[Turn] | None = None
    ) -> Iterator[str | Answer]:
        """The answer as it comes: each sentence of an LLM's long answer once it holds (bot.answer.sentence_guard),
        then the Answer itself, whose text begins with those sentences. An error (QuestionError, the store down, …)
        is raised here, before anything is yielded when it comes first."""
        arrived: queue.SimpleQueue = queue.SimpleQueue()

        def answer() -> None:
            try:
                arrived.put(self.ask(question, history, arrived.put))
            except BaseException as exc:  # handed to the asker, who raises it
                arrived.put(exc)

        threading.Thread(target=answer, name="ask-streamed", daemon=True).start()
        while True:
            item = arrived.get()
            if isinstance(item, BaseException):
                raise item
            yield item
            if isinstance(item, Answer):
                return

    def stats(self) -> dict:
        return self.bot.stats()

    def health(self) -> dict:
        """Index counts when the bot is ready and its store answers; NotReadyError or StoreUnavailableError (with
        the reason) otherwise."""
        settings = self.bot.settings
        if index_missing(settings):
            raise StoreUnavailableError(f"the index at {settings.index_dir} is gone: run `eventbot index`")
        stats = self.bot.stats()
        if not self.ready:
            raise NotReadyError("warming up: no answer has run yet")
        return stats

    def documents(self) -> list[tuple[str, str]]:
        return self.bot.documents()

    def reload(self) -> None:
        """Swap in a fresh bot now if the index changed (documents added or removed through this server), so that
        the next answer reads them, rather than after the watcher's next two looks."""
        self.refresh(self._read_signature(self.bot))

    def example_questions(self) -> list[str]:
        """Those of the bot serving now (a swap brings the fresh index's, worked out before it is swapped in)."""
        return self.bot.example_questions()

    @staticmethod
    def _read_signature(bot: EventBot) -> Any:
        """What changes when the index does: the generation and counts indexing records (O(1) reads), and for an
        embedded index the identity of its database file (a folder deleted and indexed again is a new file,
        which a client still holding the old one would never see)."""
        settings, local = bot.settings, None
        if not settings.chroma_url:
            try:
                stat = index_file(settings.index_dir).stat()
            except OSError:
                return ("missing",)
            local = (stat.st_dev, stat.st_ino)
        try:
            stats = bot.stats()
        except StoreUnavailableError as exc:
            return ("unreadable", str(exc))
        return (local, stats.get("generation"), stats["documents"], stats["chunks"])

    def refresh(self, seen_before: Any = None) -> Any:
        """One look of the watcher: the index's signature now. When it differs from the served bot's and equals
        `seen_before` (the last look), open, warm and swap in a fresh bot. Returns what it saw."""
        seen = self._read_signature(self.bot)
        if seen == self._signature or seen != seen_before:
            if seen == self._signature and not self.ready:
                self.warm_up()
            return seen
        with self._swap_lock:
            if seen == self._signature:  # swapped in meanwhile (an upload's reload and the watcher both saw it)
                return seen
            replaced = self._detach()
            try:
                fresh = EventBot(self.bot.settings)
                fresh.ask(WARM_UP_QUESTION)
                fresh.example_questions()  # for the chat's next page, worked out here rather than on its load
            except Exception as exc:
                if isinstance(exc, StoreUnavailableError):
                    log.info("index changed, but no fresh bot yet: %s", exc)
                else:
                    log.exception("index changed, but a fresh bot could not be opened")
                self._retire(self._detach())  # the failed bot's, if it opened one
                reattach_local_client(self.bot.settings.index_dir, replaced)
                return seen
            self.bot, self._signature, self.ready = fresh, seen, True
            self._preload(fresh)
            self._retire(replaced)
        log.info("index changed: serving a fresh bot (%s)", self._signature)
        return seen

    def _detach(self) -> Any:
        """The embedded index's shared Chroma client, taken out of Chroma's cache so that a fresh bot opens its
        own (None in server mode, or if there was none)."""
        return None if self.bot.settings.chroma_url else detach_local_client(self.bot.settings.index_dir)

    def _retire(self, client: Any) -> None:
        """Close `client` a grace period from now (its requests are long done), and those retired a grace period
        ago."""
        now = time.monotonic()
        for retired_at, old in [r for r in self._retired if now - r[0] > RETIRED_STORE_GRACE_S]:
            self._retired.remove((retired_at, old))
            try:
                close_detached(old)
            except Exception:
                log.debug("closing a retired Chroma client", exc_info=True)
        if client is not None:
            self._retired.append((now, client))


def _watch(ref: "weakref.ref[ServedBot]", stop: threading.Event) -> None:
    """The watcher loop; ends when the served bot is closed or gone."""
    seen = None
    while not stop.wait(WATCH_INTERVAL_S):
        served = ref()
        if served is None:
            return
        try:
            seen = served.refresh(seen)
        except Exception:
            log.exception("index watcher")
        del served
