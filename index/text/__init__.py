"""The text layer: one spaCy pipeline that parses documents (once, at indexing) and questions (at ask time).

Everything that needs sentences, lemmas, entities or a parse reads them from here, so indexing and answering
cannot disagree about where a sentence ends or what a name is."""

from index.text.parse import (
    ParsedSentence,
    Token,
    parse_document,
    parse_documents,
    sentences_from_json,
    sentences_to_json,
)
from index.text.pipeline import PARSE_VERSION, PIPELINE, nlp, parse

__all__ = [
    "PARSE_VERSION",
    "PIPELINE",
    "ParsedSentence",
    "Token",
    "nlp",
    "parse",
    "parse_document",
    "parse_documents",
    "sentences_from_json",
    "sentences_to_json",
]
