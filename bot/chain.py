"""The answering chain as one LCEL expression: link | condense_question | understand | retrieve | expand | answer | cite, where
with an LLM configured the answer step is itself `extractive | generate | guard`. Each step reads what the steps
before it added to the state and adds its own; none calls back into an earlier one."""

import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from bot.answer.cite import cite
from bot.answer.understand import understand
from bot.conversation import previous_turn
from bot.types import Answerer, ChainState


def timed(name: str, step: Callable[[ChainState], Any]) -> RunnableLambda:
    """Run `step` on the chain state and record its milliseconds in state["timings_ms"][name]."""

    def run(state: ChainState) -> Any:
        started = time.perf_counter()
        result = step(state)
        state["timings_ms"][name] = round((time.perf_counter() - started) * 1000, 2)
        return result

    return RunnableLambda(run, name=name)


def build_chain(
    link: Callable[[str], str],
    condense_question: Callable[[ChainState], str],
    retrieve: Callable[[str], list],
    expand: Callable[[list], Any],
    answer: Answerer,
    generate: Callable[[str, list], Any] | None = None,
    guard: Callable[[ChainState], dict] | None = None,
) -> Runnable:
    """Input: a ChainState with "question", "history" and "timings_ms" ({}); each step adds its key. Output: an
    Answer.

    `understand` reads what the standalone question asks once (bot.answer.understand.Question); `expand(passages)`
    reads the stored chunks around the passages (their sentences: a Corpus); `answer(question, passages, corpus,
    previous)` reads the question there, with the conversation's last turn.

    `link` writes the question (and the user's earlier turns) in the documents' spelling; `condense_question`
    reads those (state["linked"]) to make a follow-up stand alone.

    With `generate` (an LLM) and `guard`, the extractive draft is still made first: it is the abstention signal
    and the fallback; the LLM then writes from the same passages and the guard decides which draft is cited."""
    answer_step = RunnablePassthrough.assign(
        draft=timed(
            "answer",
            lambda s: answer(s["asked"], s["passages"], s["corpus"], previous_turn(s["history"])),
        )
    )
    if generate is not None and guard is not None:
        answer_step = (
            answer_step
            | RunnablePassthrough.assign(
                generation=timed("generate", lambda s: generate(s["standalone_question"], s["passages"]))
            )
            | timed("guard", guard)
        )

    def link_turns(state: ChainState) -> dict:
        history = [
            t.model_copy(update={"content": link(t.content)}) if t.role == "user" else t for t in state["history"]
        ]
        return {"question": link(state["question"]), "history": history}

    return (
        RunnablePassthrough.assign(linked=timed("link", link_turns))
        | RunnablePassthrough.assign(standalone_question=timed("condense", condense_question))
        | RunnablePassthrough.assign(asked=timed("understand", lambda s: understand(s["standalone_question"])))
        | RunnablePassthrough.assign(passages=timed("retrieve", lambda s: retrieve(s["standalone_question"])))
        | RunnablePassthrough.assign(corpus=timed("expand", lambda s: expand(s["passages"])))
        | answer_step
        | RunnableLambda(cite, name="cite")
    )
