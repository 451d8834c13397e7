"""The documents a running server answers from, changed through it: add uploaded files, list, remove
(`/api/documents` and the chat's document panel, over the same functions).

Every file of an upload is checked before anything changes (its name, size, type and text), then the upload is
kept under `EVENTBOT_UPLOADS_DIR` (outside the bundled `data/`) and indexed whole or not at all (index.uploads).
Changes are serialised by a lock file beside the uploads, which also holds between worker processes; answering
goes on meanwhile (the served bot is swapped only once a change is complete).
"""

import fcntl
import logging
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote

from bot.errors import (
    DocumentConflictError,
    DocumentLoadError,
    DocumentNotFoundError,
    StoreUnavailableError,
    UploadsOffError,
)
from bot.event_bot import EventBot
from bot.models import shared_embedder
from bot.settings import DEFAULT_CORPUS, Settings
from index.files import write_whole
from index.loaders import check_size, read_document
from index.store import Store, collection_exists, open_client, open_store, read_metadatas, store_errors, store_stats
from index.uploads import Added, add_whole, recover, remove_whole

log = logging.getLogger(__name__)

JOURNAL = ".pending.{collection}.json"  # an upload being written into a collection (index.uploads)
LOCK = ".lock"
MAX_NAME_BYTES = 200
T = TypeVar("T")


@dataclass
class Upload:
    """One uploaded file: its name as the client sent it, its bytes (those read of it: a reader may stop past the
    limit) and its whole size."""

    name: str | None
    data: bytes
    size: int | None = None


class Library:
    """Adds, lists and removes the documents of the index `settings` names."""

    def __init__(self, settings: Settings, store: Callable[[], Store] | None = None):
        """`store`: the store to change (a server passes its serving bot's, so that no second Chroma client is
        opened beside it while it swaps bots); by default one is opened from `settings`."""
        self.settings = settings
        self.folder = settings.uploads_dir.resolve()
        self.journal = self.folder / JOURNAL.format(collection=settings.collection)
        self.store = store or self.open_store

    def check_allowed(self) -> None:
        """UploadsOffError unless documents may be changed: with an API key (the caller checked it), or
        `EVENTBOT_UPLOADS=on`."""
        if not self.settings.api_key and self.settings.uploads != "on":
            raise UploadsOffError(
                "changing the documents is off on this server: set EVENTBOT_API_KEY (then send it) or EVENTBOT_UPLOADS=on"
            )

    def add(self, uploads: list[Upload], then: Callable[[], None] = lambda: None) -> list[Added]:
        """Index the uploaded files, all or none; DocumentLoadError (and its kinds) naming the first bad one,
        DocumentConflictError for a name already indexed, StoreUnavailableError when the store cannot be written."""
        if not uploads:
            raise DocumentLoadError("no files: send one or more in the multipart field `files`")
        if len(uploads) > self.settings.max_upload_files:
            raise DocumentLoadError(
                f"{len(uploads)} files at once; the limit is {self.settings.max_upload_files} (EVENTBOT_MAX_UPLOAD_FILES)"
            )
        names = [upload_name(u.name) for u in uploads]
        if len(set(names)) < len(names):
            raise DocumentConflictError("two files of the upload have the same name")
        docs = []
        for name, upload in zip(names, uploads, strict=True):
            check_size(name, max(upload.size or 0, len(upload.data)), self.settings.max_file_bytes)
            docs.append(
                read_document(upload.data, name=name, path=str(self.folder / name), ocr=self.settings.ocr == "on")
            )
        with self.changing() as store:
            taken = self.on_store(lambda: [n for n in names if read_metadatas(store, where={"source": n}, limit=1)])
            if taken:
                raise DocumentConflictError(f"{taken[0]}: a document of that name is indexed already; remove it first")
            kept = [n for n in names if (self.folder / n).exists()]  # the uploads folder serves every collection
            if kept:
                raise DocumentConflictError(
                    f"{kept[0]}: an uploaded file of that name is kept for another collection; rename it"
                )
            files = []
            try:
                for name, upload in zip(names, uploads, strict=True):
                    files.append(self.folder / name)
                    keep_file(files[-1], upload.data)
            except OSError as exc:
                for file in files:
                    file.unlink(missing_ok=True)
                raise StoreUnavailableError(f"the upload could not be kept in {self.folder}: {exc}") from exc
            added = add_whole(store, docs, self.settings.chunk_size, self.settings.chunk_overlap, self.journal, files)
            then()  # still serialised: e.g. the server swapping in a bot that reads them
            return added

    def remove(self, name: str, then: Callable[[], None] = lambda: None) -> None:
        """Remove the document called `name` from the index (and its kept copy when it was uploaded; a bundled or
        folder document's file stays where it is, and comes back with the next `eventbot index` of it)."""
        with self.changing() as store:
            metas = self.on_store(lambda: read_metadatas(store, where={"source": name}))
            paths = sorted({meta["path"] for meta in metas.values()})
            if not paths:
                raise DocumentNotFoundError(f"no document called {name!r} is indexed")
            if len(paths) > 1:
                raise DocumentConflictError(
                    f"{len(paths)} indexed documents are called {name!r}; re-index to remove one"
                )
            if self.on_store(lambda: store_stats(store))["documents"] <= 1:
                raise DocumentConflictError(f"{name} is the only document: the bot needs one to answer from")
            self.on_store(lambda: remove_whole(store, paths))
            if Path(paths[0]).parent == self.folder:
                Path(paths[0]).unlink(missing_ok=True)
            then()

    def recover(self) -> None:
        """Roll back an upload that did not finish (the process was killed during it), at start-up."""
        if self.journal.exists():
            try:
                with self.changing():
                    pass
            except StoreUnavailableError as exc:  # tried again before the next change
                log.warning("an unfinished upload is not rolled back yet: %s", exc)

    def counts(self) -> dict:
        stats = self.on_store(lambda: store_stats(self.store()))
        return {"documents": stats["documents"], "chunks": stats["chunks"]}

    def on_store(self, call: Callable[[], T]) -> T:
        """`call()`, a read or write of the store; StoreUnavailableError (the API's 503) with a one-line reason
        naming the store when it fails (the Chroma server down or stalled), rather than a server fault."""
        where = (
            f"the Chroma server at {self.settings.chroma_url}"
            if self.settings.chroma_url
            else f"the index at {self.settings.index_dir}"
        )
        with store_errors(f"the documents cannot be changed now: {where} is unavailable"):
            return call()

    def open_store(self) -> Store:
        client = open_client(self.settings.index_dir, self.settings.chroma_url, self.settings.store_timeout_s)
        if not collection_exists(client, self.settings.collection):
            raise StoreUnavailableError("no index yet: run `eventbot index`")
        return open_store(client, self.settings.collection, shared_embedder(self.settings.embed_bf16))

    @contextmanager
    def changing(self) -> Iterator:
        """The store, with this change the only one in any process on this machine, and an unfinished earlier
        upload rolled back first."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / LOCK).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                store = self.store()
                recover(store, self.journal)
                yield store
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def documents(bot: EventBot, settings: Settings) -> list[dict]:
    """What `bot` answers from, one entry per document: name, bytes, chunks, when indexed, where it came from
    (`bundled` under data/, `uploaded`, or `folder`: indexed by `eventbot index`) and its summary (its key
    sentences, chosen at indexing: bot.answer.summary). Read from what the bot learnt of the index, and one store
    read of a chunk per document."""
    knowledge = bot.knowledge
    firsts = {path: starts[0][1] for path, starts in knowledge.chunk_starts.items() if starts}
    with store_errors():
        metas = read_metadatas(bot.store, ids=list(firsts.values()))
    uploads = settings.uploads_dir.resolve()
    listed = []
    for path, (source, _title) in sorted(knowledge.sources.items(), key=lambda item: item[1][0].lower()):
        meta = metas.get(firsts.get(path, ""), {})
        size = meta.get("bytes")
        if size is None:
            try:
                size = Path(path).stat().st_size
            except OSError:
                size = None
        listed.append(
            {
                "name": source,
                "bytes": size,
                "chunks": len(knowledge.chunk_starts.get(path, [])),
                "indexed_at": meta.get("indexed_at"),
                "source": origin(Path(path), uploads),
                "summary": summary.text if (summary := knowledge.summaries.get(path)) else None,
            }
        )
    return listed


def origin(path: Path, uploads: Path) -> str:
    if path.is_relative_to(DEFAULT_CORPUS):
        return "bundled"
    return "uploaded" if path.is_relative_to(uploads) else "folder"


def upload_name(raw: str | None) -> str:
    """The name an upload is kept and cited under: the client's file name, which must be a plain name (no
    folder, no NUL or other control character, not hidden), in Unicode's composed form. (A Windows path,
    `C:\\temp\\x.txt`, arrives as `x.txt`: the multipart parser keeps what follows the last backslash.)"""
    if raw is None or not raw.strip():
        raise DocumentLoadError("a file without a name: send each file with its file name")
    raw = unquote(raw)  # clients percent-encode what a multipart header cannot hold (NUL, quotes, line breaks)
    shown = repr(raw)[:80]
    if "\x00" in raw:
        raise DocumentLoadError(f"the file name {shown} holds a NUL byte")
    if "/" in raw or "\\" in raw:
        raise DocumentLoadError(f"the file name {shown} has a folder in it: send the name alone")
    name = unicodedata.normalize("NFC", raw.strip())
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise DocumentLoadError(f"the file name {shown} holds a control character")
    if name.startswith("."):
        raise DocumentLoadError(f"the file name {shown} starts with a dot")
    if len(name.encode()) > MAX_NAME_BYTES:
        raise DocumentLoadError(f"the file name is {len(name.encode())} bytes long; the limit is {MAX_NAME_BYTES}")
    return name


def keep_file(path: Path, data: bytes) -> None:
    write_whole(path, data)
