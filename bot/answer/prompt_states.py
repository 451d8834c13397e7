"""llama.cpp's reading of a documents prompt, saved once read and loaded when a question needs those documents again.

Reading documents is most of what the local LLM costs: on 2 cores llama.cpp reads about 60 tokens a second, so the
article takes 10 s and a 4,500-character report 20 s, while a question over documents it holds costs about 1 s.
llama-cpp-python keeps only the last prompt it read. So the in-process LLM saves its memory of a prompt's documents
(the KV cache of its one sequence, with the tokens it holds) to a file the first time it reads them, and loads that
file when a later question needs the same documents: after a question on another document, in a new process, after
a restart. llama-cpp-python then compares the loaded tokens with the new prompt and reads only what differs, so a
saved state never stands in for other text. Files are named by the model file and the documents' text; at most
`capacity_bytes` are kept, the least recently used removed first.
"""

import ctypes
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SUFFIX = ".llamastate"
READING_STALE_S = 600  # a mark that a process reads documents ahead, older than this: the process is gone


class PromptStates:
    """The saved readings of one `llama_cpp.Llama` (used by one generation at a time, as the chat model keeps it)."""

    def __init__(self, llama: Any, model_path: str, folder: Path, capacity_bytes: int):
        import llama_cpp

        self._api = llama_cpp
        self.llama = llama
        self.folder = folder
        self.capacity_bytes = capacity_bytes
        stat = Path(model_path).stat()
        self._model = f"{Path(model_path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{llama.n_ctx()}"
        self._held: str | None = None  # the documents prompt the model holds now, as far as this object knows

    def path(self, documents: str) -> Path:
        digest = hashlib.sha256(f"{self._model}\n{documents}".encode()).hexdigest()[:40]
        return self.folder / f"{digest}{SUFFIX}"

    def before(self, documents: str) -> None:
        """Before a generation over `documents`: load their saved reading unless the model holds them already (the
        last generation was over them and nothing has emptied the model since)."""
        if documents == self._held and self.llama.n_tokens > 0:
            return
        self._held = documents
        path = self.path(documents)
        if not path.is_file():
            return
        capacity = self.llama.n_ctx()
        tokens = (self._api.llama_token * capacity)()
        count = ctypes.c_size_t(0)
        read = self._api.llama_state_seq_load_file(
            self.llama.ctx, str(path).encode(), 0, tokens, capacity, ctypes.byref(count)
        )
        if not read:  # another llama.cpp's format, a torn file: read the documents again and save them anew
            log.warning("cannot load the saved LLM state %s: reading the documents again", path.name)
            path.unlink(missing_ok=True)
            self.llama.reset()
            return
        self.llama.input_ids[: count.value] = tokens[: count.value]
        self.llama.n_tokens = count.value
        os.utime(path)  # recently used

    def after(self) -> None:
        """After a complete generation: save what the model read, unless saved already."""
        if self._held is None or self.llama.n_tokens == 0:
            return
        path = self.path(self._held)
        if path.is_file():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        n = self.llama.n_tokens
        tokens = (self._api.llama_token * n)(*self.llama.input_ids[:n].tolist())
        partial = path.with_name(f"{path.name}.{os.getpid()}.part")  # another process may save the same documents
        if self._api.llama_state_seq_save_file(self.llama.ctx, str(partial).encode(), 0, tokens, n):
            os.replace(partial, path)
            self._trim()
        else:
            partial.unlink(missing_ok=True)

    @contextmanager
    def reading(self, documents: str) -> Iterator[bool]:
        """Whether this process should read `documents` ahead of questions: not when they are saved, nor while another
        process (another worker of the server) reads them; a mark file says so while it reads."""
        path = self.path(documents)
        mark = path.with_name(f"{path.name}.reading")
        if path.is_file():
            yield False
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            if time.time() - mark.stat().st_mtime > READING_STALE_S:
                mark.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
        try:
            os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            yield False
            return
        try:
            yield True
        finally:
            mark.unlink(missing_ok=True)

    def has_room(self) -> bool:
        """Whether the saved readings take less than nine tenths of the capacity (room for another)."""
        return sum(size for _, size, _ in self._saved()) < 0.9 * self.capacity_bytes

    def _saved(self) -> list[tuple[float, int, Path]]:
        """(last used, bytes, path) of each saved reading (another process may remove one meanwhile)."""
        saved = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            saved.append((stat.st_mtime, stat.st_size, path))
        return saved

    def _trim(self) -> None:
        """Remove the least recently used files beyond the capacity."""
        total = 0
        for _, size, path in sorted(self._saved(), key=lambda s: s[0], reverse=True):
            total += size
            if total > self.capacity_bytes:
                path.unlink(missing_ok=True)
