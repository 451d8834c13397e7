"""Cite: the draft of the answer step turned into the answer object (bot.types.Answer), with numbered verbatim
quotes and the contexts retrieved."""

from bot.types import Answer, ChainState, Citation, Context, Draft


def cite(state: ChainState) -> Answer:
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
