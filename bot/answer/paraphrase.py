"""Other words for what questions about competitions ask: people say "runner-up", "top of the podium" or "margin"
where reports write "silver", "gold" or "points behind". When the question's own words find no answer, the
answerer tries it again in these words; the answer must still pass every check against the documents. The
vocabulary is data: lexicon/results_vocabulary.toml."""

import itertools
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

from bot.answer.language import content_terms

MAX_TRIES = 8  # each try is one more pass over the sentences (~30 ms)
VOCABULARY_FILE = Path(__file__).parent / "lexicon" / "results_vocabulary.toml"
# (what a question may say, what a report may write instead: one wording per try, best first)
RESULTS_VOCABULARY: list[tuple[str, list[str]]] = [
    (entry["asked"], entry["written"]) for entry in tomllib.loads(VOCABULARY_FILE.read_text(encoding="utf-8"))["reword"]
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
