"""Who a phrase in a sentence is about, read from the sentence's clauses and their subjects:
in "…meaning the Briton was officially fourth in 2:11:38 and Gebre fifth in 2:11:39", 2:11:38 is the Briton's
and 2:11:39 is Gebre's; in "…consoled by American Alysa Liu, who would go on to win the gold medal", gold is Liu's."""

import re
from dataclasses import dataclass

from bot.answer.language import words
from bot.types import Span

# Clauses end at punctuation and start at a conjunction or relative pronoun (which stays with its clause).
CLAUSE_BREAK = re.compile(r"\s*[,;:()—–]\s*|\s+(?=(?:and|but|meaning|while|whereas|who|whose|which)\b)")
RELATIVE = re.compile(r"(?:who|whose)\b")
POSSESSIVE = re.compile(r"['’]s?\b")
SUBJECT_WORDS = 4  # a person named within a clause's first few words is its subject: "and Gebre fifth in…"


@dataclass(frozen=True)
class Mention:
    """A person referred to in a sentence: by name, or by a description ("the Briton")."""

    span: Span
    person: frozenset[str]  # the terms of the person's name; empty when it cannot be told who it is


def clauses(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for m in CLAUSE_BREAK.finditer(text):
        if m.start() > start:
            bounds.append((start, m.start()))
        start = max(start, m.end())
    bounds.append((start, len(text)))
    return [(a, b) for a, b in bounds if text[a:b].strip()]


def owner(text: str, position: int, mentions: list[Mention]) -> Mention | None:
    """The person the phrase at `position` is said of: its clause's subject; for a clause without one, the
    subject of the nearest clause before it ("Kiprop, 27, …"), else of the clause after it ("Running in
    third place…, Haldane began…"); for a who-clause, the person just before it."""
    parts = clauses(text)
    if not parts or not mentions:
        return None
    here = max([i for i, (a, _) in enumerate(parts) if a <= position] or [0])

    def subject(i: int) -> Mention | None:
        a, b = parts[i]
        if RELATIVE.match(text[a:b]):
            before = [m for m in mentions if m.span.end <= a]
            return before[-1] if before else None
        first = words(text[a:b])[:SUBJECT_WORDS]
        limit = a + first[-1][1] + len(first[-1][0]) if first else a
        # "pulled Haldane's arm": a possessive names whose thing it is, not who does it
        return next((m for m in mentions if a <= m.span.start < limit and not POSSESSIVE.match(text, m.span.end)), None)

    # an opening clause without a subject ("Running in third place, …") takes the next clause's
    after = [1] if here == 0 and len(parts) > 1 else []
    for i in [here, *range(here - 1, -1, -1), *after]:
        found = subject(i)
        if found:
            return found
    return None
