"""Example questions for the chat, made from the indexed documents (not fixed to one article), and kept only
when the bot answers them: what won, who the most-named people are, what the most-quoted person said."""

import logging
from collections import Counter
from collections.abc import Callable

from bot.answer.corpus import Corpus
from bot.lang import vocabulary
from bot.types import Answer
from index.text.sentences import Token

log = logging.getLogger(__name__)

MAX_EXAMPLES = 4
ASK = vocabulary().example_questions  # their wording (bot/lang/en/replies.toml)


def example_questions(candidates: list[str], ask: Callable[[str], Answer], limit: int = MAX_EXAMPLES) -> list[str]:
    """Up to `limit` of the `candidates` (see candidate_questions) that the bot answers, best first."""
    kept = []
    for question in dict.fromkeys(candidates):
        try:
            answered = not ask(question).abstained
        except Exception:  # an example is a nicety: never fail start-up over one
            log.exception("example question %r failed", question)
            answered = False
        if answered:
            kept.append(question)
        if len(kept) == limit:
            break
    return kept


def candidate_questions(corpus: Corpus) -> list[str]:
    """Questions the documents seem to answer, best first (read from every sentence once, when indexing)."""
    mentions: Counter[str] = Counter()
    speakers: Counter[str] = Counter()
    won: list[str] = []
    for path, sentences in corpus.sentences.items():
        text = corpus.texts[path]
        for s in sentences:
            parsed = s.parsed
            if parsed is None:
                continue
            people = corpus.lexicon.people_in(s.text)
            mentions.update(p.text for p in people if " " in p.text)
            for n, t in enumerate(parsed.tokens):
                if t.lemma == "say":
                    speakers.update(
                        text[c.start : c.end]
                        for c in parsed.tokens
                        if c.head == n and c.dep == "nsubj" and c.pos == "PROPN"
                    )
                if t.lemma == "win":
                    objects = [m for m, c in enumerate(parsed.tokens) if c.head == n and c.dep == "dobj"]
                    if objects:
                        inside = subtree(parsed.tokens, objects[0])
                        phrase = text[parsed.tokens[min(inside)].start : parsed.tokens[max(inside)].end]
                        determined = parsed.tokens[min(inside)].pos == "DET"  # "the gold medal", not "his first…"
                        won.append((not determined, ASK["won"].format(thing=phrase)))
    out = [question for _, question in sorted(won, key=lambda w: w[0])][:2]
    out += [ASK["who_is"].format(name=name) for name, _ in mentions.most_common(1)]
    out += [ASK["said"].format(name=name) for name, _ in speakers.most_common(1)]
    out += [ASK["who_is"].format(name=name) for name, _ in mentions.most_common(2)[1:]]
    return out


def subtree(tokens: list[Token], root: int) -> set[int]:
    """The indexes of a token and of every token that hangs from it."""
    inside = {root}
    for _ in range(len(tokens)):
        grown = inside | {n for n, t in enumerate(tokens) if t.head in inside and n != t.head}
        if grown == inside:
            break
        inside = grown
    return inside
