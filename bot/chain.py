"""The answering chain as one LCEL expression:

    link | condense | understand | retrieve | expand | read | decide | overview | quote | reply | cite

and with an LLM configured `… | reply | generate | guard | cite` (except for an overview: the document's key
sentences, quoted, are its answer, and for a list of the people named the sentences introducing them; another long
form's closest sentences, quoted, are the guard's fallback). Each step reads what the steps before it added to the
state and hands on a new state with its own typed value added (a Question, passages, a Corpus, a Reading, a Decision,
a Draft) and its milliseconds; none changes the state it was handed, none calls back into an earlier one. read,
decide, overview, quote and reply are timed together as "answer"."""

import inspect
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from langchain_core.runnables import Runnable, RunnableBranch, RunnableConfig, RunnableLambda, RunnablePassthrough

from bot.answer.cite import cite
from bot.answer.condense import previous_turn
from bot.answer.corpus import Corpus
from bot.answer.forms import LONG_FORMS, OVERVIEWS
from bot.answer.overview import (
    PEOPLE_SENTENCES,
    QUOTED_SENTENCES,
    Summaries,
    asks_for_people,
    quoted_closest,
    quoted_overview,
    quoted_people,
    summary_passages,
)
from bot.answer.reply import reply_to
from bot.answer.state import ChainState, Linked
from bot.answer.understand import understand
from bot.types import Decision, Draft, Evidence, Generation, Passage, Question, Reading, Sentence, Turn

if TYPE_CHECKING:
    from bot.answer.sentence_guard import HeldSentences

T = TypeVar("T")

Read = Callable[[Question, list[Passage], Corpus, str], Reading | None]  # bot.answer.read.SentenceReader
Decide = Callable[[Evidence, float, Question], Decision]  # bot.answer.decide.Answerability.decide
Choose = Callable[[Question, list[Passage], Corpus, int], list[Sentence]]  # bot.answer.read.SentenceReader.closest
# bot.answer.generative.Generator: (standalone question, passages, question as asked, history, form, on_token)
Generate = Callable[[str, list[Passage], str, list[Turn], str, Callable[[str], None] | None], Generation]
Hold = Callable[[ChainState, Callable[[str], None] | None], "HeldSentences | None"]  # SentenceGuard.hold


def timed(name: str, step: Callable[..., ChainState]) -> RunnableLambda:
    """A stage of the chain: `step` returns a new state (the one it was given, its own keys added), and this adds the
    stage's milliseconds under timings_ms[name], in a new dict too: no stage changes the state it was handed. A step
    of two parameters is given the run's config too."""
    takes_config = len(inspect.signature(step).parameters) == 2

    def run(state: ChainState, config: RunnableConfig) -> ChainState:
        started = time.perf_counter()
        after = step(state, config) if takes_config else step(state)
        ms = round((time.perf_counter() - started) * 1000, 3)
        return {**after, "timings_ms": {**after["timings_ms"], name: ms}}

    return RunnableLambda(run, name=name)


def adds(name: str, key: str, step: Callable[[ChainState], T]) -> RunnableLambda:
    """A timed stage that adds one typed value, `step(state)`, to the state under `key`."""
    return timed(name, lambda state: {**state, key: step(state)})


def cited(drafts: Runnable) -> Runnable:
    """The whole chain: `draft_chain(…)` then the cite step. Input: a ChainState with "question", "history" and
    "timings_ms" ({}); output: an Answer."""
    return drafts | RunnableLambda(cite, name="cite")


def generate_and_guard(
    generate: Generate,
    guard: Callable[[ChainState], dict],
    expand: Callable[[list[Passage]], Corpus],
    llm_reads: Callable[[list[Passage]], list[Passage]],
    hold: Hold | None = None,
) -> Runnable:
    """The LLM's steps after the extractive draft: it writes from `llm_reads(passages)` (given the standalone
    question, and the question as asked with the earlier turns), and the guard checks that answer against the same
    passages (and their sentences) and decides which draft is cited. An answer of several sentences is held sentence
    by sentence as the LLM writes it (`hold`, bot.answer.sentence_guard): each sentence that holds goes at once to
    the run's `on_sentence` (config["configurable"], set by a streamed ask)."""

    def generate_step(s: ChainState, config: RunnableConfig) -> ChainState:
        llm_passages = llm_reads(s["passages"])
        s = {**s, "llm_passages": llm_passages, "llm_corpus": expand(llm_passages)}
        held = hold(s, config.get("configurable", {}).get("on_sentence")) if hold else None
        on_token = held.feed if held else None
        generation = generate(
            s["standalone_question"], llm_passages, s["question"], s["history"], s["asked"].form, on_token
        )
        if held:
            held.finish(generation.text or "")
        return {**s, "generation": generation, "held": held}

    return timed("generate", generate_step) | timed("guard", guard)


def answer_steps(
    read: Read, decide: Decide, summaries: Summaries | None = None, choose: Choose | None = None
) -> Runnable:
    """read | decide | overview | quote | reply, each adding its value to the state: `read(question, passages,
    corpus, previous)` finds the best span, with the conversation's last turn; `decide(evidence, yes, question)`
    whether to answer it; for an overview question, the documents' key sentences (`summaries()`), quoted
    (bot.answer.overview), and for a list of the people named the sentences introducing them; for another long
    form, the sentences closest to it (`choose`), quoted, which the guard gives where none of the LLM's holds; the
    reply step words the overview or the span (bot.answer.reply)."""

    def read_step(s: ChainState) -> Reading | None:
        return read(s["asked"], s["passages"], s["corpus"], previous_turn(s["history"]))

    def decide_step(s: ChainState) -> Decision | None:
        reading = s["reading"]
        return None if reading is None else decide(reading.evidence, reading.yes, s["asked"])

    def overview_step(s: ChainState) -> Draft | None:
        if summaries is None:
            return None
        if asks_for_people(s["asked"]):
            return quoted_people(s["passages"], s["corpus"], summaries(), PEOPLE_SENTENCES)
        if s["asked"].form not in OVERVIEWS:
            return None
        return quoted_overview(s["asked"].form, s["passages"], s["corpus"], summaries())

    def quote_step(s: ChainState) -> Draft | None:
        if choose is None or s["asked"].form not in LONG_FORMS - OVERVIEWS:
            return None
        closest = choose(s["asked"], s["passages"], s["corpus"], QUOTED_SENTENCES)
        return quoted_closest(closest, s["corpus"].documents)

    def reply_step(s: ChainState) -> Draft:
        return s["overview"] or reply_to(s["asked"], s["reading"], s["decision"], s["corpus"])

    return (
        RunnablePassthrough.assign(reading=RunnableLambda(read_step, name="read"))
        | RunnablePassthrough.assign(decision=RunnableLambda(decide_step, name="decide"))
        | RunnablePassthrough.assign(overview=RunnableLambda(overview_step, name="overview"))
        | RunnablePassthrough.assign(quoted=RunnableLambda(quote_step, name="quote"))
        | RunnablePassthrough.assign(draft=RunnableLambda(reply_step, name="reply"))
    )


def draft_chain(
    link: Callable[[str], str],
    condense_question: Callable[[ChainState], str],
    retrieve: Callable[[str], list[Passage]],
    expand: Callable[[list[Passage]], Corpus],
    read: Read,
    decide: Decide,
    generate: Generate | None = None,
    guard: Callable[[ChainState], dict] | None = None,
    llm_reads: Callable[[list[Passage]], list[Passage]] | None = None,
    question_form: Callable[[str], str] | None = None,
    summaries: Summaries | None = None,
    hold: Hold | None = None,
    choose: Choose | None = None,
) -> Runnable:
    """The chain up to the draft: its output is the state, with "draft" (and the reading and decision behind it).

    `link` writes the question (and the user's earlier turns) in the documents' spelling; `condense_question`
    reads those (state["linked"]) to make a follow-up stand alone. `understand` reads what the standalone question
    asks, once (a Question). `expand(passages)` reads the stored chunks around the passages (their sentences: a
    Corpus). `read` and `decide` make the extractive draft (`answer_steps`).

    With `generate` (an LLM) and `guard`, the extractive draft is still made first: it is the abstention signal
    and the fallback; the LLM then writes from what `llm_reads(passages)` gives it (the whole documents in a fixed
    order where they fit, so that its prompt's prefix is the same for every question), and the guard checks its
    answer against those and decides which draft is cited.

    `question_form(question)` tells the form of answer a question asks for (bot.answer.forms; one fact without it).
    An overview also reads the documents' key sentences (`summaries()`, chosen at indexing) and is answered with
    them, quoted (bot.answer.overview); the LLM's answers of the other forms of several sentences are held sentence
    by sentence (bot.answer.sentence_guard)."""

    def understand_step(s: ChainState) -> Question:
        text = s["standalone_question"]
        return understand(text, question_form(text) if question_form else "fact")

    def retrieve_step(s: ChainState) -> list[Passage]:
        return summary_passages(s["asked"], retrieve(s["standalone_question"]), summaries() if summaries else {})

    steps = timed("answer", answer_steps(read, decide, summaries, choose if generate is not None else None).invoke)
    if generate is not None and guard is not None:
        llm_steps = generate_and_guard(generate, guard, expand, llm_reads or (lambda passages: passages), hold)
        # an overview's quoted key sentences are its answer (bot.answer.overview says why)
        steps = steps | RunnableBranch((lambda s: s["overview"] is not None, RunnablePassthrough()), llm_steps)

    def link_turns(state: ChainState) -> Linked:
        history = [
            t.model_copy(update={"content": link(t.content)}) if t.role == "user" else t for t in state["history"]
        ]
        return {"question": link(state["question"]), "history": history}

    return (
        adds("link", "linked", link_turns)
        | adds("condense", "standalone_question", condense_question)
        | adds("understand", "asked", understand_step)
        | adds("retrieve", "passages", retrieve_step)
        | adds("expand", "corpus", lambda s: expand(s["passages"]))
        | steps
    )
