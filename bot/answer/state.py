"""The chain's state (bot.chain): what its steps pass along, the input keys first, then one key added by each step.
Apart from bot.types because it names the Corpus, which the expand step builds from those types."""

from typing import TYPE_CHECKING, NotRequired, TypedDict

from bot.answer.corpus import Corpus
from bot.types import Decision, Draft, Generation, LLMReview, Passage, Question, Reading, Turn

if TYPE_CHECKING:
    from bot.answer.sentence_guard import HeldSentences


class Linked(TypedDict):
    """The question and the user's earlier turns in the documents' spelling (the link step)."""

    question: str
    history: list[Turn]


class ChainState(TypedDict):
    """What the chain's steps pass along (bot.chain): the input keys, then one key added by each step."""

    question: str
    history: list[Turn]
    timings_ms: dict[str, float]  # milliseconds of each step, by its name
    linked: NotRequired[Linked]  # link: {"question", "history"} in the documents' spelling
    standalone_question: NotRequired[str]  # condense: the question made to stand alone
    asked: NotRequired[Question]  # understand: what it asks
    passages: NotRequired[list[Passage]]  # retrieve
    corpus: NotRequired[Corpus]  # expand: the sentences of the chunks around the passages
    reading: NotRequired[Reading | None]  # read: the best span and its evidence
    decision: NotRequired[Decision | None]  # decide: whether to answer it
    overview: NotRequired[Draft | None]  # overview: an overview's key sentences or the people's introductions, quoted
    quoted: NotRequired[Draft | None]  # quote: another long form's closest sentences, quoted (the LLM's fallback)
    draft: NotRequired[Draft]  # reply (and guard, which may replace it)
    llm_passages: NotRequired[list[Passage]]  # generate: what the LLM read, numbered as it cites them
    llm_corpus: NotRequired[Corpus]  # generate: their sentences, which the guard checks
    generation: NotRequired[Generation]  # generate: the LLM's candidate
    held: NotRequired["HeldSentences | None"]  # generate: a long answer's sentences, held as the LLM wrote them
    backend: NotRequired[str]  # guard: which backend's draft is cited
    guard: NotRequired[str]  # guard: "passed" or "fallback"
    llm_review: NotRequired[LLMReview | None]  # guard: the LLM's grounded answer as the decision judged it
    extractive_draft: NotRequired[Draft]  # guard: the span reader's draft, whichever is cited
