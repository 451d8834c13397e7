"""The guard for answers of several sentences (an overview, a list, why or how, …: bot.answer.forms.LONG_FORMS): each
sentence is held to the passage it cites by the grounding guard's checks (bot.answer.guard) and dropped when it does
not hold, not the whole answer; so is a sentence that ties a fact to the wrong person (`relation_problem`). The learnt
decision is not applied: it was fitted on single facts. Single facts go to the grounding guard as before."""

import logging

from bot.answer.claims import Claim, clean, says_not_in_documents, split_claims
from bot.answer.forms import LONG_FORMS
from bot.answer.guard import Guard, ReadSpans, Verdict, cited_draft, claim_problem, recited
from bot.answer.terms import words
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
        return self.guard.settle(state, review_long(state, self.guard.read_spans), None)


def review_long(state: dict, read_spans: ReadSpans | None) -> Verdict:
    """The guard for an answer of several sentences: each sentence is held to the passage it cites and dropped when
    it does not hold; the rest is the answer. Falls back to the reply step's draft when no sentence holds."""
    generation, fallback, passages = state["generation"], state["draft"], state["llm_passages"]
    texts = [p.text for p in passages]
    if generation.error:
        return Verdict(fallback, "extractive", "fallback", f"the LLM failed: {generation.error}")
    text = clean(generation.text or "")
    if not text:
        return Verdict(fallback, "extractive", "fallback", "the LLM wrote nothing")
    if says_not_in_documents(text):
        if fallback.abstained:
            return Verdict(fallback, generation.backend, "passed")
        return Verdict(fallback, "extractive", "fallback", "the LLM found no answer")
    claims = list(
        {c.text: c for c in split_claims(recited(text, texts, several=True))}.values()
    )  # a sentence said twice, once
    kept, dropped = [], []
    for claim in claims:
        problem = (
            "it cites no passage"
            if not claim.cites
            else "it quotes without saying who spoke"
            if claim.text.startswith(QUOTATION_MARKS)
            else claim_problem(claim, texts, claim.cites, several=True) or relation_problem(claim, texts, read_spans)
        )
        (dropped if problem else kept).append((claim, problem))
    for claim, problem in dropped:
        log.info("long answer: dropped %r: %s", claim.text, problem)
    if not kept:
        return Verdict(fallback, "extractive", "fallback", f"no sentence of the LLM's answer holds: {dropped[0][1]}")
    answer = " ".join(f"{c.text} {''.join(f'[{n}]' for n in c.cites)}" for c, _ in kept)
    draft = cited_draft(answer, passages, state["llm_corpus"].sentences_in)
    draft.reason = f"{len(kept)} of {len(claims)} sentences held"
    return Verdict(draft, generation.backend, "passed")


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
