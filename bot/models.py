"""The models, loaded once per process and shared by every bot in it (a server swaps bots, not models)."""

from functools import cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

from bot.answer.decide import Answerability
from bot.answer.forms import FormModel
from bot.answer.summary import SummaryModel
from bot.reader.model import SpanReader
from index.embeddings import bf16_fast, load_embedder


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
    """The learnt decision to answer, loaded once per process (`threshold`: a setting that overrides its own)."""
    answerability = Answerability.load(path)
    if threshold is not None:
        answerability.threshold = threshold
    return answerability


@cache
def shared_forms() -> FormModel:
    """The learnt form of answer a question asks for (bot.answer.forms), loaded once per process."""
    return FormModel.load()


@cache
def shared_summary_model() -> SummaryModel:
    """The learnt choice of a document's key sentences (bot.answer.summary), loaded once per process."""
    return SummaryModel.load()
