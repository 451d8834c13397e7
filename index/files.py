"""Files written whole or not at all, in one place: what other processes read (the knowledge beside an index, the
upload journal, an uploaded document, an exported dataset) never shows half-written."""

import os
import tempfile
from pathlib import Path


def write_whole(path: Path, data: bytes | str) -> None:
    """`data` in `path`, whole or not at all: written to a temporary file beside it, synced, then renamed into
    place (a crash leaves the old file, or none, never a part). OSError when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
