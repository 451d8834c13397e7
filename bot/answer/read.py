"""Read: the trained span reader over the sentences where the evidence is. The passages' sentences are ranked by
meaning (cosine to the question) and by coverage of the question's terms; the best few are read by the span reader,
each with its neighbours, in one batch. Out comes the best span with its character offsets in its document and the
evidence the decision to answer is judged from (bot.answer.decide)."""

from dataclasses import replace

import numpy as np

from bot.answer.corpus import Corpus
from bot.answer.linking import fold
from bot.answer.terms import terms_of
from bot.reader.model import SpanReader
from bot.types import Evidence, Passage, Question, Reading, Sentence
from bot.vectors import CachedEmbeddings


class SentenceReader:
    """The reader over the best `windows` sentences of the passages, each read with its neighbours."""

    def __init__(self, vectors: CachedEmbeddings, reader: SpanReader, windows: int = 4):
        self.vectors, self.reader, self.windows = vectors, reader, windows

    def __call__(
        self, question: Question, passages: list[Passage], corpus: Corpus, previous: str = ""
    ) -> Reading | None:
        """The reader's best span among the best few sentences of the passages, with the evidence to judge it."""
        sentences = self.ranked(question, passages, corpus)[: self.windows]
        if not sentences:
            return None
        windows = [_window(corpus, s) for s in sentences]
        guesses = self.reader.read(question.text, [text for text, _ in windows], previous)
        if not guesses:
            return None
        ranked = sorted(guesses, key=lambda g: g.margin, reverse=True)
        best = ranked[0]
        text, offset = windows[best.text_index]
        path = sentences[best.text_index].path
        start, end = whole_words(corpus.texts[path], offset + best.start, offset + best.end)
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
            question=question.text,
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
        return Reading(span, sentence, evidence, best.yes, start, end)

    def closest(self, question: Question, passages: list[Passage], corpus: Corpus, n: int) -> list[Sentence]:
        """The `n` sentences of the passages closest to the question (as `ranked` ranks them), in the documents'
        order: what a long answer quotes where nothing the LLM writes holds (bot.answer.overview)."""
        return sorted(self.ranked(question, passages, corpus)[:n], key=lambda s: (s.path, s.index))

    def ranked(self, question: Question, passages: list[Passage], corpus: Corpus) -> list[Sentence]:
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
        qvec = self.vectors.vector(question.text)
        weights = {t: corpus.idf(t) for t in question.terms}
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


def whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span grown to the words it cuts: the reader's tokens are word pieces, and a span may start or end inside
    a word ("ilver" of "silver")."""
    while 0 < start < len(text) and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    return start, end


def _overlaps(entity, start: int, end: int) -> bool:
    return entity.start < end and start < entity.end
