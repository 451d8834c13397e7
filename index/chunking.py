"""Split documents into sentence-aligned chunks that remember where they start in their source text."""

import hashlib

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

# Paragraphs first, then line breaks, then sentence ends (the lookbehind keeps the punctuation in the
# sentence), then words: a chunk only breaks mid-sentence when one sentence is longer than a chunk.
SENTENCE_SEPARATORS = [r"\n\n", r"\n", r"(?<=[.!?…])\s+", r"(?<=[.!?…][’”'\"])\s+", r"\s+", ""]


def chunk_id(doc_path: str, text: str) -> str:
    """A content hash, so unchanged chunks keep their id and are never embedded twice."""
    return hashlib.sha256(f"{doc_path}\x00{text}".encode()).hexdigest()[:32]


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
        if meta["chunk_id"] not in seen:  # a repeated passage in one document is stored once
            seen.add(meta["chunk_id"])
            chunks.append(chunk)
    return chunks
