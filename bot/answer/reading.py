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
from functools import partial

import numpy as np
from langchain_core.documents import Document

from bot.answer.answerability import Answerability, Evidence, asked_kind, question_terms
from bot.answer.corpus import Corpus, Knowledge
from bot.answer.language import terms_of
from bot.answer.linking import fold
from bot.answer.reply import (
    Quotation,
    capitalized,
    end_with_stop,
    quotation_around,
    quotation_reply,
    without_connective,
    yes_no_reply,
)
from bot.reader.model import SpanReader
from bot.types import Draft, Passage, Sentence
from bot.vectors import CachedEmbeddings

log = logging.getLogger(__name__)

SENTENCE_KINDS = {"why", "how", "describe"}  # answered with the sentence the span sits in, unless the span is a phrase
YES = 0.5  # the yes/no head's probability from which the reply opens with "Yes"


@dataclass
class Reading:
    """What the reader found for one question: the best span, where it sits, and the evidence for judging it."""

    span: str
    sentence: Sentence
    evidence: Evidence
    yes: float = 0.5  # the yes/no head's probability of "yes" in the span's window
    quotation: Quotation | None = None  # the quotation the span sits in, if any
    start: int = 0  # the span's offsets in its document
    end: int = 0


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

    def __call__(self, question: str, passages: list[Passage], previous: str = "") -> Draft:
        """`previous`: the conversation's last turn (question and answer), read before the question."""
        corpus = self.corpus_for(passages)
        reading = self.read(question, passages, corpus, previous)
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
        log.info("answer %r (p=%.2f, yes %.2f) from %r", reading.span, p, reading.yes, reading.sentence.text)
        return self._reply(question, reading, corpus, p)

    def read(self, question: str, passages: list[Passage], corpus: Corpus, previous: str = "") -> Reading | None:
        """The reader's best span among the best few sentences of the passages, with the evidence to judge it."""
        sentences = self._ranked(question, passages, corpus)[: self.windows]
        if not sentences:
            return None
        windows = [_window(corpus, s) for s in sentences]
        guesses = self.reader.read(question, [text for text, _ in windows], previous)
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
        quotation = quotation_around(corpus.texts[path], start, end, corpus.sentences[path])
        return Reading(span, sentence, evidence, best.yes, quotation, start, end)

    def _reply(self, question: str, reading: Reading, corpus: Corpus, p: float) -> Draft:
        """The reply's shape by what is asked (bot.answer.reply words it)."""
        kind = asked_kind(question)
        draft = partial(
            Draft,
            abstained=False,
            quotes=[reading.sentence],
            phrase=reading.span,
            confidence=p,
            evidence=reading.evidence,
        )
        if kind == "yes-no":
            return draft(f"{end_with_stop(yes_no_reply(reading.yes >= YES, reading.sentence))} [1]")
        quotation = reading.quotation
        if quotation is not None and _cuts(reading, quotation):
            sentences = [
                s
                for s in corpus.sentences[reading.sentence.path]
                if s.span.start < quotation.end and quotation.start < s.span.end
            ]
            quoted = corpus.texts[reading.sentence.path][quotation.start : quotation.end]
            quotes = [_with_chunk(s, reading.sentence.chunk_id) for s in sentences] or [reading.sentence]
            markers = ", ".join(str(n) for n in range(1, len(quotes) + 1))
            return replace(
                draft(f"{end_with_stop(quotation_reply(quoted, quotation.speaker))} [{markers}]"), quotes=quotes
            )
        if (kind in SENTENCE_KINDS and (kind == "describe" or len(reading.span.split()) < 2)) or not reading.span:
            return draft(f"{end_with_stop(without_connective(reading.sentence))} [1]")
        return draft(f"{capitalized(reading.span)} [1].", short_answer=reading.span)

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


def _cuts(reading: Reading, quotation: Quotation) -> bool:
    """Whether replying with the span alone would cut the quotation it sits in: the span is a long part of it (a
    clause, not a name or number quoted in passing), or runs across one of its marks."""
    crosses = reading.start < quotation.start or reading.end > quotation.end
    return crosses or len(reading.span.split()) >= 4


def _with_chunk(sentence: Sentence, chunk_id: str) -> Sentence:
    return replace(sentence, chunk_id=sentence.chunk_id or chunk_id)
