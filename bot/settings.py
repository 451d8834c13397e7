"""The one place defaults live. Every value can be set as an `EVENTBOT_*` environment variable or in `.env`."""

import string
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "data"
READER_WEIGHTS = Path(__file__).resolve().parent / "reader" / "weights" / "reader.safetensors"


COLLECTION_CHARACTERS = frozenset(string.ascii_letters + string.digits + "._-")


def checked_collection(name: str) -> str:
    """`name` when it can name a collection (what Chroma takes, and safe in a file name), else CollectionNameError
    (one line)."""
    from bot.errors import CollectionNameError

    ends = string.ascii_letters + string.digits
    if not (3 <= len(name) <= 64 and set(name) <= COLLECTION_CHARACTERS and name[0] in ends and name[-1] in ends):
        raise CollectionNameError(
            f"{name!r} cannot name a collection: 3 to 64 letters, digits, '.', '_' or '-', starting and ending with a "
            "letter or digit"
        )
    if ".." in name:
        raise CollectionNameError(f"{name!r} cannot name a collection: it holds '..'")
    return name


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVENTBOT_", env_file=".env", extra="ignore")

    index_dir: Path = Field(Path(".eventbot/index"), description="where the embedded Chroma index is kept")
    chroma_url: str | None = Field(None, description="Chroma server URL; server mode when set")
    collection: Annotated[str, AfterValidator(checked_collection)] = Field(
        "eventbot",
        description="the collection a question reads and `eventbot index` writes (3-64 letters, digits, . _ -)",
    )
    corpus: list[Path] = Field(
        [DEFAULT_CORPUS / "event-article.txt"],
        description="what `eventbot index` reads without arguments (files, folders)",
    )

    max_file_bytes: int = Field(5_000_000, description="a larger file is refused by `eventbot index` and uploads")
    ocr: Literal["on", "off"] = Field(
        "on", description="on: a PDF's scanned pages (no text layer) are read by Tesseract OCR where it is installed"
    )
    uploads: Literal["on", "off"] = Field(
        "off", description="without an API key, whether /api/documents and the chat may add and remove documents"
    )
    uploads_dir: Path = Field(Path(".eventbot/uploads"), description="where uploaded documents are kept")
    max_upload_files: int = Field(10, ge=1, description="files in one upload, at most")
    chunk_size: int = Field(400, description="characters per chunk the documents are split into")
    chunk_overlap: int = Field(80, description="characters neighbouring chunks share")
    summaries: Literal["on", "off"] = Field(
        "on",
        description="on: each document's key sentences are chosen at indexing (a learnt model over their embeddings), "
        "its summary in the documents list and what an overview quotes; off: its opening sentences stand for it",
    )
    top_k: int = Field(6, description="passages retrieved per question")
    retriever: Literal["dense", "hybrid"] = Field(
        "hybrid", description="dense: vectors alone; hybrid: vectors and BM25 keywords, fused"
    )
    vector_cache_entries: int = Field(
        20_000, description="vectors (questions, sentences) kept in memory at ask time; 1.5 KB each"
    )
    chunk_cache_entries: int = Field(2_000, description="chunks read from the store kept in memory; ~5 KB each")
    answer_cache_entries: int = Field(
        512,
        ge=0,
        description="answers kept per index: the same question (and history) is answered once, and a burst of it"
        " waits for that one answer; 0: off",
    )
    serve_malloc_arenas: int = Field(
        2, ge=0, description="glibc malloc arenas when serving (fewer: less memory held by request threads); 0: default"
    )
    serve_torch_threads: int = Field(
        1, ge=1, description="torch threads per request when serving (requests run in parallel)"
    )

    embed_bf16: bool = Field(
        False,
        description="the embedder's passes in bf16 where the CPU has bf16 instructions (AVX512-BF16, AMX); off by"
        " default so that every CPU embeds alike (vectors within cosine 0.99998; one answer of the 25 development"
        " sets differed); ignored on other CPUs",
    )
    reader_bf16: bool = Field(
        False,
        description="the reader's passes in bf16 where the CPU has the instructions (about twice as fast there); off"
        " by default so that every CPU reads alike: the decision to answer is fitted on fp32 readings; ignored on"
        " other CPUs",
    )
    reader_weights: Path = Field(READER_WEIGHTS, description="the span reader's trained weights (`train-reader`)")
    reader_max_tokens: int = Field(192, ge=64, le=512, description="tokens per window the reader reads")
    reader_windows: int = Field(4, ge=1, le=20, description="sentences (each with its neighbours) read per question")
    answer_threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="the reader answers when its learnt probability of being right is at least this"
        " (default: the calibrated one)",
    )

    llm_answer_threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="the LLM's answer is given when the learnt decision's probability that it is right is at least"
        " this (default: the fitted one); else the span reader's reply stands",
    )

    llm: Literal["none", "llamacpp", "ollama", "openai"] = Field(
        "llamacpp",
        description="llamacpp (the GGUF `make run` installs, run in-process), ollama or openai (any OpenAI-compatible"
        " server): an LLM reads, the guard and the learnt decision choose; none: the span reader alone (faster, answers"
        " less)",
    )
    llm_model: str | None = Field(
        None, description="the GGUF path (llamacpp; default: the one `make run` installs) or the model's name"
    )
    llm_base_url: str | None = Field(None, description="the ollama or OpenAI-compatible server's URL")
    llm_api_key: str | None = Field(None, description="the key the LLM server wants, if any")
    llm_timeout_s: float = Field(
        60.0, description="seconds an LLM answer may take, its wait for the model included; then the span reader's"
    )
    llm_queue: int = Field(
        8, ge=0, description="questions that may wait for the in-process LLM; beyond, 503 with Retry-After"
    )
    store_timeout_s: float = Field(10.0, gt=0, description="seconds a Chroma server may take per call; then 503")
    llm_max_tokens: int = Field(256, description="tokens the LLM may write per answer")
    llm_history_turns: int = Field(
        0,
        ge=0,
        le=20,
        description="earlier questions (with their answers) the LLM sees before a follow-up, which it then reads as"
        " asked; 0: it reads the follow-up made standalone, alone",
    )
    llm_document_chars: int = Field(
        10_000,
        ge=0,
        description="documents of at most this many characters in all go whole to the LLM, the same prompt prefix"
        " for every question (llama.cpp reads it once); beyond, the question's passages",
    )

    llm_state_dir: Path = Field(
        Path(".eventbot/llm-states"),
        description="where the in-process LLM keeps what it read of each documents prompt (a folder per collection),"
        " to load instead of reading them again (in a new process too)",
    )
    llm_state_mb: int = Field(
        1024, ge=0, description="megabytes of saved LLM readings kept (about 30 KB a token read); 0: none saved"
    )

    api_key: str | None = Field(None, description="Bearer key for /api and /v1; the chat UI then asks for it too")
    max_question_chars: int = Field(2000, description="a longer question is refused (422)")
    max_history_messages: int = Field(40, description="earlier messages a request may carry; more are refused (422)")
    feedback_path: Path = Field(
        Path(".eventbot/feedback.sqlite3"), description="the SQLite file where feedback on replies is kept"
    )
    conversations_path: Path = Field(
        Path(".eventbot/conversations.sqlite3"), description="the SQLite file where the chat's conversations are kept"
    )
    max_comment_chars: int = Field(1000, ge=0, description="a longer feedback comment is refused (422)")
    max_body_bytes: int = Field(1_000_000, description="larger request bodies get 413 before they are parsed")
    rate_limit: int = Field(600, ge=0, description="requests per minute per client IP on /api and /v1 (429); 0: off")
    login_attempts: int = Field(
        5, ge=0, description="failed chat logins per client IP in 5 minutes, then 429 until the 5 minutes pass; 0: off"
    )
