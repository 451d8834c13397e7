"""One SQLite file that the server's request threads (and the processes of `eventbot serve --workers N`) share:
the feedback on replies (bot.feedback) and the chat's kept conversations (bot.conversations).

Every write is committed (WAL journal, `synchronous=FULL`) before the call returns, so a crash after the HTTP
response loses nothing acknowledged. Each call opens its own connection, and SQLite serialises the writers.
"""

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from bot.errors import SetupError, UnavailableError

BUSY_TIMEOUT_S = 10.0  # how long a write waits for another writer (a request thread, a worker process)


class SqliteFile:
    """A file holding `SCHEMA` (created when absent) at `SCHEMA_VERSION` (`PRAGMA user_version`). A subclass names
    what it keeps (`WHAT`), the setting that moves it (`SETTING`) and the errors it raises: `SetupError` (not a
    database, made by a newer eventbot) and `UnavailableError` (locked past the timeout, disk full)."""

    WHAT = "data"
    SETTING = ""
    SCHEMA = ""
    SCHEMA_VERSION = 1
    setup_error: type[SetupError] = SetupError
    unavailable_error: type[UnavailableError] = UnavailableError

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connection() as conn:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > self.SCHEMA_VERSION:
                    raise self.setup_error(
                        f"the {self.WHAT} file {self.path} has schema version {version}, newer than this eventbot's "
                        f"{self.SCHEMA_VERSION}: upgrade eventbot, or set {self.SETTING} to another file"
                    )
                conn.execute("PRAGMA journal_mode = WAL")  # kept in the file: readers do not wait for the writer
                if version < self.SCHEMA_VERSION:
                    conn.executescript(
                        f"BEGIN IMMEDIATE;\n{self.SCHEMA}\nPRAGMA user_version = {self.SCHEMA_VERSION};\nCOMMIT;"
                    )
        except (OSError, self.unavailable_error) as exc:
            reason = exc.__cause__ if isinstance(exc, self.unavailable_error) else exc.strerror or exc
            raise self.setup_error(f"cannot use {self.path} as the {self.WHAT} file ({reason})") from exc

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode: each statement is committed (and synced) when it completes."""
        try:
            with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as conn:
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA synchronous = FULL")
                yield conn
        except sqlite3.DatabaseError as exc:  # locked past the timeout, disk full, not a database
            raise self.unavailable_error(f"the {self.WHAT} file {self.path} cannot be used now ({exc})") from exc
