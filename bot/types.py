"""Plain data types shared by the layers: passages and sentences of the documents, an answerer's draft and its
interface, the chain's state, and the answer object that `eventbot ask --json` prints and `POST /api/ask` returns (README: "The answer object")."""

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel, Field

from index.text import ParsedSentence


@dataclass(frozen=True)
class Span:
    """A piece of a text, with its offsets in that text."""

    text: str
    start: int
    end: int


@dataclass
class Passage:
    chunk_id: str
    source: str
    path: str
    title: str
    text: str
    start: int
    score: float  # cosine similarity of question and passage


@dataclass
class Sentence:
    """A sentence of a document, located by its offsets in the document's text."""

    path: str
    source: str
    span: Span  # offsets within the document
    index: int  # position among the document's sentences
    chunk_id: str = ""  # the retrieved passage it was found in
    page: int | None = None  # the page of a PDF it starts on (None for other documents)
    parsed: ParsedSentence | None = None  # tokens and entities, as indexing parsed them
    dense: float = 0.0
    coverage: float = 0.0
    score: float = 0.0

    @property
    def text(self) -> str:
        return self.span.text


@dataclass
class Draft:
    """What an answerer decided, before it is turned into the answer object."""

    text: str  # answer text with [n] markers
    abstained: bool
    quotes: list[Sentence]  # quotes[n-1] is what [n] cites
    reason: str = ""
    phrase: str = ""  # the precise phrase extracted from quotes[0] ("silver medal"), when the answer rests on one
    short_answer: str | None = None  # the bare answer span as the document writes it, when the reply is that span
    confidence: float | None = None  # the learnt probability that the reader's answer is right
    evidence: object | None = None  # what that probability was judged from (bot.answer.decide.Evidence)


class Citation(BaseModel):
    n: int = Field(description="The number of the `[n]` marker in the answer text")
    source: str = Field(description="Document the quote comes from")
    chunk_id: str
    quote: str = Field(description="Verbatim text from the document")
    page: int | None = Field(
        None,
        description="The page of a PDF the quote is on (absent for other documents)",
        exclude_if=lambda v: v is None,
    )


class Context(BaseModel):
    chunk_id: str
    source: str
    text: str
    score: float


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class CheckedQuestion:
    """A question and its history that passed `bot.event_bot.check_question` (stripped, within the limits): made
    once where a question comes in (a CLI argument, a request), so that the bot does not check it again."""

    text: str
    history: tuple[Turn, ...] = ()


class Answer(BaseModel):
    question: str
    answer: str
    short_answer: str | None = Field(
        None, description="The bare answer span exactly as the document writes it; null when abstained or a sentence"
    )
    abstained: bool
    confidence: float | None = Field(
        None, description="The learnt probability that the answer is right (the answerer abstains below a threshold)"
    )
    citations: list[Citation] = []
    contexts: list[Context] = []
    backend: str = "extractive"
    guard: Literal["passed", "fallback"] | None = None
    standalone_question: str | None = Field(
        None, description="The question as retrieved, after resolving follow-ups against history"
    )
    timings_ms: dict[str, float] = {}


class ChainState(TypedDict):
    """What the chain's steps pass along (bot.chain): the input keys, then one key added by each step."""

    question: str
    history: list[Turn]
    timings_ms: dict[str, float]  # milliseconds of each step, by its name
    linked: NotRequired[dict]  # link: {"question", "history"} in the documents' spelling
    standalone_question: NotRequired[str]  # condense: the question made to stand alone
    asked: NotRequired[Any]  # understand: what it asks (bot.answer.understand.Question)
    passages: NotRequired[list[Passage]]  # retrieve
    corpus: NotRequired[Any]  # expand: the sentences of the chunks around the passages (bot.answer.corpus.Corpus)
    reading: NotRequired[Any]  # read: the best span and its evidence (bot.answer.read.Reading), or None
    decision: NotRequired[Any]  # decide: whether to answer it (bot.answer.decide.Decision), or None
    draft: NotRequired[Draft]  # reply (and guard, which may replace it)
    generation: NotRequired[Any]  # generate: the LLM's candidate (bot.answer.generative.Generation)
    backend: NotRequired[str]  # guard: which backend's draft is cited
    guard: NotRequired[str]  # guard: "passed" or "fallback"
