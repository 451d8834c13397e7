"""Question kinds the phrase reader does not answer well on its own, each a small strategy over the same documents:

- describe: "who is X", "tell me about X", "who are the Blade Angels" — the sentences that describe X (where X
  has a nationality, a role, an age or a result next to its name), quoted; never another person's name.
- yes/no: "did Sakamoto win gold" — asked again as the open question it hides ("What medal did Sakamoto win?");
  the reader's phrase then says yes or no, with its sentence cited. Never an echo of a sentence.

Each returns None when it does not apply, and the reader answers as usual."""

import logging
import re
from collections.abc import Callable

from bot.answer.corpus import Corpus
from bot.answer.language import MEDALS, ORDINAL_NUMBERS
from bot.answer.linking import PERSON_NOUNS, Lexicon, fold
from bot.types import Draft, Sentence
from index.text import parse

log = logging.getLogger(__name__)

DESCRIBE = re.compile(
    r"^\s*(?:who|what)\s+(?:is|are|was|were)\s+(?:the\s+)?(?P<a>[^?]+?)\s*\??\s*$"
    r"|^\s*(?:tell\s+me\s+(?:more\s+)?about|what\s+(?:do\s+we|does\s+it|does\s+the\s+\w+)\s+(?:know|say)\s+about"
    r"|info\s+on|more\s+on)\s+(?:the\s+)?(?P<b>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
DESCRIBED_MAX = 2  # sentences quoted for "who is X"
# The open question a yes/no question hides, by the kind of value it names.
OPEN_QUESTION = {"medal": "What medal", "place": "What place"}


def describe(question: str, corpus: Corpus, readable: Callable[[], list[Sentence]]) -> Draft | None:
    """ "Who is Kaori Sakamoto?": the sentences that say who she is, quoted, of those the answerer may read for
    this question (`readable()`, bounded: never every sentence of the documents)."""
    m = DESCRIBE.match(question)
    if not m:
        return None
    sentences = readable()
    asked = (m.group("a") or m.group("b")).strip(" ?.!")
    aliases = _aliases(asked, corpus.lexicon, sentences)
    if not aliases:
        return None  # not a name the documents use: "who is the race director" is a role question
    scored = []
    for s in sentences:
        where = [(m.start(), m.end()) for a in aliases for m in re.finditer(rf"(?<!\w){re.escape(a)}(?!\w)", s.text)]
        if where:
            score = max(_descriptors(corpus, s, s.span.start + a, s.span.start + b) for a, b in where)
            if score > 0:
                scored.append((score, s))
    if not scored:
        log.info("describe: no sentence describes %s", asked)
        return None
    best = sorted(scored, key=lambda p: (-p[0], p[1].path, p[1].index))[:DESCRIBED_MAX]
    quotes = sorted((s for _, s in best), key=lambda s: (s.path, s.index))
    log.info("describe %s: %s", asked, [s.text for s in quotes])
    return Draft(" ".join(f"{_end(s.text)} [{n}]" for n, s in enumerate(quotes, 1)), False, quotes)


def yes_no(question: str, ask: Callable[[str], Draft], corpus_names: Callable[[str], set[str]]) -> Draft | None:
    """ "Did Sakamoto win gold?" → ask "What medal did Sakamoto win?"; silver → "No — Silver [1]."."""
    doc = parse(question)
    if not doc or doc[0].pos_ != "AUX" or doc[0].lower_ not in {"did", "does", "do", "was", "is", "were", "has", "had"}:
        return None
    slot = next((t for t in doc if t.lower_ in MEDALS), None)
    kind = "medal"
    if slot is None:
        slot = next((t for t in doc if t.ent_type_ == "ORDINAL" or t.lower_ in ORDINAL_NUMBERS), None)
        kind = "place"
    if slot is None:
        return None
    dropped = {slot.i}
    for child in slot.head.children if slot.head.lower_ == "medal" else ():  # "the gold medal": drop all of it
        dropped.add(child.i)
    if slot.head.lower_ == "medal":
        dropped.add(slot.head.i)
    dropped |= {t.i for t in doc if t.dep_ == "det" and t.head.i in dropped}
    rest = "".join(t.text_with_ws for t in doc if t.i not in dropped).strip(" ?")
    open_question = f"{OPEN_QUESTION[kind]} {rest[:1].lower()}{rest[1:]}?"
    draft = ask(open_question)
    sentence_answer = draft.quotes and draft.text.startswith(draft.quotes[0].text[:30])
    if draft.abstained or not draft.quotes or draft.text.count("[") > 1 or sentence_answer:
        return None  # no phrase answer: the sentence alone cannot say yes or no
    found = re.sub(r"\s*\[\d+\]\.?$", "", draft.text).strip()
    same = fold(slot.text) in fold(found).split() or fold(found) in fold(slot.text)
    log.info("yes/no: asked %r, found %r, named %r", open_question, found, slot.text)
    if fold(found.split()[0]) not in corpus_names(found):
        found = found[:1].lower() + found[1:]  # "No — silver medal [1].", but "Yes — Alysa Liu [1]."
    return Draft(f"{'Yes' if same else 'No'} — {found} [1].", False, draft.quotes, phrase=draft.phrase)


DESCRIBED = re.compile(r"\bthe\s+(winner|champion|victor|runner[- ]up)\b", re.IGNORECASE)
WHO_FOR = {"winner": "Who won?", "champion": "Who won?", "victor": "Who won?"}


def described_person(question: str, ask: Callable[[str], Draft], people: Callable[[str], list]) -> str | None:
    """ "How much did the winner take home?" → "How much did Iñaki de la Fuente take home?": who "the winner" (or
    "the runner-up") is, asked first; None when the question names no such role or it cannot be told."""
    m = DESCRIBED.search(question)
    if not m or re.match(r"\s*(?:who|whom|which)\b", question, re.IGNORECASE):
        return None
    role = m.group(1).lower()
    draft = ask(WHO_FOR.get(role, "Who was the runner-up?"))
    found = people(draft.phrase) if draft.phrase and not draft.abstained else []
    if len(found) != 1:
        return None
    log.info("%s is %s", m.group(), found[0].text)
    return question[: m.start()] + found[0].text + question[m.end() :]


def _aliases(asked: str, lexicon: Lexicon, sentences: list[Sentence]) -> list[str]:
    """The ways the documents write the thing asked about: a person's full name and its parts, else the name."""
    people = lexicon.people_in(asked)
    if people and people[0].text == asked.removesuffix("'s"):
        words = set(asked.split())
        full = [p for p in lexicon.people if words & set(p.split())]
        return sorted({*full, *(w for p in full for w in p.split() if w in lexicon.people)}, key=len, reverse=True)
    surface = lexicon.names.get(fold(asked))
    if surface:
        return [surface]
    for s in sentences:  # a proper name the model did not take for an entity: "the Blade Angels"
        for m in re.finditer(rf"(?<!\w){re.escape(asked)}(?!\w)", s.text, re.IGNORECASE):
            if m.group()[:1].isupper() and len(asked.split()) > 1:
                return [m.group()]
    return []


def _descriptors(corpus: Corpus, s: Sentence, start: int, end: int) -> int:
    """How much the sentence says of who or what is named at start..end: a nationality or role next to the name,
    an age, a relative clause about it, a result it got."""
    parsed = s.parsed
    if parsed is None:
        return 0
    inside = [n for n, t in enumerate(parsed.tokens) if start <= t.start and t.end <= end]
    if not inside:
        return 0
    around = set(inside)
    root = next((n for n in inside if parsed.tokens[n].head not in around), inside[-1])
    score = 0
    for n, t in enumerate(parsed.tokens):
        near = t.head in around or n == parsed.tokens[root].head
        if not near or n in around:
            continue
        word = corpus.texts[s.path][t.start : t.end]
        if t.ent in {"NORP", "GPE"} or "year-old" in word or (t.dep == "appos" and t.pos == "NUM"):
            score += 2  # "Japan's Kaori Sakamoto", "American competitor Amber Glenn", "Kiprop, 27,"
        elif t.lemma.lower() in PERSON_NOUNS or (t.dep == "appos" and t.pos in {"NOUN", "PROPN"}):
            score += 2  # "chief arbiter Mehmet Öztürk", "the Watchmaker"
        elif t.dep == "relcl" and t.head == root:
            score += 1  # "…, who plans to retire,"
    text = s.text.lower()
    if parsed.tokens[root].dep in {"nsubj", "nsubjpass"} and any(m in text for m in MEDALS):
        score += 1
    if "nicknamed" in text or "known as" in text or "called" in text:
        score += 2
    return score


def _end(text: str) -> str:
    return text if text[-1:] in ".!?”’\"'" else text + "."
