"""The grounding guard: an LLM's answer reaches the user only when the documents it cites back it.

Used after every generative backend. The answer passes when:
- the LLM produced text at all (no error, no time-out, not empty);
- it is not an answer where the extractive answerer abstained (an abstention signal is never overruled),
  and not a "not in the documents" where the extractive answerer found the answer;
- it cites at least one passage, and every cited `[n]` is one of the numbered passages;
- every number, date, proper name and quoted phrase of each sentence occurs in the passages that sentence cites
  (a sentence without a marker is held to all passages the answer cites);
- a sentence that denies something ("not", "never", "n't", a leading "No,") cites a passage that denies something
  too, and the answer speaks of the event, not of "the document" (beyond a leading "According to the article,");
- most of each sentence's other words (MIN_GROUNDED_TERMS, compared as lemmas) are in the passages it cites:
  "the final was delayed by a storm" does not pass on a passage that never says so;
- when the extractive answerer found a precise phrase ("Third place", "27-year-old", "Ana Figueroa"), the answer
  says it too: of the phrase's words that the question does not already hold, at least one (every number among
  them) is in the answer. "Moretti won the final" does not pass where the documents say he came third.
Otherwise the extractive answer is returned, with `guard="fallback"` and the reason logged.

A passing answer keeps the answer object's contract: its `[n]` are renumbered 1, 2, … in order of first use and
each is backed by a verbatim quote, the sentence(s) of the cited passage that hold the answer's facts.
"""

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from bot.answer.generative import Generation
from bot.answer.terms import MONTHS, NUMBER_WORDS, ORDINAL_NUMBERS, STOPWORDS, WEEKDAYS, term, terms_of, words
from bot.lang import alternatives, vocabulary
from bot.types import Draft, Passage, Sentence, Span

log = logging.getLogger(__name__)

VOCABULARY = vocabulary()  # the guard's words: bot/lang/en/guard.toml
LABEL = f"(?:{alternatives(VOCABULARY.citation_labels)})"
DOCUMENTS = "(?:" + "|".join(f"{noun}s?" for noun in VOCABULARY.document_nouns) + ")"  # "documents?|passages?|…"
# "[1]", "[1, 3]", "[Document 2]", "[doc 2; 3]"
MARKER = re.compile(rf"\[\s*(?:{LABEL}\s*)?\d+(?:\s*[,;]\s*(?:{LABEL}\s*)?\d+)*\s*\]", re.IGNORECASE)
NOT_IN_DOCUMENTS = re.compile(
    rf"\bnot (?:in|found in|contained in|mentioned in) (?:the |these |any )?{DOCUMENTS}\b"
    rf"|\b{DOCUMENTS}\s+(?:do(?:es)?\s+not|don['’]t|doesn['’]t)\s+"
    r"(?:say|mention|contain|state|include|provide|specify|tell)"
    r"|\bno (?:information|mention) (?:about|of|on)\b|\b(?:is|are|was|were) not (?:mentioned|stated|specified)\b"
    r"|\bcannot (?:be )?(?:answer|determine|find)",
    re.IGNORECASE,
)
MIN_GROUNDED_TERMS = 0.6  # share of a sentence's content words (3 or more) that its cited passages must hold
NEGATION = re.compile(rf"\b(?:{alternatives(VOCABULARY.negations)})\b|n['’]t\b", re.IGNORECASE)
META = re.compile(rf"\b(?:the|this|that|these|a|an|each|given|one)\s+{DOCUMENTS}\b", re.I)
ACCORDING_TO = re.compile(
    rf"^(?:according to|as stated in|in) (?:the|this) {DOCUMENTS}"
    r"(?:\s*\[\d+\])?\s*,\s*",
    re.IGNORECASE,
)
ORDINAL_VALUES = ORDINAL_NUMBERS
NUMBER_WORD_VALUES = {w: v for w, v in NUMBER_WORDS.items() if w != "one"}  # "one of the…" is rarely a count
# Capitalized words that open a sentence without being names
OPENERS = VOCABULARY.guard_openers
DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
WORD = re.compile(r"[^\W\d_][\w'’-]*")
DOUBLE_QUOTED = re.compile(r"[\"“”„]([^\"“”„]{2,}?)[\"“”]")
SINGLE_QUOTED = re.compile(r"(?<!\w)[‘']([^‘’'\"“”]{2,}?)[’'](?!\w)")


@dataclass
class Verdict:
    draft: Draft  # what the user gets
    backend: str  # who wrote draft.text
    guard: str  # "passed" or "fallback"
    reason: str = ""  # why it fell back


@dataclass
class Claim:
    """One sentence of the answer: its text without markers, the passage numbers it cites, and its facts."""

    text: str
    cites: list[int]
    facts: list[tuple[str, str]]  # (kind, surface text)


class Guard:
    """The guard step of the chain: reads state["generation"], state["draft"] (extractive), state["passages"] and the
    sentences around them (state["corpus"]); sets state["draft"], state["backend"] and state["guard"]."""

    def __call__(self, state: dict) -> dict:
        sentences_in = state["corpus"].sentences_in
        verdict = review(
            state["generation"], state["passages"], state["draft"], sentences_in, state["standalone_question"]
        )
        if verdict.guard == "fallback":
            log.info("guard fallback (%s) for %r: %s", state["generation"].backend, state["question"], verdict.reason)
        return {**state, "draft": verdict.draft, "backend": verdict.backend, "guard": verdict.guard}


def review(
    generation: Generation,
    passages: list[Passage],
    extractive: Draft,
    sentences_in: Callable[[Passage], list[Sentence]],
    question: str = "",
) -> Verdict:
    """Keep the LLM's answer when the passages back it, else fall back to the extractive draft."""

    def fallback(reason: str) -> Verdict:
        return Verdict(extractive, "extractive", "fallback", reason)

    if generation.error:
        return fallback(f"the LLM failed: {generation.error}")
    text = clean(generation.text or "")
    if not text:
        return fallback("the LLM wrote nothing")
    if NOT_IN_DOCUMENTS.search(text):
        if extractive.abstained:  # both say the documents do not answer: the usual wording, with its reason
            return Verdict(extractive, generation.backend, "passed")
        return fallback("the LLM found no answer where the extractive answerer found one")
    if extractive.abstained:
        return fallback("the LLM answered where the extractive answerer abstained" + _because(extractive))
    problem = unsupported(text, [p.text for p in passages]) or disagrees(text, extractive, question)
    if problem:
        return fallback(problem)
    return Verdict(cited_draft(text, passages, sentences_in), generation.backend, "passed")


def _because(extractive: Draft) -> str:
    return f" ({extractive.reason})" if extractive.reason else ""


def clean(text: str) -> str:
    """The answer without a leading "Answer:", surrounding space, or a sentence cut off by the token limit."""
    text = re.sub(r"^\s*(?:answer|response)\s*:\s*", "", text.strip(), flags=re.IGNORECASE)
    text = re.sub(r"[ \t]+", " ", text).strip()
    if text and not re.search(r"[.!?…\"”’')\]]$", text):
        ends = [m.end() for m in re.finditer(r"[.!?…](?:\s*\[[^\]]*\])*(?=\s)", text)]
        if ends:
            text = text[: ends[-1]]
    return text


def unsupported(text: str, passages: list[str]) -> str | None:
    """Why the answer is not backed by the passages it cites, or None when it is."""
    claims = split_claims(text)
    cited = sorted({n for c in claims for n in c.cites})
    if not cited:
        return "the answer cites no passage"
    missing = [n for n in cited if not 1 <= n <= len(passages)]
    if missing:
        return f"the answer cites [{missing[0]}], but there are only {len(passages)} passages"
    for claim in claims:
        sources = claim.cites or cited
        where = ", ".join(f"[{n}]" for n in sources)
        if META.search(ACCORDING_TO.sub("", claim.text)):
            return f"the answer speaks of the documents instead of the event: {claim.text!r}"
        denial = NEGATION.search(claim.text)
        if denial and not any(NEGATION.search(passages[n - 1]) for n in sources):
            return f"the answer denies something ({denial.group()!r}) that the cited passages {where} do not"
        evidence = normalize(" ".join(passages[n - 1] for n in sources))
        for kind, fact in claim.facts:
            if not occurs(kind, fact, evidence):
                return f"the {kind} {fact!r} is not in the cited passage{'s' if len(sources) > 1 else ''} {where}"
        said = content_terms(ACCORDING_TO.sub("", claim.text))
        held = content_terms(evidence)
        if len(said) >= 3 and sum(t in held for t in said) < MIN_GROUNDED_TERMS * len(said):
            missing = [t for t in said if t not in held]
            return f"the cited passages {where} do not hold most of {claim.text!r} (not: {', '.join(missing)})"
    return None


def content_terms(text: str) -> set[str]:
    """The lemmas of a text's words that carry meaning (no stop words, no numbers)."""
    return {term(w) for w, _ in words(text) if w[0].isalpha() and w.lower().replace("’", "'") not in STOPWORDS}


def disagrees(text: str, extractive: Draft, question: str) -> str | None:
    """Why the answer contradicts the precise phrase the extractive answerer found, or None."""
    phrase = extracted_phrase(extractive)
    if not phrase:
        return None
    asked = terms_of(question)
    new = [w for w, _ in words(phrase) if w.lower() not in STOPWORDS and term(w) not in asked]
    said = terms_of(MARKER.sub(" ", text))
    said_numbers = numbers_in(normalize(text))
    numbers = [w for w in new if _value(w) in numbers_in(normalize(w))]
    if not new or (any(term(w) in said for w in new) and all(_value(n) in said_numbers for n in numbers)):
        return None
    return f"the answer does not say {phrase!r}, which the extractive answerer found"


def extracted_phrase(extractive: Draft) -> str:
    """The span the extractive answer rests on ("third place"), which the reply step keeps in the draft; "" when it
    abstained (a decline or an unsure reply rests on no span)."""
    return "" if extractive.abstained else extractive.phrase


def split_claims(text: str) -> list[Claim]:
    """The answer's sentences, each with the markers that follow it ("came third. [1]" cites [1] too)."""
    parts = re.split(r"(?<=[.!?…])\s+(?=[^\s\[])|(?<=\])\s+(?=[A-Z“\"‘])", text)
    claims = []
    for part in parts:
        cites = [int(n) for m in MARKER.finditer(part) for n in re.findall(r"\d+", m.group())]
        bare = re.sub(r"\s+", " ", MARKER.sub(" ", part)).strip()
        if bare or cites:
            claims.append(Claim(bare, list(dict.fromkeys(cites)), facts(bare)))
    return claims


def facts(sentence: str) -> list[tuple[str, str]]:
    """The checkable facts of one sentence (markers removed): numbers, dates, names and quoted phrases."""
    found = [("quoted phrase", q.strip()) for q in quoted(sentence)]
    found += [("number", n) for n in DIGITS.findall(sentence)]
    words = [(m.group(), m.start()) for m in WORD.finditer(sentence)]
    for w, _ in words:
        lw = w.lower()
        if lw in NUMBER_WORD_VALUES or lw in ORDINAL_VALUES:
            found.append(("number", lw))
        elif lw in WEEKDAYS or lw in MONTHS:
            found.append(("date", w))
    found += [("name", n) for n in names(sentence, words)]
    return found


def quoted(sentence: str) -> list[str]:
    return [m.group(1) for m in DOUBLE_QUOTED.finditer(sentence)] + [
        m.group(1) for m in SINGLE_QUOTED.finditer(sentence) if " " in m.group(1).strip() or m.group(1).isalpha()
    ]


def names(sentence: str, words: list[tuple[str, int]]) -> list[str]:
    """Runs of capitalized words ("Ana Figueroa", "Team GB"), without a leading "The", "She", "Yes", …"""
    groups: list[list[tuple[str, int]]] = []
    for w, pos in words:
        base = re.sub(r"['’]s$", "", w)
        lw = base.lower().replace("’", "'")
        if not base[:1].isupper() or base == "I" or lw in STOPWORDS or lw in OPENERS or lw in WEEKDAYS or lw in MONTHS:
            groups.append([])  # not a name (a weekday or month is checked as a date)
            continue
        prev = groups[-1] if groups else []
        gap = sentence[prev[-1][1] + len(prev[-1][0]) : pos] if prev else ""
        if prev and gap == " " and not prev[-1][0].endswith(("'s", "’s")):
            prev.append((base, pos))
        else:
            groups.append([(base, pos)])
        if base != w:
            groups.append([])  # a possessive ends the name: "Spain's Ana Figueroa" is two names
    return [" ".join(w for w, _ in g) for g in groups if g]


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.translate(str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "„": '"', "‐": "-", "–": "-"}))
    return re.sub(r"\s+", " ", text)


def occurs(kind: str, fact: str, evidence: str) -> bool:
    """Whether a fact of the answer occurs in the (normalized) evidence."""
    if kind == "number":
        return _value(fact) in numbers_in(evidence)
    phrase = normalize(fact)
    if kind == "quoted phrase":
        return re.sub(r"[^\w\s]", "", phrase).strip() in re.sub(r"[^\w\s]", "", evidence)
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", evidence) is not None


def numbers_in(text: str) -> set[str]:
    values = {_value(n) for n in DIGITS.findall(text)}
    for w in WORD.findall(text):
        if w in NUMBER_WORDS or w in ORDINAL_VALUES:
            values.add(_value(w))
    return values


def _value(number: str) -> str:
    """A comparable form: "1,000" → "1000", "two" → "2", "fifth" → "5", "1.50" → "1.5"."""
    number = number.lower()
    if number in NUMBER_WORDS:
        return str(NUMBER_WORDS[number])
    if number in ORDINAL_VALUES:
        return str(ORDINAL_VALUES[number])
    number = re.sub(r"(?<=\d),(?=\d{3}\b)", "", number)
    if re.fullmatch(r"\d+\.\d+", number):
        number = number.rstrip("0").rstrip(".")
    return number


# -- the answer object of a passing answer --------------------------------------------------------------------


def cited_draft(text: str, passages: list[Passage], sentences_in: Callable[[Passage], list[Sentence]]) -> Draft:
    """The LLM's text with its markers renumbered 1, 2, … in order of first use, each backed by a verbatim quote."""
    claims = split_claims(text)
    order = list(dict.fromkeys(n for c in claims for n in c.cites))
    renumber = {old: new for new, old in enumerate(order, 1)}
    quotes = []
    for old in order:
        facts_here = [f for c in claims if old in c.cites or not c.cites for f in c.facts]
        words_here = " ".join(c.text for c in claims if old in c.cites or not c.cites)
        quotes.append(quote(passages[old - 1], facts_here, words_here, sentences_in))

    def rewrite(m: re.Match) -> str:
        return "".join(f"[{renumber[int(n)]}]" for n in dict.fromkeys(re.findall(r"\d+", m.group())))

    text = MARKER.sub(rewrite, text)
    text = re.sub(r"([.!?])\s*((?:\[\d+\])+)", r" \2\1", text)  # "came third. [1]" → "came third [1]."
    return Draft(text, False, quotes)


def quote(
    passage: Passage, claimed: list[tuple[str, str]], words: str, sentences_in: Callable[[Passage], list[Sentence]]
) -> Sentence:
    """The sentence of the passage that holds most of the claimed facts (then most of the answer's words), grown
    over the adjacent sentences that hold the rest (a passage is a few sentences); the whole passage when a fact
    is only in a sentence it holds in part."""
    span = Span(passage.text, passage.start, passage.start + len(passage.text))
    whole = Sentence(passage.path, passage.source, span, -1, passage.chunk_id)
    sentences = sentences_in(passage)
    if not sentences:
        return whole
    answer_words = {w.lower() for w in WORD.findall(words) if len(w) > 3}

    def held(s: Sentence) -> list[int]:
        ev = normalize(s.text)
        return [i for i, (k, f) in enumerate(claimed) if occurs(k, f, ev)]

    def score(s: Sentence) -> tuple[int, int]:
        return len(held(s)), len(answer_words & {w.lower() for w in WORD.findall(s.text)})

    best = max(range(len(sentences)), key=lambda i: score(sentences[i]))
    lo = hi = best
    covered = set(held(sentences[best]))
    for i in sorted(range(len(sentences)), key=lambda i: abs(i - best)):
        if set(held(sentences[i])) - covered:
            lo, hi = min(lo, i), max(hi, i)
            covered |= {j for s in sentences[lo : hi + 1] for j in held(s)}
    if covered != set(held(whole)):  # a fact is in a sentence the passage holds only in part
        return whole
    first, last = sentences[lo], sentences[hi]
    if lo == hi:
        return first
    start, end = first.span.start, last.span.end
    text = passage.text[start - passage.start : end - passage.start]
    return Sentence(first.path, first.source, Span(text, start, end), first.index, passage.chunk_id)
