"""Cite: the draft of the answer step turned into the answer object (bot.types.Answer), with numbered verbatim
quotes (a PDF's naming its page, which the sentence carries from the chunk it was read in) and the contexts
retrieved."""

from bot.types import Answer, ChainState, Citation, Context, Draft


def cite(state: ChainState) -> Answer:
    """Turn the answerer's draft into the answer object: numbered verbatim quotes and the contexts used."""
    draft: Draft = state["draft"]
    timings = state["timings_ms"]
    timings["total"] = round(sum(v for k, v in timings.items() if k != "total"), 2)
    return Answer(
        question=state["question"],
        answer=draft.text,
        short_answer=None if draft.abstained else draft.short_answer,  # a span reply's span, never a sentence's
        abstained=draft.abstained,
        confidence=None if draft.confidence is None else round(draft.confidence, 4),
        citations=[
            Citation(n=n, source=s.source, chunk_id=s.chunk_id, quote=s.text, page=s.page)
            for n, s in enumerate(draft.quotes, 1)
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
