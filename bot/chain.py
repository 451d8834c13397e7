"""The answering chain as one LCEL expression: link | condense_question | retrieve | answer | cite, where with an
LLM configured the answer step is itself `extractive | generate | guard`."""

import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from bot.conversation import previous_turn
from bot.types import Answer, Citation, Context, Draft


def timed(name: str, step: Callable[[dict], Any]) -> RunnableLambda:
    """Run `step` on the chain state and record its milliseconds in state["timings_ms"][name]."""

    def run(state: dict) -> Any:
        started = time.perf_counter()
        result = step(state)
        state["timings_ms"][name] = round((time.perf_counter() - started) * 1000, 2)
        return result

    return RunnableLambda(run, name=name)


def cite(state: dict) -> Answer:
    """Turn the answerer's draft into the answer object: numbered verbatim quotes and the contexts used."""
    draft: Draft = state["draft"]
    timings = state["timings_ms"]
    timings["total"] = round(sum(v for k, v in timings.items() if k != "total"), 2)
    return Answer(
        question=state["question"],
        answer=draft.text,
        short_answer=None if draft.abstained else short_answer(draft),
        abstained=draft.abstained,
        confidence=None if draft.confidence is None else round(draft.confidence, 4),
        citations=[
            Citation(n=n, source=s.source, chunk_id=s.chunk_id, quote=s.text) for n, s in enumerate(draft.quotes, 1)
        ],
        contexts=[
            Context(chunk_id=p.chunk_id, source=p.source, text=p.text, score=round(p.score, 4))
            for p in state["passages"]
        ],
        backend=state.get("backend", "extractive"),
        guard=state.get("guard"),
        standalone_question=state["standalone_question"],
        timings_ms=timings,
    )


def short_answer(draft: Draft) -> str | None:
    """The bare answer as the document writes it: the reader's span, or the rule reader's phrase when it lies
    verbatim in the first quote; None when there is none."""
    if draft.short_answer is not None:
        return draft.short_answer
    if draft.phrase and draft.quotes and draft.phrase in draft.quotes[0].text:
        return draft.phrase
    return None


def build_chain(
    link: Callable[[str], str],
    condense_question: Callable[[dict], str],
    retrieve: Callable[[str], list],
    answer: Callable[[str, list, str], Draft],
    generate: Callable[[str, list], Any] | None = None,
    guard: Callable[[dict], dict] | None = None,
) -> Runnable:
    """Input: {"question", "history", "timings_ms": {}}. Output: an Answer.

    `answer(question, passages, previous)` reads the standalone question with the conversation's last turn.

    `link` writes the question (and the user's earlier turns) in the documents' spelling; `condense_question`
    reads those (state["linked"]) to make a follow-up stand alone.

    With `generate` (an LLM) and `guard`, the extractive draft is still made first: it is the abstention signal
    and the fallback; the LLM then writes from the same passages and the guard decides which draft is cited."""
    answer_step = RunnablePassthrough.assign(
        draft=timed("answer", lambda s: answer(s["standalone_question"], s["passages"], previous_turn(s["history"])))
    )
    if generate is not None and guard is not None:
        answer_step = (
            answer_step
            | RunnablePassthrough.assign(
                generation=timed("generate", lambda s: generate(s["standalone_question"], s["passages"]))
            )
            | timed("guard", guard)
        )

    def link_turns(state: dict) -> dict:
        history = [
            t.model_copy(update={"content": link(t.content)}) if t.role == "user" else t for t in state["history"]
        ]
        return {"question": link(state["question"]), "history": history}

    return (
        RunnablePassthrough.assign(linked=timed("link", link_turns))
        | RunnablePassthrough.assign(standalone_question=timed("condense", condense_question))
        | RunnablePassthrough.assign(passages=timed("retrieve", lambda s: retrieve(s["standalone_question"])))
        | answer_step
        | RunnableLambda(cite, name="cite")
    )
