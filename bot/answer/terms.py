"""Small, general English helpers the answer step reasons with: sentences, terms, names, numbers."""

import re
from functools import lru_cache

import simplemma
import Stemmer

from bot.lang import vocabulary

STEMMER = Stemmer.Stemmer("english")  # the one English stemmer: terms here, BM25 in bot.answer.retrieve

WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_]))*|\d+(?:[.,:]\d+)*")  # letters of any alphabet: "Arbeláez"

# The words are data (bot/lang/): these names are the vocabulary's, for the modules that import them from here.
VOCABULARY = vocabulary()
# Stop words are spaCy's, less the words that carry meaning ("behind", "top", "last", numbers and ordinals), plus the
# words a question uses about the document itself and about speaking (bot/lang/en/stop_words.toml).
STOPWORDS = VOCABULARY.stop_words
WH_WORDS = VOCABULARY.wh_words
# Number and ordinal words are spaCy's (with values); weekdays and months the standard library's.
NUMBER_WORDS = VOCABULARY.number_words
ORDINAL_NUMBERS = VOCABULARY.ordinal_numbers
ORDINALS = VOCABULARY.ordinals
WEEKDAYS = VOCABULARY.weekdays
MONTHS = VOCABULARY.months
# Past tenses the lemmatizer leaves alone because they are also other words ("won" the currency).
IRREGULAR = VOCABULARY.irregular_past


@lru_cache(maxsize=8192)
def words(text: str) -> tuple[tuple[str, int], ...]:
    """Word tokens with their character offsets (cached: the reader asks it of the same sentences many times)."""
    return tuple((m.group(), m.start()) for m in WORD.finditer(text))


@lru_cache(maxsize=8192)
def terms_of(text: str) -> frozenset[str]:
    """The comparable forms (see `term`) of the words of a text."""
    return frozenset(term(w) for w, _ in words(text))


@lru_cache(maxsize=50_000)
def term(word: str) -> str:
    """The comparable form of a word: lower case, lemmatized (won → win), stemmed (skating → skate)."""
    return STEMMER.stemWord(lemma(without_possessive(word.lower().replace("’", "'"))))


def without_possessive(word: str) -> str:
    """ "Sakamoto's" → "Sakamoto", with either apostrophe."""
    for suffix in ("'s", "’s"):
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def lemma(word: str) -> str:
    """The dictionary form of a word: "shielded" → "shield", "won" → "win"."""
    w = word.lower().replace("’", "'")
    return IRREGULAR.get(w) or simplemma.lemmatize(w, lang="en").lower()


def content_terms(text: str) -> list[str]:
    """The terms of a text that carry meaning (no stop words), in order, without repeats."""
    seen: dict[str, None] = {}
    for w, _ in words(text):
        if w.lower().replace("’", "'") in STOPWORDS or w.lower() in WH_WORDS:
            continue
        seen.setdefault(term(w), None)
    return list(seen)
