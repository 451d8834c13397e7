"""Cite: the draft of the answer step turned into the answer object (bot.types.Answer), with numbered verbatim
quotes (a PDF's naming its page, which the sentence carries from the chunk it was read in) and the contexts
retrieved. The citation markers of a text ("[1]", "[1, 3]", an LLM's "[Document 2]") are read here too."""

import re
from dataclasses import dataclass

from bot.answer.state import ChainState
from bot.lang import alternatives, vocabulary
from bot.types import Answer, Citation, Context, Draft

LABEL = f"(?:{alternatives(vocabulary().citation_labels)})"  # bot/lang/en/guard.toml
MARKER = re.compile(rf"\[\s*(?:{LABEL}\s*)?\d+(?:\s*[,;]\s*(?:{LABEL}\s*)?\d+)*\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """A citation marker in a text: where it is and the passage numbers it names ("[1, 3]" → (1, 3))."""

    start: int
    end: int
    numbers: tuple[int, ...]


def markers_in(text: str) -> list[Marker]:
    found = []
    for m in MARKER.finditer(text):
        digits = "".join(c if c.isdigit() else " " for c in m.group())
        found.append(Marker(m.start(), m.end(), tuple(int(n) for n in digits.split())))
    return found


def without_markers(text: str) -> str:
    """The text with its citation markers (and the space before each) taken out: "Moretti [1]." → "Moretti."."""
    kept, last = [], 0
    for m in markers_in(text):
        kept.append(text[last : m.start].rstrip())
        last = m.end
    return "".join(kept) + text[last:]


def cite(state: ChainState) -> Answer:
    """Turn the answerer's draft into the answer object: numbered verbatim quotes and the contexts used."""
    draft: Draft = state["draft"]
    steps = state["timings_ms"]
    timings = {**steps, "total": round(sum(v for k, v in steps.items() if k != "total"), 3)}
    return Answer(
        question=state["question"],
        answer=draft.text,
        short_answer=None if draft.abstained else draft.short_answer,  # a span reply's span, never a sentence's
        abstained=draft.abstained,
        confidence=None if draft.confidence is None else round(draft.confidence, 4),
        citations=[
            Citation(n=n, source=s.source, chunk_id=s.chunk_id, quote=s.text, page=s.page, section=s.section)
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
