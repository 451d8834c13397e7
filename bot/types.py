"""Plain data types shared by the layers: passages and sentences of the documents, what the chain's steps hand down
(a Question, a Reading with its Evidence, a Decision, a Draft, the LLM's Generation and its LLMReview), a checked
question, and the answer object that `eventbot ask --json` prints and `POST /api/ask` returns (README: "The answer object")."""

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from index.text.sentences import ParsedSentence


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
    section: str | None = None  # the slide ("slide 3") or heading it is under, in a converted document
    parsed: ParsedSentence | None = None  # tokens and entities, as indexing parsed them
    dense: float = 0.0
    coverage: float = 0.0
    score: float = 0.0

    @property
    def text(self) -> str:
        return self.span.text


# -- what the chain's steps hand down (bot/chain.py): understand → Question, read → Reading (with its Evidence),
# decide → Decision, reply → Draft


@dataclass(frozen=True)
class Question:
    """A question as the answer step reads it: its text (standing alone, in the documents' spelling), what it asks
    (one of bot.answer.understand.KINDS), its content terms and its names. Made once by the chain's understand step and handed to read,
    decide and reply, so that none of them works it out again."""

    text: str
    kind: str
    terms: frozenset[str]
    names: tuple[str, ...]
    form: str = "fact"  # the form of answer it asks for: one of bot.answer.forms.FORMS


@dataclass
class Evidence:
    """One reading of a question: the span, where it sits, and the reader's and retrieval's scores."""

    question: str
    span: str
    sentence: str
    window: str
    span_entities: list[str] = field(default_factory=list)
    margin: float = 0.0  # span score minus the no-answer score
    null_score: float = 0.0
    runner_up: float = 0.0  # the best margin in the other windows
    agreeing: int = 1  # windows whose best span is the same text
    dense: float = 0.0  # cosine of question and sentence
    coverage: float = 0.0  # IDF-weighted share of the question's terms around the sentence
    sentence_rank: int = 0
    passage_score: float = 0.0
    passage_rank: int = 0


@dataclass
class Reading:
    """What the reader found for one question: the best span, where it sits, and the evidence for judging it."""

    span: str
    sentence: Sentence
    evidence: Evidence
    yes: float = 0.5  # the yes/no head's probability of "yes" in the span's window
    start: int = 0  # the span's offsets in its document
    end: int = 0


@dataclass(frozen=True)
class Decision:
    """Whether to answer, how sure, and for a yes/no question which way. `unsure`: not sure enough to answer, but
    near enough to say so and quote the closest sentence (between the floor and the threshold)."""

    answer: bool
    confidence: float
    threshold: float
    yes: bool
    unsure: bool = False


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
    evidence: Evidence | None = None  # what that probability was judged from


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
    section: str | None = Field(
        None,
        description="Where the quote is in a Word, PowerPoint, Excel or EPUB file: 'slide 3', or the heading it is "
        "under (absent for other documents and before a document's first heading)",
        exclude_if=lambda v: v is None,
    )


def place_of(page: int | None, section: str | None) -> str:
    """How a quote's place is said after its document's name: ", page 3" (a PDF), ", slide 2", ", under “Results”"
    (a converted document's slide or heading), or nothing."""
    if page:
        return f", page {page}"
    if section:
        return f", {section}" if section.startswith("slide ") else f", under “{section}”"
    return ""


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
    """A question and its history that passed `bot.questions.check_question` (stripped, within the limits): made
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


@dataclass
class Generation:
    """What the LLM wrote for one question, or why it wrote nothing. `token_logprobs`: the model's log-probability
    of each token it wrote (before the answer's shape is held), and `p_not_in_documents` its probability of opening
    with the abstention, `yes_share` its P(Yes) / (P(Yes) + P(No)) there: signals for the decision to answer
    (bot.answer.llm_decide); None where the backend does not give them."""

    backend: str
    text: str | None
    error: str | None = None
    token_logprobs: list[float] | None = None
    p_not_in_documents: float | None = None
    yes_share: float | None = None


@dataclass
class LLMReview:
    """A grounded LLM answer as the learnt decision judged it (calibration reads it to label and refit)."""

    draft: Draft  # the LLM's answer, renumbered and quoted
    features: list[float]  # bot.answer.llm_decide.LLM_FEATURES
    probability: float
