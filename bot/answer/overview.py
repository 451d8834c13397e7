"""What an overview ("what is this about?", "summarize it") reads and, where the LLM's answer does not hold or there
is no LLM, says: a news document says what it is about first, so an overview reads the opening chunk of each
document retrieved (`lead_passages`), and its fallback is the best document's opening sentences, quoted
(`quoted_overview`). The LLM's answers of several sentences, overviews and the other long forms of
bot.answer.forms, are held sentence by sentence by the guard (bot.answer.sentence_guard)."""

from collections.abc import Callable

from bot.answer.corpus import Corpus
from bot.lang import vocabulary
from bot.types import Draft, Passage

REPLIES = vocabulary().replies
LEAD_SENTENCES = 3  # an overview without the LLM: the document's first sentences (a news story's lead)
MIN_LEAD_WORDS = 4  # shorter lines (a byline, a dateline) are not quoted


def quoted_overview(passages: list[Passage], corpus: Corpus) -> Draft | None:
    """The opening sentences of the best document (the one of the first passage), quoted and cited: a news story
    says what it is about first. None when the document's opening was not read."""
    if not passages:
        return None
    path = passages[0].path
    opening = [s for s in corpus.sentences.get(path, []) if len(s.text.split()) >= MIN_LEAD_WORDS]
    opening = [s for s in opening if s.span.start < _first_chunk_end(passages, path)][:LEAD_SENTENCES]
    if not opening:
        return None
    quoted = " ".join(f"“{s.text.strip()}” [{n}]" for n, s in enumerate(opening, 1))
    intro = REPLIES["overview_one" if corpus.documents == 1 else "overview_many"]
    return Draft(f"{intro}{quoted}", False, opening, reason="the document's opening, quoted")


def _first_chunk_end(passages: list[Passage], path: str) -> int:
    firsts = [p for p in passages if p.path == path and p.start == 0]
    return len(firsts[0].text) if firsts else -1


def lead_passages(passages: list[Passage], leads: Callable[[list[str]], list[Passage]]) -> list[Passage]:
    """An overview question's passages: the opening chunk of each document retrieved (best first), then the rest."""
    opening = leads(list(dict.fromkeys(p.path for p in passages)))
    have = {p.chunk_id for p in opening}
    return opening + [p for p in passages if p.chunk_id not in have]
