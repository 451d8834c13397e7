"""An answer's claims as the grounding guard reads them, with spaCy: the answer's sentences with the passages each
cites, their facts (numbers, dates, proper names, quoted phrases), whether one denies or affirms something or speaks
of the documents rather than of the event (token patterns of bot/lang/en/guard.toml, found by spaCy's Matcher); and a
text as the backing to check facts against, word for word, numbers by value."""

import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

from spacy.matcher import Matcher
from spacy.tokens import Doc
from spacy.tokens import Span as Tokens

from bot.answer.cite import markers_in
from bot.answer.terms import MONTHS, NUMBER_WORDS, ORDINAL_NUMBERS, WEEKDAYS, term
from bot.lang import vocabulary
from index.text.pipeline import nlp, parse

VOCABULARY = vocabulary()  # the guard's words and token patterns: bot/lang/en/guard.toml
MONTH_ABBREVIATIONS = VOCABULARY.month_abbreviations
NEGATIONS = VOCABULARY.negations  # compared with spaCy's norm of a token, which reads "n't" as "not"
NUMBER_WORD_VALUES = {w: v for w, v in NUMBER_WORDS.items() if w != "one"}  # "one of the…" is rarely a count
CLOSING = tuple(".!?…\"”’')]")  # what a finished answer ends with
SUBJECTS = {"nsubj", "nsubjpass", "csubj", "expl"}  # spaCy's dependency labels of a subject
FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "„": '"', "‐": "-", "–": "-"})


@dataclass
class Claim:
    """One sentence of the answer: its text without markers, the passage numbers it cites, and its facts."""

    text: str
    cites: list[int]
    facts: list[tuple[str, str]]  # (kind, surface text)
    opening: str = ""  # an opening allowed to name the documents ("According to the article, ")
    about_the_documents: bool = False  # it speaks of the documents rather than of the event
    denial: str = ""  # the word that denies something, if any
    affirms: bool = False  # it opens with "Yes": it affirms what a yes/no question says


@dataclass(frozen=True)
class Backing:
    """A text as the guard compares facts with it: its words folded (case, quotes, dashes), with and without
    punctuation, the values of its numbers, and whether it denies something."""

    words: str  # " word word … ", padded: a phrase occurs as " phrase "
    plain: str  # the same without punctuation
    numbers: frozenset[str]
    denies: bool


def clean(text: str) -> str:
    """The answer without a leading "Answer:", runs of spaces, or a last sentence cut off by the token limit."""
    label, colon, rest = text.strip().partition(":")
    if colon and label.strip().lower() in VOCABULARY.answer_labels:
        text = rest
    text = "\n".join(" ".join(line.split()) for line in text.strip().splitlines()).strip()
    sentences = list(parse(text).sents) if text else []
    if len(sentences) > 1 and not text.endswith(CLOSING):
        text = text[: sentences[-1].start_char].rstrip()
    return text


def split_claims(text: str) -> list[Claim]:
    """The answer's sentences (spaCy's), each with the markers in it or right after it ("came third. [1]" cites
    [1] too)."""
    bare, at = [], []  # the text without markers; where each marker stood in it, with its numbers
    last = 0
    for m in markers_in(text):
        bare.append(text[last : m.start].rstrip())
        at.append((sum(map(len, bare)), m.numbers))
        last = m.end
    doc = parse("".join(bare) + text[last:])
    sentences = [s for s in doc.sents if not all(t.is_space for t in s)]
    cites: list[list[int]] = [[] for _ in sentences]
    for position, numbers in at if sentences else ():  # to the last sentence that starts before the marker
        cites[max([i for i, s in enumerate(sentences) if s.start_char < position] or [0])].extend(numbers)
    found = _matches(doc)
    return [
        _claim(s, list(dict.fromkeys(c)), found) for s, c in zip(sentences, cites, strict=True) if s.text.strip() or c
    ]


@cache
def _matcher() -> Matcher:
    matcher = Matcher(nlp().vocab)
    for name, patterns in VOCABULARY.guard_patterns.items():
        matcher.add(name, [list(p) for p in patterns])
    return matcher


def _matches(doc: Doc) -> list[tuple[str, int, int]]:
    """The guard's token patterns found in a parsed text: (name, first token, end token)."""
    return [(nlp().vocab.strings[key], start, end) for key, start, end in _matcher()(doc)]


def says_not_in_documents(text: str) -> bool:
    """Whether the answer says the documents do not answer ("Not in the documents.")."""
    return any(name == "not_in_documents" for name, _, _ in _matches(parse(text)))


def answers_no(sentence: Tokens) -> bool:
    """Whether the sentence opens with the "No" of a reply to a yes/no question ("No, she won silver"): the reply's
    polarity, weighed by the learnt decision, not a denial its cited passage must make too ("No one was hurt" is)."""
    return len(sentence) > 1 and sentence[0].norm_.lower() == "no" and sentence[1].is_punct


def _claim(sentence: Tokens, cites: list[int], found: list[tuple[str, int, int]]) -> Claim:
    inside = [(name, start, end) for name, start, end in found if sentence.start <= start and end <= sentence.end]
    opening_end = max(
        (end for name, start, end in inside if name == "according_to" and start == sentence.start), default=0
    )
    about = any(name == "about_the_documents" and start >= opening_end for name, start, _ in inside)
    opening = sentence.doc[sentence.start : opening_end].text_with_ws if opening_end else ""
    skip = sentence.start + 1 if answers_no(sentence) else sentence.start
    denial = next((t.text for t in sentence if t.norm_.lower() in NEGATIONS and t.i >= skip), "")
    affirms = any(name == "affirmation" and start == sentence.start for name, start, _ in inside)
    return Claim(sentence.text.strip(), cites, _facts(sentence), opening, about, denial, affirms)


def facts(sentence: str) -> list[tuple[str, str]]:
    """The checkable facts of one sentence (markers removed): numbers, dates, names and quoted phrases."""
    return _facts(parse(sentence)[:])


def _facts(sentence: Tokens) -> list[tuple[str, str]]:
    found = [("quoted phrase", q) for q in _quoted(sentence)]
    for t in sentence:
        if any(c.isdigit() for c in t.text):
            found.append(("number", t.text))
        elif t.lower_ in NUMBER_WORD_VALUES or t.lower_ in ORDINAL_NUMBERS:
            found.append(("number", t.lower_))
        elif t.lower_ in WEEKDAYS or t.lower_ in MONTHS:
            found.append(("date", t.text))
    return found + [("name", n) for n in _names(sentence)]


def _quoted(sentence: Tokens) -> list[str]:
    """The phrases between pairs of quotation marks ("the media are vultures", ‘I just felt regret’)."""
    marks = [t for t in sentence if t.is_quote]
    phrases = [sentence.doc.text[a.idx + len(a) : b.idx].strip() for a, b in zip(marks[::2], marks[1::2], strict=False)]
    return [p for p in phrases if len(p) >= 2]


def _names(sentence: Tokens) -> list[str]:
    """Runs of proper nouns ("Ana Figueroa", "Team GB"), as spaCy tags them; a weekday or month is a date, and a
    possessive ends a name ("Spain's Ana Figueroa" is two)."""
    runs: list[list] = [[]]
    for t in sentence:
        if t.pos_ == "PROPN" and t.lower_ not in WEEKDAYS and t.lower_ not in MONTHS:
            if runs[-1] and not runs[-1][-1].whitespace_:
                runs.append([])  # "Liu-Glenn" is not one name with a space
            runs[-1].append(t)
        elif runs[-1]:
            runs.append([])
    return [" ".join(t.text for t in run) for run in runs if run]


@lru_cache(maxsize=1024)
def backing_of(text: str) -> Backing:
    tokens = [t for t in nlp().tokenizer(text) if not t.is_space]
    folded = [unicodedata.normalize("NFKC", t.text).lower().translate(FOLD) for t in tokens]
    plain = [w for w, t in zip(folded, tokens, strict=True) if not (t.is_punct or t.is_quote)]
    numbers = {v for t in tokens if (v := number_value(t.text))}
    return Backing(
        f" {' '.join(folded)} ", f" {' '.join(plain)} ", frozenset(numbers), any(t.norm_ in NEGATIONS for t in tokens)
    )


def occurs(kind: str, fact: str, backing: Backing) -> bool:
    """Whether a fact of the answer occurs in the backing text, word for word (a number: by value; a month: also as
    dates abbreviate it)."""
    if kind == "number":
        return number_value(fact) in backing.numbers
    if kind == "date" and fact.lower() in MONTH_ABBREVIATIONS:  # "November" is there as "Nov. 19"
        return any(f" {m} " in backing.words for m in (fact.lower(), *MONTH_ABBREVIATIONS[fact.lower()]))
    phrase = backing_of(fact)
    if kind == "quoted phrase":
        return phrase.plain in backing.plain
    return phrase.words in backing.words


def unaffirmed_fact(question: str, backing: Backing) -> tuple[str, str] | None:
    """The first number or date of `question` that `backing` lacks, as (kind, fact): a "Yes" affirms what the question
    says, so each of them must be in what the yes rests on ("Was Sakamoto 1.5 points behind?" on "… 1.91 points …")."""
    return next(((k, f) for k, f in facts(question) if k in ("number", "date") and not occurs(k, f, backing)), None)


def numbers_in(text: str) -> set[str]:
    return set(backing_of(text).numbers)


def number_value(word: str) -> str:
    """A comparable form of a number: "1,000" → "1000", "two" → "2", "fifth" → "5", "1.50" → "1.5", "3rd" → "3";
    "" for a word that is no number."""
    word = word.lower()
    if word in NUMBER_WORDS:
        return str(NUMBER_WORDS[word])
    if word in ORDINAL_NUMBERS:
        return str(ORDINAL_NUMBERS[word])
    digits = [i for i, c in enumerate(word) if c.isdigit()]
    if not digits:
        return ""
    number = word[digits[0] : digits[-1] + 1]
    groups = number.split(",")
    if len(groups) > 1 and all(g.isdigit() for g in groups) and all(len(g) == 3 for g in groups[1:]):
        number = "".join(groups)
    whole, point, fraction = number.partition(".")
    if point and whole.isdigit() and fraction.isdigit():
        number = (whole + "." + fraction.rstrip("0")).rstrip(".")
    return number


def denied_terms(sentence: Tokens) -> set[str]:
    """The terms a sentence denies: the words a negation governs ("wasn't that nervous" → nervous), its subject, names
    and numbers aside."""
    denied = set()
    for t in sentence:
        if t.norm_.lower() in NEGATIONS and t.dep_ != "det":  # "n’t" may parse as punctuation; "no one" is no verb's
            subject = {w.i for c in t.head.children if c.dep_ in SUBJECTS for w in c.subtree}
            denied |= {
                term(w.text)
                for w in t.head.subtree
                if w.i not in subject and w.is_alpha and not w.is_stop and w.pos_ not in ("PROPN", "PRON")
            }
    return denied
