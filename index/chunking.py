"""Split documents into sentence-aligned chunks that remember where they start in their source text."""

import bisect
import hashlib
import json
from collections.abc import Callable

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from index.text.pipeline import PARSE_VERSION, parse_documents
from index.text.sentences import ParsedSentence, sentences_to_json

# Paragraphs first, then line breaks, then sentence ends (the lookbehind keeps the punctuation in the
# sentence), then words: a chunk only breaks mid-sentence when one sentence is longer than a chunk.
SENTENCE_SEPARATORS = [r"\n\n", r"\n", r"(?<=[.!?…])\s+", r"(?<=[.!?…][’”'\"])\s+", r"\s+", ""]


def chunk_id(doc_path: str, text: str) -> str:
    """A content hash, so unchanged chunks keep their id and are never embedded twice (the parser's version is
    part of it: a new text layer re-parses and re-stores every chunk once)."""
    return hashlib.sha256(f"{PARSE_VERSION}\x00{doc_path}\x00{text}".encode()).hexdigest()[:32]


def split_documents(docs: list[Document], chunk_size: int, chunk_overlap: int) -> list[Document]:
    """Chunks carry `start` (character offset in their document) and a content-hash `chunk_id`."""
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        separators=SENTENCE_SEPARATORS,
        is_separator_regex=True,
        keep_separator="end",  # joins pieces with "", so chunks stay verbatim
        add_start_index=True,
    )
    chunks: list[Document] = []
    seen: set[str] = set()
    for chunk in splitter.split_documents(docs):
        meta = chunk.metadata
        meta["start"] = meta.pop("start_index")
        meta["chunk_id"] = chunk_id(meta["path"], chunk.page_content)
        if "page_starts" in meta:  # a PDF: the page the chunk starts on, and where in it later pages start
            place_pages(meta, meta.pop("page_starts"), len(chunk.page_content))
        if "section_starts" in meta:  # a slide or heading (index.convert): the same, by section
            place_sections(meta, meta.pop("section_starts"), len(chunk.page_content))
        if meta["chunk_id"] not in seen:  # a repeated passage in one document is stored once
            seen.add(meta["chunk_id"])
            chunks.append(chunk)
    return chunks


def place_pages(meta: dict, page_starts: list[int], length: int) -> None:
    """`page` (1-based) where the chunk starts and, when it runs on to later pages, `page_breaks`: the offsets in
    the chunk where they start (JSON: a store's metadata holds no lists). bot.answer.corpus.page_at reads it back."""
    start = int(meta["start"])
    meta["page"] = max(1, bisect.bisect_right(page_starts, start))
    breaks = [s - start for s in page_starts if start < s < start + length]
    if breaks:
        meta["page_breaks"] = json.dumps(breaks)


def place_sections(meta: dict, section_starts: list[tuple[int, str]], length: int) -> None:
    """`section` ("slide 3", or the heading the chunk's start is under; absent before the first) and, where later
    sections start in the chunk, `section_breaks`: [offset in the chunk, section] pairs (JSON).
    bot.answer.corpus.section_at reads it back."""
    start = int(meta["start"])
    before = [label for s, label in section_starts if s <= start]
    if before:
        meta["section"] = before[-1]
    breaks = [[s - start, label] for s, label in section_starts if start < s < start + length]
    if breaks:
        meta["section_breaks"] = json.dumps(breaks)


def attach_sentences(
    chunks: list[Document], documents: dict[str, str], parsed: Callable[[int], None] = lambda chunks: None
) -> None:
    """Parse the chunks' documents (spaCy, all through one batched pipe) and store, in each chunk's metadata, the
    parsed sentences that lie in it (a sentence longer than any chunk goes with the chunk where it starts). The
    answerer reads these instead of re-splitting or re-parsing documents. `parsed(n)` is told as each document
    is done, with its number of chunks (for a progress bar)."""
    by_path: dict[str, list[Document]] = {}
    for c in chunks:
        by_path.setdefault(c.metadata["path"], []).append(c)
    paths = list(by_path)
    for path, sentences in zip(paths, parse_documents([documents[p] for p in paths]), strict=True):
        doc_chunks = by_path[path]
        held: dict[str, list[ParsedSentence]] = {c.metadata["chunk_id"]: [] for c in doc_chunks}
        for sentence in sentences:
            whole = [c for c in doc_chunks if _start(c) <= sentence.start and sentence.end <= _end(c)]
            starts = whole or [c for c in doc_chunks if _start(c) <= sentence.start < _end(c)][:1]
            for c in starts:
                held[c.metadata["chunk_id"]].append(sentence)
        for c in doc_chunks:
            c.metadata["sentences"] = sentences_to_json(held[c.metadata["chunk_id"]])
        parsed(len(doc_chunks))


def _start(chunk: Document) -> int:
    return int(chunk.metadata["start"])


def _end(chunk: Document) -> int:
    return int(chunk.metadata["start"]) + len(chunk.page_content)
