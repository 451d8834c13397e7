"""What the answerer knows of the indexed documents: their sentences, which words are names, how rare each term is.
Rebuilt from the stored chunks, whose offsets place them in their document."""

import json
import math
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace

from langchain_core.documents import Document

from bot.answer.linking import Lexicon
from bot.answer.summary import Summary
from bot.answer.terms import term, words
from bot.types import Passage, Sentence, Span
from index.store import StoreUnavailableError
from index.text.sentences import ParsedSentence, sentences_from_json


def page_at(meta: dict, offset: int) -> int | None:
    """The page of a chunk's text at `offset` (a quote's place in the chunk), from what indexing kept of its pages
    (index.chunking.place_pages); None for a document without pages."""
    if "page" not in meta:
        return None
    return int(meta["page"]) + bisect_right(json.loads(meta.get("page_breaks") or "[]"), offset)


def section_at(meta: dict, offset: int) -> str | None:
    """The slide or heading of a chunk's text at `offset`, from what indexing kept of its sections
    (index.chunking.place_sections); None for a document without them or before its first."""
    section = meta.get("section")
    for start, label in json.loads(meta.get("section_breaks") or "[]"):
        if start <= offset:
            section = label
    return section


def stitch(pieces: list[tuple[int, str]], origin: int = 0) -> str:
    """The document text from offset `origin` rebuilt from chunks given as (start, text), sorted by start: their
    overlaps taken once, a gap between them (whitespace the splitter dropped) kept as line breaks."""
    parts: list[str] = []
    have = origin
    for start, text in pieces:
        if start > have:
            parts.append("\n" * (start - have))
        parts.append(text[max(0, have - start) :])
        have = max(have, start + len(text))
    return "".join(parts)


@dataclass
class Knowledge:
    """What is known of all the indexed documents together: their names and words, how rare each term is, example
    questions. Learnt once
    from every chunk (at indexing, see bot.learning) so that answering a question reads only the chunks around its
    passages."""

    lexicon: Lexicon
    df: Counter[str]
    n: int  # sentences in all
    sources: dict[str, tuple[str, str]]  # path -> (source, title)
    example_questions: list[str] = field(default_factory=list)
    # each document's chunks as (start, chunk id), by start: which chunks lie around a passage, found without asking
    # the store to filter its metadata (a scan: ~100 ms per question at 6,600 chunks)
    chunk_starts: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    summaries: dict[str, Summary] = field(default_factory=dict)  # path -> its key sentences (bot.answer.summary)


class Corpus:
    """What the answerer reads: the sentences of some stored chunks (every chunk, when learning; those around a
    question's passages, when answering), placed in their documents by the chunks' offsets, with what is known of
    all documents (`knowledge`, learnt from these chunks when not given)."""

    def __init__(self, chunks: list[Document], knowledge: Knowledge | None = None):
        pieces: dict[str, list[tuple[int, str]]] = {}
        self.sources: dict[str, str] = {}
        titles: dict[str, str] = {}
        for c in sorted(chunks, key=lambda c: (c.metadata["path"], int(c.metadata["start"]))):
            path = c.metadata["path"]
            self.sources[path] = c.metadata["source"]
            titles[path] = c.metadata.get("title") or c.metadata["source"]
            pieces.setdefault(path, []).append((int(c.metadata["start"]), c.page_content))
        self.texts = {path: stitch(parts) for path, parts in pieces.items()}
        parsed: dict[str, dict[int, ParsedSentence]] = {}
        for c in chunks:  # indexing stored each chunk's sentences; overlapping chunks repeat some
            if "sentences" not in c.metadata:
                raise StoreUnavailableError("the index was built by an older version: run `eventbot index`")
            for ps in sentences_from_json(c.metadata["sentences"]):
                parsed.setdefault(c.metadata["path"], {})[ps.start] = ps
        self.sentences = {
            path: [
                Sentence(path, self.sources[path], Span(text[ps.start : ps.end], ps.start, ps.end), i, parsed=ps)
                for i, ps in enumerate(sorted(parsed.get(path, {}).values(), key=lambda ps: ps.start))
            ]
            for path, text in self.texts.items()
        }
        self._starts = {path: [s.span.start for s in sents] for path, sents in self.sentences.items()}
        # cite each sentence by the chunk that holds it whole and starts first (whichever chunks were read), and
        # place it on its page (a PDF's: from what indexing kept of the chunk's pages)
        for c in sorted(chunks, key=lambda c: int(c.metadata["start"])):
            start = int(c.metadata["start"])
            for s in self._within(c.metadata["path"], start, len(c.page_content)):
                if not s.chunk_id:
                    s.chunk_id, s.page = c.metadata["chunk_id"], page_at(c.metadata, s.span.start - start)
                    s.section = section_at(c.metadata, s.span.start - start)
        if knowledge is None:
            knowledge = self._learn({path: (self.sources[path], titles[path]) for path in self.texts})
            for c in chunks:
                knowledge.chunk_starts.setdefault(c.metadata["path"], []).append(
                    (int(c.metadata["start"]), c.metadata["chunk_id"])
                )
            for starts in knowledge.chunk_starts.values():
                starts.sort()
        self.knowledge = knowledge
        self.lexicon = knowledge.lexicon
        self.df, self.n = knowledge.df, knowledge.n

    @property
    def documents(self) -> int:
        """How many documents are indexed (all of them, not only those read)."""
        return len(self.knowledge.sources)

    def _learn(self, sources: dict[str, tuple[str, str]]) -> Knowledge:
        """What these (all the) chunks tell of the documents together."""
        everything = [(self.texts[s.path], s.parsed) for sents in self.sentences.values() for s in sents]
        self.lexicon = Lexicon(everything)
        self._count_terms()
        return Knowledge(self.lexicon, self.df, self.n, sources)

    def _count_terms(self) -> None:
        """How many sentences hold each term (for its IDF), and how many sentences there are."""
        all_sentences = [s.text for sents in self.sentences.values() for s in sents]
        self.df = Counter(t for sent in all_sentences for t in {term(w) for w, _ in words(sent)})
        self.n = max(len(all_sentences), 1)

    def idf(self, t: str) -> float:
        return math.log(1 + self.n / (1 + self.df.get(t, 0)))

    def _within(self, path: str, start: int, length: int) -> list[Sentence]:
        """The sentences of a document lying wholly in start..start+length (found by bisection: documents can be
        long, and this runs for every chunk at start-up and every passage of every question)."""
        sents, starts = self.sentences.get(path, []), self._starts.get(path, [])
        found = sents[bisect_left(starts, start) : bisect_right(starts, start + length)]
        return [s for s in found if s.span.end <= start + length]

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        return [
            replace(s, chunk_id=passage.chunk_id) for s in self._within(passage.path, passage.start, len(passage.text))
        ]

    def window(self, s: Sentence) -> str:
        """The sentence (or a quote of sentences from it on) after the one before it, which often holds the subject
        of "she", "he", "it"."""
        before = self.sentences[s.path][s.index - 1].text + " " if s.index > 0 else ""
        return before + s.text
