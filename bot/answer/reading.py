"""The default answerer, no LLM: a trained span reader over the sentences where the evidence is, a learnt decision
to answer or abstain, and a reply composed from the span and its sentence. Every answer cites a verbatim sentence.

read:  the passages' sentences are scored by meaning (cosine to the question) and by coverage of the question's
       terms; the best few are read by the span reader, each with its neighbours, in one batch.
judge: a logistic regression over general signals (bot.answer.answerability) gives the probability that the best
       span is right; below the threshold chosen on held-out articles the answerer abstains.
reply: the span ("Alysa Liu [1]."); the sentence for why, how and who-is questions; "Yes —"/"No —" for a yes/no
       question, read as the open question it hides."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from langchain_core.documents import Document

from bot.answer.answerability import Answerability, Evidence, asked_kind, question_terms
from bot.answer.corpus import Corpus, Knowledge
from bot.answer.language import WH_WORDS, term, terms_of
from bot.answer.linking import fold
from bot.reader.model import SpanGuess, SpanReader
from bot.types import Draft, Passage, Sentence
from bot.vectors import CachedEmbeddings
from index.text import parse

log = logging.getLogger(__name__)

SENTENCE_KINDS = {"why", "how", "describe"}  # answered with the sentence the span sits in
YES_NO_OPEN = {"dobj", "attr", "acomp", "oprd", "advmod", "npadvmod", "pobj"}  # what a yes/no question asks about


@dataclass
class Reading:
    """What the reader found for one question: the best span, where it sits, and the evidence for judging it."""

    span: str
    sentence: Sentence
    evidence: Evidence


class ReaderAnswerer:
    """Reads the chunks `around(passages)` (the passages and their neighbourhood, never whole documents)."""

    def __init__(
        self,
        vectors: CachedEmbeddings,
        knowledge: Knowledge,
        around: Callable[[list[Passage]], list[Document]],
        reader: SpanReader,
        answerability: Answerability,
        windows: int = 4,
    ):
        self.vectors, self.knowledge, self.around = vectors, knowledge, around
        self.reader, self.answerability, self.windows = reader, answerability, windows

    def corpus_for(self, passages: list[Passage]) -> Corpus:
        return Corpus(self.around(passages) if passages else [], self.knowledge)

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        """The sentences of a passage (for the guard, which checks an LLM's claims against them)."""
        return self.corpus_for([passage]).sentences_in(passage)

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        corpus = self.corpus_for(passages)
        kind = asked_kind(question)
        if kind == "yes-no":
            return self._yes_no(question, passages, corpus) or self._answer(question, passages, corpus, "describe")
        return self._answer(question, passages, corpus, kind)

    def check(self, question: str, sentence: str) -> tuple[str, SpanGuess] | None:
        """The reader's best span (text, scores) in `sentence` alone: another reader's quote, checked."""
        guess = max(self.reader.read(question, [sentence]), key=lambda g: g.margin, default=None)
        return None if guess is None else (sentence[guess.start : guess.end], guess)

    def read(self, question: str, passages: list[Passage], corpus: Corpus) -> Reading | None:
        """The reader's best span among the best few sentences of the passages, with the evidence to judge it."""
        sentences = self._ranked(question, passages, corpus)[: self.windows]
        if not sentences:
            return None
        windows = [_window(corpus, s) for s in sentences]
        guesses = self.reader.read(question, [text for text, _ in windows])
        if not guesses:
            return None
        ranked = sorted(guesses, key=lambda g: g.margin, reverse=True)
        best = ranked[0]
        text, offset = windows[best.text_index]
        start, end = offset + best.start, offset + best.end
        path = sentences[best.text_index].path
        sentence = next(
            (replace(s) for s in corpus.sentences[path] if s.span.start <= start < s.span.end + 1),
            sentences[best.text_index],
        )
        end = min(end, sentence.span.end)  # a span is quoted inside its sentence
        span = corpus.texts[path][start:end].strip()
        source = sentences[best.text_index]
        sentence.chunk_id = sentence.chunk_id or source.chunk_id
        passage = next((i for i, p in enumerate(passages) if p.chunk_id == source.chunk_id), len(passages))
        agreeing = sum(fold(text[g.start : g.end]) == fold(span) for g in ranked for text, _ in [windows[g.text_index]])
        evidence = Evidence(
            question=question,
            span=span,
            sentence=sentence.text,
            window=text,
            span_entities=[
                e.label for e in (sentence.parsed.entities if sentence.parsed else ()) if _overlaps(e, start, end)
            ],
            margin=best.margin,
            null_score=best.null_score,
            runner_up=ranked[1].margin if len(ranked) > 1 else best.margin - 10.0,
            agreeing=agreeing,
            dense=source.dense,
            coverage=source.coverage,
            sentence_rank=best.text_index,
            passage_score=passages[min(passage, len(passages) - 1)].score,
            passage_rank=passage,
        )
        return Reading(span, sentence, evidence)

    def _answer(self, question: str, passages: list[Passage], corpus: Corpus, kind: str) -> Draft:
        reading = self.read(question, passages, corpus)
        if reading is None:
            return abstention(corpus.documents, "nothing to read")
        p = self.answerability.probability(reading.evidence)
        if p < self.answerability.threshold:
            log.info(
                "abstain: %r in %r has p=%.2f < %.2f",
                reading.span,
                reading.sentence.text,
                p,
                self.answerability.threshold,
            )
            return abstention(corpus.documents, f"p={p:.2f}", confidence=p, evidence=reading.evidence)
        log.info("answer %r (p=%.2f) from %r", reading.span, p, reading.sentence.text)
        if kind in SENTENCE_KINDS or not reading.span:
            return _sentence_draft("", reading, p)
        return Draft(
            f"{_reply(question, reading.span)} [1].",
            False,
            [reading.sentence],
            phrase=reading.span,
            short_answer=reading.span,
            confidence=p,
            evidence=reading.evidence,
        )

    def _yes_no(self, question: str, passages: list[Passage], corpus: Corpus) -> Draft | None:
        """ "did sakamoto win gold" → the reader reads "what did sakamoto win"; "silver" → "No — silver [1].". None
        when the question names nothing to compare with (then the sentence is the answer)."""
        doc = parse(question)
        slot = next(
            (t for t in reversed(doc) if t.dep_ in YES_NO_OPEN and t.pos_ in {"NOUN", "PROPN", "NUM", "ADJ"}), None
        )
        if slot is None:
            return None
        dropped = {t.i for t in slot.subtree}
        if slot.dep_ == "pobj":
            dropped.add(slot.head.i)
        rest = "".join(t.text_with_ws for t in doc if t.i not in dropped).strip(" ?")
        open_question = f"what {rest[:1].lower()}{rest[1:]}?"
        reading = self.read(open_question, passages, corpus)
        if reading is None or not reading.span:
            return None
        p = self.answerability.probability(reading.evidence)
        if p < self.answerability.threshold:
            return None
        named = {term(w) for w in terms_of(" ".join(doc[i].text for i in sorted(dropped)))}
        found = terms_of(reading.span)
        yes = (
            bool(named)
            and named <= {term(w) for w in found} | terms_of(reading.sentence.text)
            and bool(named & {term(w) for w in found})
        )
        log.info("yes/no: asked %r, found %r (p=%.2f), named %s", open_question, reading.span, p, named)
        return _sentence_draft("Yes — " if yes else "No — ", reading, p)

    def _ranked(self, question: str, passages: list[Passage], corpus: Corpus) -> list[Sentence]:
        """The passages' sentences, best first: half meaning (cosine), half the IDF-weighted share of the question's
        terms they hold (with the sentence before, where "she" and "it" are named)."""
        seen, sentences = set(), []
        for p in passages:
            for s in corpus.sentences_in(p):
                if (s.path, s.index) not in seen:  # overlapping chunks repeat sentences
                    seen.add((s.path, s.index))
                    sentences.append(s)
        if not sentences:
            return []
        qvec = self.vectors.vector(question)
        asked = question_terms(question)
        weights = {t: corpus.idf(t) for t in asked}
        total = sum(weights.values()) or 1.0
        for s, vec in zip(sentences, self.vectors.vectors([s.text for s in sentences]), strict=True):
            s.dense = float(np.dot(vec, qvec))
            held = terms_of(corpus.window(s))
            s.coverage = sum(w for t, w in weights.items() if t in held) / total
            s.score = 0.5 * s.dense + 0.5 * s.coverage
        return sorted(sentences, key=lambda s: s.score, reverse=True)


def _reply(question: str, span: str) -> str:
    """The span as a reply: "Sakamoto is 25" for "how old is Sakamoto", "The winner was Alysa Liu" for "who was the
    winner" (a question about what someone or something is), else the span alone ("Alysa Liu")."""
    doc = parse(question)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    named_parts = [c for c in root.children if c.dep_ in {"nsubj", "attr", "acomp"}] if root is not None else []
    subject = next((c for c in named_parts if not any(t.lower_ in WH_WORDS for t in c.subtree)), None)
    if root is None or root.lemma_ != "be" or subject is None or len(named_parts) < 2:
        return _capitalize(span)
    named = "".join(t.text_with_ws for t in subject.subtree).strip()
    return f"{_capitalize(named)} {root.text.lower()} {span}"


def _window(corpus: Corpus, s: Sentence) -> tuple[str, int]:
    """The sentence with the one before and the one after, as the document writes them, and where it starts."""
    sents = corpus.sentences[s.path]
    first, last = sents[max(0, s.index - 1)], sents[min(len(sents) - 1, s.index + 1)]
    return corpus.texts[s.path][first.span.start : last.span.end], first.span.start


def _overlaps(entity, start: int, end: int) -> bool:
    return entity.start < end and start < entity.end


def abstention(documents: int, reason: str, confidence: float | None = None, evidence: Evidence | None = None) -> Draft:
    """ "The article doesn't say." (or "The documents don't say." when `documents` > 1), with why, for the log."""
    subject = "article doesn't" if documents <= 1 else "documents don't"
    return Draft(f"The {subject} say.", True, [], reason=reason, confidence=confidence, evidence=evidence)


def _capitalize(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _end(text: str) -> str:
    return text if text[-1:] in ".!?”’\"'" else text + "."


def _sentence_draft(lead: str, reading: Reading, probability: float) -> Draft:
    """A reply that is the span's whole sentence (after `lead`, e.g. "Yes — "), cited."""
    return Draft(
        f"{lead}{_end(reading.sentence.text)} [1]",
        False,
        [reading.sentence],
        phrase=reading.span,
        confidence=probability,
        evidence=reading.evidence,
    )
