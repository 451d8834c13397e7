"""The grounding guard: an LLM's answer reaches the user only when the documents it cites back it and the learnt
decision gives it.

Used after every generative backend. The answer passes when:
- the LLM produced text at all (no error, no time-out, not empty);
- a "not in the documents" passes where the extractive answerer abstained too (else its answer stands);
- it cites at least one passage, and every cited `[n]` is one of the numbered passages;
- every number, date, proper name and quoted phrase of each sentence occurs in the passages that sentence cites
  (a sentence without a marker is held to all passages the answer cites). The sentences, names (proper nouns) and
  quotation marks are spaCy's, and so is the reading of a number's words;
- a sentence that denies something ("not", "never", "n't", "No one") cites a passage that denies something too;
  the "No," that answers a yes/no question needs no denial in the passage ("did she win gold?" "No, she won
  silver."): whether it is right is weighed by the learnt decision, with the LLM's P(Yes) share;
- the Yes or No that answers a yes/no question is the one the LLM's P(Yes) share chooses at the fitted threshold
  (bot.answer.llm_decide.overruling_word). Where it overrules the LLM's own word, the LLM's answer must still pass
  every check here (it is what the decision judges, hearing that it was overruled), and the reply is the share's
  word on the sentences that answer cites ("No [1]."); a "Yes" so chosen holds the question's numbers and dates;
- an answer that opens with "Yes" affirms the question, so the question's numbers and dates are in the passages it
  cites ("was she 1.5 points behind?" "Yes, she was 1.91 points behind [5]." does not pass);
- the answer speaks of the event, not of "the document" (beyond a leading "According to the article,"). A "Yes"
  and talk of the documents are found by spaCy's Matcher, with the token patterns of bot/lang/en/guard.toml;
- most of each sentence's other words (MIN_GROUNDED_TERMS, compared as lemmas) are in the passages it cites:
  "the final was delayed by a storm" does not pass on a passage that never says so;
- the learnt decision (bot.answer.llm_decide) gives it: its probability of being right, from the LLM's
  log-probabilities, the span reader's probability, whether the answer says the precise phrase the span reader
  found ("Third place", "27-year-old"), what the span reader finds reading only the sentences the LLM cites, and
  more, reaches the fitted threshold. Whether the span reader abstained is one of its signals, no longer a veto.
Otherwise the extractive answer is returned, with `guard="fallback"` and the reason logged.

A passing answer keeps the answer object's contract: its `[n]` are renumbered 1, 2, … in order of first use and
each is backed by a verbatim quote, the sentence(s) of the cited passage that hold the answer's facts.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.answer.cite import markers_in, without_markers
from bot.answer.claims import (
    Claim,
    backing_of,
    clean,
    number_value,
    numbers_in,
    occurs,
    says_not_in_documents,
    split_claims,
    unaffirmed_fact,
)
from bot.answer.llm_decide import LLMDecision, llm_features, overruling_word
from bot.answer.terms import STOPWORDS, content_terms, term, terms_of, words
from bot.types import Draft, LLMReview, Passage, Sentence, Span

if TYPE_CHECKING:  # the reader's module loads torch; the guard only calls it
    from bot.answer.corpus import Corpus
    from bot.reader.model import SpanGuess

ReadSpans = Callable[[str, list[str]], list["SpanGuess"]]  # SpanReader.read: (question, texts) → each text's best span

log = logging.getLogger(__name__)

MIN_GROUNDED_TERMS = 0.6  # share of a sentence's content words (3 or more) that its cited passages must hold
SENTENCE_END = (".", "!", "?")


@dataclass
class Verdict:
    draft: Draft  # what the user gets
    backend: str  # who wrote draft.text
    guard: str  # "passed" or "fallback"
    reason: str = ""  # why it fell back


class Guard:
    """The guard step of the chain: reads state["generation"], state["draft"] (extractive) and the reader's
    state["decision"], the passages the LLM read (state["llm_passages"]) and their sentences (state["llm_corpus"]);
    sets state["draft"], state["backend"], state["guard"], state["llm_review"] (None when the LLM's answer did not
    reach the learnt decision) and state["extractive_draft"] (the span reader's, kept for calibration and comparison)."""

    def __init__(self, decision: LLMDecision, read_spans: ReadSpans | None = None):
        self.decision = decision
        self.read_spans = read_spans  # the span reader, for a second reading of what the LLM cites

    def __call__(self, state: dict) -> dict:
        return self.settle(state, *self.review(state))

    def settle(self, state: dict, verdict: Verdict, llm_review: LLMReview | None) -> dict:
        """The state after the guard: the verdict's draft is the one cited."""
        if verdict.guard == "fallback":
            log.info("guard fallback (%s) for %r: %s", state["generation"].backend, state["question"], verdict.reason)
        return {
            **state,
            "draft": verdict.draft,
            "backend": verdict.backend,
            "guard": verdict.guard,
            "llm_review": llm_review,
            "extractive_draft": state["draft"],
        }

    def review(self, state: dict) -> tuple[Verdict, LLMReview | None]:
        """Keep the LLM's answer when the passages back it and the learnt decision gives it, else fall back to the
        extractive draft."""
        generation, extractive, passages = state["generation"], state["draft"], state["llm_passages"]

        def fallback(reason: str, llm_review: LLMReview | None = None) -> tuple[Verdict, LLMReview | None]:
            return Verdict(extractive, "extractive", "fallback", reason), llm_review

        if generation.error:
            return fallback(f"the LLM failed: {generation.error}")
        text = clean(generation.text or "")
        if not text:
            return fallback("the LLM wrote nothing")
        if says_not_in_documents(text):
            if extractive.abstained:  # both say the documents do not answer: the usual wording, with its reason
                return Verdict(extractive, generation.backend, "passed"), None
            return fallback("the LLM found no answer where the extractive answerer found one")
        as_written, text = text, recited(text, [p.text for p in passages])
        problem = unsupported(text, [p.text for p in passages], state["standalone_question"])
        if problem:
            return fallback(problem)
        llm_draft = cited_draft(text, passages, state["llm_corpus"].sentences_in)
        word = (  # the Yes or No the share chooses where it overrules the LLM's own answer to a yes/no question
            overruling_word(text, generation.yes_share, self.decision.yes_threshold)
            if state["asked"].kind == "yes-no"
            else None
        )
        phrase = extracted_phrase(extractive)
        agrees = None if not phrase else disagrees(text, extractive, state["standalone_question"]) is None
        features = llm_features(
            generation.token_logprobs,
            generation.p_not_in_documents,
            generation.yes_share,
            llm_draft,
            extractive,
            state.get("decision"),
            state["asked"],
            state["passages"],
            agrees,
            recited=text != as_written,
            cited_reading=self.cited_reading(state["asked"].text, llm_draft, state["llm_corpus"]),
            yes_overruled=word is not None,
        )
        if word is not None:  # the LLM argued for the other word
            llm_draft, problem = answered_by_word(word, llm_draft, state["standalone_question"])
            if problem:
                return fallback(problem)
        p = self.decision.probability(features)
        llm_review = LLMReview(llm_draft, features, p)
        if p < self.decision.threshold:
            return fallback(
                f"the learnt decision gives the LLM's answer {p:.2f}, under {self.decision.threshold}", llm_review
            )
        llm_draft.confidence = p
        return Verdict(llm_draft, generation.backend, "passed"), llm_review

    def cited_reading(self, question: str, llm_draft: Draft, corpus: "Corpus") -> tuple[float, float] | None:
        """The span reader reading only the sentences the LLM cites (each with the one before it, where "she" is
        named): its best span's margin over answering nothing, and the share of that span's words the LLM's answer
        says. A second opinion aimed at the LLM's evidence: a right answer's sentence usually reads as answering the
        question, with the same span. None without a reader."""
        if self.read_spans is None or not llm_draft.quotes:
            return None
        texts = [corpus.window(q) if q.index >= 0 else q.text for q in llm_draft.quotes]
        guesses = self.read_spans(question, texts)
        if not guesses:
            return None
        best = max(guesses, key=lambda g: g.margin)
        span_terms = terms_of(texts[best.text_index][best.start : best.end])
        said = len(span_terms & terms_of(without_markers(llm_draft.text))) / len(span_terms) if span_terms else 0.0
        return best.margin, said


def answered_by_word(word: str, draft: Draft, question: str) -> tuple[Draft, str | None]:
    """The share's Yes or No on the sentences the LLM's answer cites ("No [1]."), and why it may not be given: a
    "Yes" affirms the question, so the question's numbers and dates must be in those sentences."""
    sources = list(range(1, len(draft.quotes) + 1))
    given = Draft(f"{word} {''.join(f'[{n}]' for n in sources)}.", False, draft.quotes)
    return given, affirmed_problem(question, [q.text for q in draft.quotes], sources) if word == "Yes" else None


def unsupported(text: str, passages: list[str], question: str = "") -> str | None:
    """Why the answer is not backed by the passages it cites, or None when it is."""
    claims = split_claims(text)
    cited = sorted({n for c in claims for n in c.cites})
    if not cited:
        return "the answer cites no passage"
    problem = next((p for claim in claims if (p := claim_problem(claim, passages, claim.cites or cited))), None)
    return problem or (affirmed_problem(question, passages, claims[0].cites or cited) if claims[0].affirms else None)


def affirmed_problem(question: str, passages: list[str], sources: list[int]) -> str | None:
    """Why a "Yes" to `question` is not backed by the passages `sources`: a yes affirms what the question says, so
    each of its numbers and dates must be there ("Was Sakamoto 1.5 points behind?" "Yes, … 1.91 points …")."""
    missing = unaffirmed_fact(question, backing_of(" ".join(passages[n - 1] for n in sources)))
    if missing is None:
        return None
    where = ", ".join(f"[{n}]" for n in sources)
    return f"the answer says yes, but the question's {missing[0]} {missing[1]!r} is not in the cited passages {where}"


def claim_problem(claim: Claim, passages: list[str], sources: list[int], several: bool = False) -> str | None:
    """Why one sentence of the answer is not backed by the passages `sources` (numbered from 1), or None. A sentence
    of an answer of `several` may speak of the documents ("This article is about …")."""
    where = ", ".join(f"[{n}]" for n in sources)
    missing = [n for n in sources if not 1 <= n <= len(passages)]
    if missing:
        return f"the answer cites [{missing[0]}], but there are only {len(passages)} passages"
    if claim.about_the_documents and not several:
        return f"the answer speaks of the documents instead of the event: {claim.text!r}"
    if "<" in claim.text or ">" in claim.text or not any(ch.isalnum() for ch in claim.text):  # "1974." says a year
        return f"the sentence {claim.text!r} says nothing about the event"
    cited_text = " ".join(passages[n - 1] for n in sources)
    backing = backing_of(cited_text)
    if claim.denial and not backing.denies:
        return f"the answer denies something ({claim.denial!r}) that the cited passages {where} do not"
    for kind, fact in claim.facts:
        if not occurs(kind, fact, backing):
            return f"the {kind} {fact!r} is not in the cited passage{'s' if len(sources) > 1 else ''} {where}"
    said = grounding_terms(claim.text[len(claim.opening) :])
    held = grounding_terms(cited_text)
    if len(said) >= 3 and sum(t in held for t in said) < MIN_GROUNDED_TERMS * len(said):
        missing_terms = [t for t in said if t not in held]
        return f"the cited passages {where} do not hold most of {claim.text!r} (not: {', '.join(missing_terms)})"
    return None


def recited(text: str, passages: list[str], several: bool = False) -> str:
    """The answer with each sentence citing a passage that backs it: the one it cites when that does, else the
    passage that does and shares most of its words (a small model often names the passage beside the one it read
    the fact in, or none). A sentence no single passage backs keeps its markers, and the checks then refuse it (two
    passages together were tried for answers of `several` sentences: they let "The judges on the panel were Alysa Liu
    and Kaori Sakamoto" through)."""
    claims = split_claims(text)
    cited = sorted({n for c in claims for n in c.cites})
    sources = [c.cites or cited for c in claims]
    changed = False
    for i, claim in enumerate(claims):
        if sources[i] and claim_problem(claim, passages, sources[i], several) is None:
            continue
        backing = [n for n in range(1, len(passages) + 1) if claim_problem(claim, passages, [n], several) is None]
        if backing:
            said = set(content_terms(claim.text))
            sources[i] = [max(backing, key=lambda n: len(said & set(content_terms(passages[n - 1]))))]
            changed = True
    if not changed:
        return text
    return " ".join(
        f"{c.text.strip()} " + "".join(f"[{n}]" for n in cited_by) for c, cited_by in zip(claims, sources, strict=True)
    )


def grounding_terms(text: str) -> set[str]:
    """The terms of a text's words that carry meaning, numbers aside (the guard checks those by value)."""
    return {t for t in content_terms(text) if not t[:1].isdigit()}


def disagrees(text: str, extractive: Draft, question: str) -> str | None:
    """Why the answer contradicts the precise phrase the extractive answerer found, or None."""
    phrase = extracted_phrase(extractive)
    if not phrase:
        return None
    asked = terms_of(question)
    new = [w for w, _ in words(phrase) if w.lower() not in STOPWORDS and term(w) not in asked]
    said = terms_of(without_markers(text))
    said_numbers = numbers_in(text)
    numbers = [w for w in new if numbers_in(w)]
    if not new or (any(term(w) in said for w in new) and all(number_value(n) in said_numbers for n in numbers)):
        return None
    return f"the answer does not say {phrase!r}, which the extractive answerer found"


def extracted_phrase(extractive: Draft) -> str:
    """The span the extractive answer rests on ("third place"), which the reply step keeps in the draft; "" when it
    abstained (a decline or an unsure reply rests on no span)."""
    return "" if extractive.abstained else extractive.phrase


# -- the answer object of a passing answer --------------------------------------------------------------------


def cited_draft(text: str, passages: list[Passage], sentences_in: Callable[[Passage], list[Sentence]]) -> Draft:
    """The LLM's text with its markers renumbered 1, 2, … in order of first use, each backed by a verbatim quote."""
    claims = split_claims(text)
    order = list(dict.fromkeys(n for c in claims for n in c.cites))
    renumber = {old: new for new, old in enumerate(order, 1)}
    return Draft(renumbered(text, renumber), False, quotes_for(claims, order, passages, sentences_in))


def quotes_for(
    claims: list[Claim], order: list[int], passages: list[Passage], sentences_in: Callable[[Passage], list[Sentence]]
) -> list[Sentence]:
    """The verbatim quote of each cited passage, in the answer's order: its sentences that hold the facts of the
    claims citing it (and of those citing none)."""
    quotes = []
    for old in order:
        facts_here = [f for c in claims if old in c.cites or not c.cites for f in c.facts]
        words_here = " ".join(c.text for c in claims if old in c.cites or not c.cites)
        quotes.append(quote(passages[old - 1], facts_here, words_here, sentences_in))
    return quotes


def renumbered(text: str, renumber: dict[int, int]) -> str:
    """The markers written "[1][2]" in their new numbers, before the stop that ends their sentence ("came third.
    [1]" → "came third [1].")."""
    pieces: list[str] = []
    last = 0
    for m in markers_in(text):
        marker = "".join(f"[{renumber[n]}]" for n in dict.fromkeys(m.numbers))
        before = text[last : m.start]
        if before.rstrip().endswith(SENTENCE_END):
            stop = before.rstrip()[-1]
            pieces += [before.rstrip()[:-1], " ", marker, stop]
        elif not before and pieces and pieces[-1] in SENTENCE_END:  # the next marker of a moved run: "[1][2]."
            pieces.insert(len(pieces) - 1, marker)
        else:
            pieces += [before, marker]
        last = m.end
    return "".join(pieces) + text[last:]


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
    answer_words = _long_words(words)

    def held(s: Sentence) -> list[int]:
        ev = backing_of(s.text)
        return [i for i, (k, f) in enumerate(claimed) if occurs(k, f, ev)]

    def score(s: Sentence) -> tuple[int, int]:
        return len(held(s)), len(answer_words & _long_words(s.text))

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
    return Sentence(
        first.path,
        first.source,
        Span(text, start, end),
        first.index,
        passage.chunk_id,
        first.page,
        section=first.section,
    )


def _long_words(text: str) -> set[str]:
    return {w.lower() for w, _ in words(text) if len(w) > 3 and w[0].isalpha()}
