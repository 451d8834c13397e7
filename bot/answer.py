"""The answer object: what `eventbot ask --json` prints and `POST /api/ask` returns (see DESIGN.md)."""

from typing import Literal

from pydantic import BaseModel, Field


class Citation(BaseModel):
    n: int = Field(description="The number of the `[n]` marker in the answer text")
    source: str = Field(description="Document the quote comes from")
    chunk_id: str
    quote: str = Field(description="Verbatim text from the document")


class Context(BaseModel):
    chunk_id: str
    source: str
    text: str
    score: float


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class Answer(BaseModel):
    question: str
    answer: str
    abstained: bool
    citations: list[Citation] = []
    contexts: list[Context] = []
    backend: str = "extractive"
    guard: Literal["passed", "fallback"] | None = None
    standalone_question: str | None = Field(
        None, description="The question as retrieved, after resolving follow-ups against history"
    )
    timings_ms: dict[str, float] = {}
