"""The guard for answers of several sentences (an overview, a list, why or how, …: bot.answer.forms.LONG_FORMS): each
sentence is held to the passage it cites by the grounding guard's checks (bot.answer.guard) as the LLM writes it, and
dropped when it does not hold, not the whole answer; so is a sentence that ties a fact to the wrong person
(`relation_problem`), and one that says the documents do not answer where others answer. A sentence that holds is
shown at once (a streamed answer: bot.serving.ServedBot.ask_streamed). The learnt decision is not applied: it was
fitted on single facts. Single facts go to the grounding guard as before."""

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace

from bot.answer.cite import markers_in
from bot.answer.claims import Claim, clean, says_not_in_documents, split_claims
from bot.answer.forms import LONG_FORMS
from bot.answer.guard import Guard, ReadSpans, Verdict, claim_problem, quotes_for, recited, renumbered
from bot.answer.overview import FEW_SENTENCES, QUOTED_SENTENCES, with_closest
from bot.answer.terms import content_terms, words
from bot.types import Draft, Passage, Sentence
from index.text.pipeline import parse

log = logging.getLogger(__name__)


class SentenceGuard:
    """The chain's guard step for every form: answers of several sentences are held here sentence by sentence, single
    facts by `guard`."""

    def __init__(self, guard: Guard):
        self.guard = guard

    def __call__(self, state: dict) -> dict:
        if state["asked"].form not in LONG_FORMS:
            return self.guard(state)
        held = state.get("held")
        if held is None:  # not held as it was written (a chain without `hold`): held whole now
            held = HeldSentences(*self._reading(state))
            held.finish(state["generation"].text or "")
        return self.guard.settle(state, review_long(state, held), None)

    def hold(self, state: dict, on_held: Callable[[str], None] | None = None) -> "HeldSentences | None":
        """What holds the sentences of the LLM's answer as it writes them, for an answer of several sentences: each
        one that holds goes to `on_held` (rendered as the answer shows it) at once. None for a single fact."""
        if state["asked"].form not in LONG_FORMS:
            return None
        return HeldSentences(*self._reading(state), on_held)

    def _reading(self, state: dict) -> tuple:
        """What a long answer is held to: the passages the LLM read, their sentences, the span reader."""
        return state["llm_passages"], state["llm_corpus"].sentences_in, self.guard.read_spans


class HeldSentences:
    """The sentences of an LLM's long answer, held one at a time as the text comes (`feed`, token by token, or all of
    it at `finish`): the text is cut after each run of citation markers that the next sentence follows ("… in August
    [1]. The walkout …"), a cut no later text moves, so the sentences and what is held are the same however the text
    arrives. Each sentence is held to the passage it cites by the grounding guard's checks; one that holds is
    rendered at once (its markers numbered 1, 2, … in order of first use) and handed to `on_held`: the answer is
    those pieces, in order."""

    def __init__(
        self,
        passages: list[Passage],
        sentences_in: Callable[[Passage], list[Sentence]],
        read_spans: ReadSpans | None,
        on_held: Callable[[str], None] | None = None,
    ):
        self.passages, self.texts = passages, [p.text for p in passages]
        self.sentences_in, self.read_spans, self.on_held = sentences_in, read_spans, on_held
        self.written = ""  # the text so far
        self.judged = 0  # how much of it was cut into sentences and judged
        self.kept: list[Claim] = []
        self.dropped: list[tuple[Claim, str]] = []
        self.renumber: dict[int, int] = {}  # the LLM's passage number → the answer's
        self.pieces: list[str] = []  # the kept sentences as the answer shows them

    def feed(self, token: str) -> None:
        self.written += token
        for cut in sentence_ends(self.written, self.judged):
            self._judge(self.written[self.judged : cut])
            self.judged = cut

    def finish(self, text: str) -> None:
        """The whole text (what was fed, or all of it where the model gave no tokens): its last sentences judged."""
        if not self.written:
            self.feed(text)
        if self.written[self.judged :].strip():
            self._judge(self.written[self.judged :])
        self.judged = len(self.written)

    @property
    def says_not_in_documents(self) -> bool:
        """Nothing held, and the LLM said the documents do not answer."""
        return not self.kept and any(problem == NOT_IN_DOCUMENTS for _, problem in self.dropped)

    def draft(self) -> Draft:
        """The held sentences as one draft, each marker backed by a verbatim quote."""
        order = list(self.renumber)
        draft = Draft(" ".join(self.pieces), False, quotes_for(self.kept, order, self.passages, self.sentences_in))
        draft.reason = f"{len(self.kept)} of {len(self.kept) + len(self.dropped)} sentences held"
        return draft

    def _judge(self, segment: str) -> None:
        said = {c.text for c, _ in self.dropped} | {c.text for c in self.kept}
        for claim in split_claims(recited(clean(segment), self.texts, several=True)):
            if claim.text in said:  # a sentence said twice, once
                continue
            said.add(claim.text)
            problem = self._problem(claim)
            if problem:
                log.info("long answer: dropped %r: %s", claim.text, problem)
                self.dropped.append((claim, problem))
                continue
            claim = self._narrowed(claim)
            self.kept.append(claim)
            for n in claim.cites:
                self.renumber.setdefault(n, len(self.renumber) + 1)
            piece = renumbered(f"{claim.text} {''.join(f'[{n}]' for n in claim.cites)}", self.renumber)
            self.pieces.append(piece)
            if self.on_held:
                self.on_held(piece if len(self.pieces) == 1 else f" {piece}")

    def _narrowed(self, claim: Claim) -> Claim:
        """A sentence that holds, citing the one passage of those it cites that holds it alone, where one does (the
        one sharing most of its words): a small model cites runs of passages ("[2][3][4]…[11]"), and each cite
        shows the user a quote."""
        alone = [n for n in claim.cites if claim_problem(claim, self.texts, [n], several=True) is None]
        if len(claim.cites) < 2 or not alone:
            return claim
        said = set(content_terms(claim.text))
        narrow = replace(claim, cites=[max(alone, key=lambda n: len(said & set(content_terms(self.texts[n - 1]))))])
        return claim if relation_problem(narrow, self.texts, self.read_spans) else narrow

    def _problem(self, claim: Claim) -> str | None:
        if says_not_in_documents(claim.text):
            return NOT_IN_DOCUMENTS
        if not claim.cites:
            return "it cites no passage"
        if claim.text.startswith(QUOTATION_MARKS):
            return "it quotes without saying who spoke"
        return claim_problem(claim, self.texts, claim.cites, several=True) or relation_problem(
            claim, self.texts, self.read_spans
        )


NOT_IN_DOCUMENTS = "it says the documents do not answer"


def sentence_ends(text: str, start: int) -> Iterator[int]:
    """Where, after `start`, a sentence of the text ends that the next one follows: after a run of citation markers
    (and the stop after it), once the next sentence's first character has come."""
    markers = [m for m in markers_in(text) if m.start >= start]
    for i, marker in enumerate(markers):
        end = marker.end
        if i + 1 < len(markers) and not text[end : markers[i + 1].start].strip():
            continue  # the run goes on: "[1] [2]"
        if text[end : end + 1] in SENTENCE_STOPS:
            end += 1
        after = text[end:]
        if after[:1].isspace() and after.strip() and not after.lstrip().startswith("["):
            yield end


def review_long(state: dict, held: HeldSentences) -> Verdict:
    """The guard's verdict on an answer of several sentences: the sentences `held` (one alone followed by the
    closest sentences it does not cite); where the LLM answered but none of its sentences holds, the sentences
    closest to the question, quoted (the chain's quote step); the reply step's draft where the LLM says the documents
    do not answer, wrote nothing or failed."""
    generation, fallback = state["generation"], state["draft"]
    if held.kept:
        draft = held.draft()
        if len(held.kept) < FEW_SENTENCES and state.get("quoted") is not None:
            draft = with_closest(draft, state["quoted"], state["corpus"].documents, QUOTED_SENTENCES)
        if generation.error:  # what was held was shown as it came: it stays the answer
            draft.reason += f"; then the LLM failed: {generation.error}"
        return Verdict(draft, generation.backend, "passed")
    if generation.error:
        return Verdict(fallback, "extractive", "fallback", f"the LLM failed: {generation.error}")
    if not clean(generation.text or ""):
        return Verdict(fallback, "extractive", "fallback", "the LLM wrote nothing")
    if held.says_not_in_documents:
        if fallback.abstained:
            return Verdict(fallback, generation.backend, "passed")
        return Verdict(fallback, "extractive", "fallback", "the LLM found no answer")
    reason = f"no sentence of the LLM's answer holds: {held.dropped[0][1]}"
    if state.get("quoted") is not None:
        return Verdict(state["quoted"], "extractive", "fallback", f"{reason}; the closest sentences quoted")
    return Verdict(fallback, "extractive", "fallback", reason)


SENTENCE_STOPS = (".", "!", "?")
QUOTATION_MARKS = ("‘", "“", '"', "'")  # a long answer's sentence opening with one is a bare quote ("‘I wasn’t …")
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
PERSON_LABELS = {"PERSON", "ORG", "NORP", "GPE"}


def relation_problem(claim: Claim, passages: list[str], read_spans: ReadSpans | None) -> str | None:
    """Why a sentence ties its facts to the wrong one: its subject is a name ("Glenn won the silver medal"), so the
    span reader is asked "Who won the silver medal?" of the passages the sentence cites, and the sentence holds when
    the span it finds there, surer of it than of no answer, names the subject ("After the skate, Sakamoto waved her
    hands …": "Who waved her hands …?"). None without a reader, or when the main clause's subject is no name."""
    if read_spans is None:
        return None
    doc = parse(claim.text)
    subject = next(
        (t for t in doc if t.dep_ in SUBJECT_DEPS and t.ent_type_ in PERSON_LABELS and t.head.dep_ == "ROOT"), None
    )
    if subject is None or subject.head.pos_ not in {"VERB", "AUX"}:
        return None
    tokens = list(subject.subtree)
    first, last = tokens[0].i, tokens[-1].i
    rest = doc[last + 1 :].text.strip().rstrip(".!?")  # what is said of the subject; an opening phrase is left out
    names = {t.text.lower() for t in tokens if t.pos_ == "PROPN"}
    if not rest or not names:
        return None
    question = f"Who {rest}?"
    cited = [passages[n - 1] for n in claim.cites if 1 <= n <= len(passages)]
    guesses = read_spans(question, cited)
    if not guesses:
        return None
    best = max(guesses, key=lambda g: g.margin)
    found = cited[best.text_index][best.start : best.end] if best.margin > 0 else ""
    if names & set(words_of(found)):
        return None
    return f"asked {question!r}, the reader finds {found or 'nothing'!r} in the cited passages, not {doc[first : last + 1].text!r}"


def words_of(text: str) -> list[str]:
    return [w.lower() for w, _ in words(text)]
