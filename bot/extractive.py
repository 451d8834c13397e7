"""The default answerer: no LLM. Picks the sentence(s) that answer, a precise phrase when the question asks
for one, or abstains when the passages do not support an answer. Every claim cites a verbatim sentence."""

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from langchain_core.embeddings import Embeddings

from bot.language import (
    COUNTRIES,
    DEMONYMS,
    MEDALS,
    MONTHS,
    NUMBER_WORDS,
    ORDINALS,
    ORG_WORDS,
    RELATIVE_TIMES,
    STOPWORDS,
    WEEKDAYS,
    Span,
    name_groups,
    split_sentences,
    term,
    words,
)
from bot.question import AnswerType, Question, analyse
from bot.retrieval import Passage

# Weights of a sentence's score: meaning (cosine) and the share of the question's terms it contains.
DENSE_WEIGHT, COVERAGE_WEIGHT, TYPE_BONUS = 0.5, 0.5, 0.1
MIN_COVERAGE = 0.5  # below this share of key terms the sentence must be very close in meaning...
MIN_DENSE_ALONE = 0.62  # ...at least this cosine; measured on the eval sets, see README "Answer quality"
SECOND_SENTENCE_RATIO = 0.9


@dataclass
class Sentence:
    passage: Passage
    span: Span  # offsets within passage.text
    index: int  # position within the passage
    dense: float = 0.0
    coverage: float = 0.0
    score: float = 0.0
    candidates: list[Span] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.span.text


@dataclass
class Draft:
    """What an answerer decided, before it is turned into the answer object."""

    text: str  # answer text with [n] markers
    abstained: bool
    quotes: list[Sentence]  # quotes[n-1] is what [n] cites
    reason: str = ""


class CorpusStats:
    """What the answerer knows of the whole corpus: which words are names, how rare each term is."""

    def __init__(self, texts: list[str], documents: int):
        sentences = [s.text for t in texts for s in split_sentences(t)]
        df: Counter[str] = Counter()
        capitalized, lowercase, initial = Counter(), Counter(), []
        for sent in sentences:
            df.update({term(w) for w, _ in words(sent)})
            toks = words(sent)
            for i, (w, pos) in enumerate(toks):
                base = re.sub(r"['’]s$", "", w)
                after_quote = pos > 0 and sent[pos - 1] in "‘“\"'"
                if base[:1].isupper():
                    if i == 0 or after_quote:
                        initial.append((base, toks[i + 1][0] if i + 1 < len(toks) else ""))
                    else:
                        capitalized[base.lower()] += 1
                elif base[:1].islower():
                    lowercase[base.lower()] += 1
        proper = {w for w in capitalized if w not in lowercase and w not in STOPWORDS}
        for first, nxt in initial:  # "Amber Glenn goes…", "Team USA figure…"
            if re.sub(r"['’]s$", "", nxt).lower() in proper and first.lower() not in STOPWORDS:
                proper.add(first.lower())
        self.proper_nouns = proper
        self.documents = documents
        self.n = max(len(sentences), 1)
        self.df = df

    def idf(self, t: str) -> float:
        return math.log(1 + self.n / (1 + self.df.get(t, 0)))


class ExtractiveAnswerer:
    """Sentence selection by meaning + key-term coverage, typed phrase extraction, principled abstention."""

    def __init__(self, embedder: Embeddings, corpus_texts: list[str], documents: int = 1):
        self.embedder = embedder
        self.stats = CorpusStats(corpus_texts, documents)
        self._vectors: dict[str, np.ndarray] = {}

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        q = analyse(question, self.stats.proper_nouns)
        if q.injection:
            return self._abstain("it only answers questions about the documents, and follows no instructions")
        if not q.terms or not passages:
            return self._abstain()
        missing = self._names_missing_everywhere(q, passages)
        if missing:
            return self._abstain(f"it never mentions {missing}")

        sentences = self._score(question, q, passages)
        supported = [s for s in sentences if self._supports(q, s)]
        if not supported:
            return self._abstain()
        best = supported[0]
        if best.coverage < MIN_COVERAGE and best.dense < MIN_DENSE_ALONE:
            return self._abstain()

        phrase = self._phrase(q, best)
        if phrase:
            return Draft(f"{_capitalize(phrase)} [1].", False, [best])
        quotes = [best] + self._second_sentence(q, best, supported[1:])
        text = " ".join(f"{_end(s.text)} [{i}]" for i, s in enumerate(quotes, 1))
        return Draft(text, False, quotes)

    # -- scoring ---------------------------------------------------------------------------------------------

    def _score(self, question: str, q: Question, passages: list[Passage]) -> list[Sentence]:
        sentences = [
            Sentence(p, span, i) for p in passages for i, span in enumerate(split_sentences(p.text))
        ]
        qvec = np.asarray(self.embedder.embed_query(question))
        vectors = self._embed([s.text for s in sentences])
        seen: set[str] = set()
        unique = []
        for s, vec in zip(sentences, vectors, strict=True):
            if s.text in seen:  # overlapping chunks repeat sentences
                continue
            seen.add(s.text)
            s.dense = float(vec @ qvec)
            s.coverage = self._coverage(q, self._window_terms(s))
            s.candidates = self._candidates(q, s)
            typed = q.answer_type in PHRASE_TYPES and bool(s.candidates)
            s.score = DENSE_WEIGHT * s.dense + COVERAGE_WEIGHT * s.coverage + (TYPE_BONUS if typed else 0.0)
            unique.append(s)
        return sorted(unique, key=lambda s: s.score, reverse=True)

    def _embed(self, texts: list[str]) -> list[np.ndarray]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            for t, v in zip(todo, self.embedder.embed_documents(todo), strict=True):
                self._vectors[t] = np.asarray(v)
        return [self._vectors[t] for t in texts]

    def _window_terms(self, s: Sentence) -> set[str]:
        """Terms of the sentence and the one before it (which often holds the subject of "she", "he")."""
        sents = split_sentences(s.passage.text)
        window = sents[max(0, s.index - 1) : s.index + 1]
        return {term(w) for sent in window for w, _ in words(sent.text)}

    def _coverage(self, q: Question, window: set[str]) -> float:
        total = sum(self.stats.idf(t) for t in q.terms)
        hit = sum(self.stats.idf(t) for t in q.terms if t in window)
        return hit / total if total else 0.0

    def _supports(self, q: Question, s: Sentence) -> bool:
        """Hard checks: the names the question is about are in the passage, every closed-class term it names
        (a medal, a placing, a weekday, a number) is in the sentence's window, and the answer type is there."""
        passage_terms = {term(w) for w, _ in words(s.passage.text)}
        if any(not set(name) & passage_terms for name in q.names):
            return False
        window = self._window_terms(s)
        if any(c not in window for c in q.closed):
            return False
        if q.answer_type in PHRASE_TYPES and q.answer_type is not AnswerType.PERSON:
            return bool(s.candidates)
        if q.answer_type is AnswerType.PERSON:
            # "Who is Amber Glenn?" asks for a description, not another name.
            return bool(s.candidates) or bool(q.names)
        if q.answer_type is AnswerType.QUOTE:
            return _in_quotation(s)
        return True

    def _names_missing_everywhere(self, q: Question, passages: list[Passage]) -> str:
        found = {term(w) for p in passages for w, _ in words(p.text)}
        for name in q.names:
            if not set(name) & found:
                return _name_text(q.text, name)
        return ""

    # -- phrases ---------------------------------------------------------------------------------------------

    def _candidates(self, q: Question, s: Sentence) -> list[Span]:
        finder = CANDIDATE_FINDERS.get(q.answer_type)
        if finder is None:
            return []
        q_terms = set(q.terms) | {t for name in q.names for t in name}
        spans = finder(s.text, self.stats.proper_nouns)
        return [c for c in spans if not {term(w) for w, _ in words(c.text)} <= q_terms]

    def _phrase(self, q: Question, s: Sentence) -> str:
        """The one candidate nearest the question's terms in the sentence; none when two are equally near."""
        if q.answer_type not in PHRASE_TYPES or not s.candidates:
            return ""
        if len(s.candidates) == 1:
            return s.candidates[0].text
        anchors = [pos for w, pos in words(s.text) if term(w) in q.terms and w.lower() not in STOPWORDS]
        if not anchors:
            return ""
        distance = sorted(
            (min(_gap(c, a) for a in anchors), c.text) for c in s.candidates
        )
        if distance[1][0] - distance[0][0] < 8:  # about two words apart: too close to call
            return ""
        return distance[0][1]

    def _second_sentence(self, q: Question, best: Sentence, rest: list[Sentence]) -> list[Sentence]:
        """Add a second sentence when it is nearly as good and brings key terms the first lacks."""
        if q.answer_type in PHRASE_TYPES - {AnswerType.PERSON} or not rest:
            return []
        best_terms = {term(w) for w, _ in words(best.text)}
        for s in rest[:3]:
            new_terms = {term(w) for w, _ in words(s.text)} - best_terms
            if s.score >= SECOND_SENTENCE_RATIO * best.score and set(q.terms) & new_terms:
                return [s]
        return []

    def _abstain(self, reason: str = "") -> Draft:
        subject = "article doesn't" if self.stats.documents <= 1 else "documents don't"
        text = f"The {subject} say" + (f": {reason}." if reason else ".")
        return Draft(text, True, [], reason)


# -- candidate finders: spans of a sentence that could be the answer of a given type -------------------------


def _word_spans(text: str, predicate) -> list[Span]:
    return [Span(w, pos, pos + len(w)) for w, pos in words(text) if predicate(w)]


def _persons(text: str, proper: set[str]) -> list[Span]:
    out = []
    for g in name_groups(text, proper):
        parts = [p.lower() for p in re.findall(r"[A-Za-z][\w.-]*", g.text)]
        if any(p in ORG_WORDS or p in COUNTRIES or p in DEMONYMS or p in WEEKDAYS or p in MONTHS for p in parts):
            # "American Alysa Liu": drop a leading nationality, keep the person
            if parts[0] in DEMONYMS and len(parts) > 1 and not any(p in ORG_WORDS for p in parts):
                first = g.text.split()[0]
                rest = g.text[len(first):].lstrip()
                out.append(Span(rest, g.end - len(rest), g.end))
            continue
        out.append(g)
    return out


def _orgs(text: str, proper: set[str]) -> list[Span]:
    groups = name_groups(text, proper)
    return [g for g in groups if any(p.lower() in ORG_WORDS for p in g.text.split()) or
            re.fullmatch(r"[A-Z]{2,}", g.text)]


def _places(text: str, proper: set[str]) -> list[Span]:
    out = [g for g in name_groups(text, proper) if g.text.lower() in COUNTRIES or g.text.lower() in DEMONYMS]
    for m in re.finditer(r"\b(?:in|at|from)\s+((?:[A-Z][\w-]+\s?)+)", text):
        g = m.group(1).strip()
        if g.lower() not in WEEKDAYS | MONTHS and g.split()[0].lower() in proper:
            out.append(Span(g, m.start(1), m.start(1) + len(g)))
    return _dedupe(out)


NUMBER = r"(?:\d+(?:[.,:]\d+)*|" + "|".join(NUMBER_WORDS) + r")"


def _numbers(text: str, proper: set[str]) -> list[Span]:
    """A number with the unit after it: "1.91 points", "2 hours, 8 minutes and 41 seconds", "$50,000"."""
    out = []
    unit = r"(?:\s*(?:%|°C|°F|[a-z]+(?:-[a-z]+)*))?"
    pattern = rf"[$€£]?\b{NUMBER}\b{unit}(?:(?:,|\s+and)?\s+{NUMBER}\b{unit})*"
    for m in re.finditer(pattern, text, re.IGNORECASE):
        span = m.group().strip()
        last = span.split()[-1].lower() if span.split() else ""
        if last in STOPWORDS:  # "two of" → "two"
            span = span.rsplit(None, 1)[0]
        if span.lower() in {"a", "one"}:
            continue
        out.append(Span(span, m.start(), m.start() + len(span)))
    return out


def _ages(text: str, proper: set[str]) -> list[Span]:
    pattern = r"\b\d{1,3}-year-old\b|\baged \d{1,3}\b|(?<=, )\d{1,3}(?=,)|\b\d{1,3} years old\b"
    return [Span(m.group(), m.start(), m.end()) for m in re.finditer(pattern, text)]


def _times(text: str, proper: set[str]) -> list[Span]:
    days = "|".join(WEEKDAYS | MONTHS)
    pattern = (rf"\b(?:(?:{days})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?)\b|\b(?:19|20)\d{{2}}\b|"
               rf"\b{NUMBER}\s+(?:days|weeks|months|years|hours)\s+(?:ago|earlier|later)\b|"
               r"\b(?:yesterday|today|tonight|tomorrow|last (?:night|week|year|time))\b")
    return [Span(m.group(), m.start(), m.end()) for m in re.finditer(pattern, text, re.IGNORECASE)
            if m.group().lower() not in {"may", "march"} or m.group()[0].isupper()]


def _medals(text: str, proper: set[str]) -> list[Span]:
    return [Span(m.group(), m.start(), m.end())
            for m in re.finditer(r"\b(?:gold|silver|bronze)(?: medal)?\b", text, re.IGNORECASE)]


def _placings(text: str, proper: set[str]) -> list[Span]:
    ordinal = "|".join(ORDINALS - {"last"})
    return [Span(m.group(), m.start(), m.end())
            for m in re.finditer(rf"\b(?:{ordinal}|\d+(?:st|nd|rd|th))\b", text, re.IGNORECASE)]


CANDIDATE_FINDERS = {
    AnswerType.PERSON: _persons,
    AnswerType.ORG: _orgs,
    AnswerType.PLACE: _places,
    AnswerType.NUMBER: _numbers,
    AnswerType.AGE: _ages,
    AnswerType.TIME: _times,
    AnswerType.MEDAL: _medals,
    AnswerType.PLACING: _placings,
}
PHRASE_TYPES = set(CANDIDATE_FINDERS)


def _in_quotation(s: Sentence) -> bool:
    """The sentence is, or holds, someone's quoted words."""
    if re.search(r"[“”\"‘]|\bsaid\b|\bsays\b|\btold\b", s.text):
        return True
    paragraph_start = s.passage.text.rfind("\n", 0, s.span.start) + 1
    return s.passage.text[paragraph_start : paragraph_start + 1] in "‘“'\""


def _gap(c: Span, anchor: int) -> int:
    return 0 if c.start <= anchor < c.end else min(abs(anchor - c.start), abs(anchor - c.end))


def _dedupe(spans: list[Span]) -> list[Span]:
    seen, out = set(), []
    for s in spans:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out


def _name_text(question: str, name: list[str]) -> str:
    ws = [w for w, _ in words(question) if term(re.sub(r"['’]s$", "", w)) in name]
    return "“" + " ".join(ws) + "”" if ws else "that"


def _capitalize(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _end(text: str) -> str:
    return text if re.search(r"[.!?…’”'\"]$", text) else text + "."
