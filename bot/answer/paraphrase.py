"""Other words for what questions about competitions ask: people say "runner-up", "top of the podium" or "margin"
where reports write "silver", "gold" or "points behind". When the question's own words find no answer, the
answerer tries it again in these words; the answer must still pass every check against the documents."""

import itertools
import re
from collections.abc import Callable

from bot.answer.language import content_terms

MAX_TRIES = 8  # each try is one more pass over the sentences (~30 ms)
BE = r"\b(?:(?:was|is|were|are|ended\s+up|end\s+up|finished)\s+)?"
# (what a question may say, what a report may write instead: one wording per try, best first)
RESULTS_VOCABULARY: list[tuple[str, list[str]]] = [
    (
        r"\bc[ao]me\s+out\s+on\s+top\b|\btopp?(?:ed|ing)?\s+the\s+(?:podium|standings|field)\b",
        ["win", "won the gold medal"],
    ),
    (
        r"\b(?:(?:ended|finished|was|were)\s+(?:up\s+)?)?(?:on\s+)?(?:the\s+)?top\s+(?:step|spot|place)?\s*(?:of|on)\s+the\s+podium\b",
        ["won the gold medal", "finished first"],
    ),
    (rf"{BE}(?:the\s+)?(?:overall\s+)?(?:champion|winner)\b", ["won the gold medal", "won"]),
    (rf"{BE}(?:the\s+)?runner[- ]?up\b|{BE}(?:in\s+)?second[- ]place\b", ["won the silver medal", "finished second"]),
    (rf"{BE}(?:in\s+)?third[- ]place\b", ["won the bronze medal", "finished third"]),
    (r"\b(?:the\s+)?(?:top|first)\s+prize\b|\bthe\s+title\b", ["the gold medal", "first place"]),
    (r"\b(?:margin|gap|difference)\b", ["points behind", "behind"]),
    (r"\b(?:expected|tipped|predicted|favou?red)\s+to\s+(?:win|take)\b", ["the favorite to win", "favourite to win"]),
    (r"\blong\s+program(?:me)?\b", ["free skate", "free program"]),
    (
        r"\b(?:(?:is|was|'s|’s)\s+)?(?:on\s+)?(?:top|head|leader|in\s+the\s+lead)\s+of\s+the\s+"
        r"(?:general\s+classification|overall\s+standings|standings|table|leaderboard|rankings|classification)\b",
        [" leads the overall standings", " leads the standings", " leads"],
    ),
    (r"\bevening\b", ["night"]),
    (r"\b(?:these|this\s+year's|the)\s+Games\b", ["the Olympics"]),
    (r"\bend\s+(?:of\s+)?(?:her|his|their)\s+career\b|\bhang\s+up\s+(?:her|his|their)\s+\w+\b", ["retire"]),
]


def rewordings(question: str, known: Callable[[str], bool]) -> list[str]:
    """The question in other words that the documents use (`known(term)`: do they use it); none when it has
    no words to reword. Rules apply in order, each to the text the ones before left ("expected to come out on
    top" → "expected to win" → "the favorite to win")."""
    usable = [(p, [w for w in options if all(known(t) for t in content_terms(w))]) for p, options in RESULTS_VOCABULARY]
    found, text = [], question
    for pattern, options in usable:
        if options and re.search(pattern, text, re.IGNORECASE):
            found.append((pattern, options))
            text = re.sub(pattern, options[0], text, flags=re.IGNORECASE)
    out = []
    for choice in itertools.islice(itertools.product(*(options for _, options in found)), MAX_TRIES):
        text = question
        for (pattern, _), wording in zip(found, choice, strict=True):
            text = re.sub(pattern, wording, text, flags=re.IGNORECASE)
        if text not in out and text != question:
            out.append(text)
    return out


def speaks_otherwise(question: str, known: Callable[[str], bool]) -> bool:
    """The question uses a results phrase with words the documents never use ("come out on top"): its rewordings
    are a better first try than its own words."""
    return any(
        not all(known(t) for t in content_terms(m.group()))
        for pattern, _ in RESULTS_VOCABULARY
        for m in re.finditer(pattern, question, re.IGNORECASE)
    )
