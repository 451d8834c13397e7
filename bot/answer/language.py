"""Small, general English helpers the extractive answerer reasons with: sentences, terms, names, numbers."""

import calendar
import re
from functools import lru_cache

import simplemma
import Stemmer
from spacy.lang.en.lex_attrs import _num_words, _ordinal_words
from spacy.lang.en.stop_words import STOP_WORDS

_stemmer = Stemmer.Stemmer("english")

WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_]))*|\d+(?:[.,:]\d+)*")  # letters of any alphabet: "Arbeláez"
# A sentence ends at . ! ? … (optionally closed by a quote mark) before whitespace, or at a line break.

# Stop words are spaCy's, less the words that carry a result ("behind", "top", "last", numbers and ordinals) and
# plus the words a question uses about the document itself ("What nickname does the article use…") and about
# speaking (the quote checks read who speaks from the documents, not from these verbs).
KEEP_MEANING = {
    "behind",
    "top",
    "bottom",
    "front",
    "back",
    "last",
    "next",
    "former",
    "never",
    "off",
    "out",
    "up",
    "down",
    "due",
    "since",
    "because",
    "alone",
    "together",
    "full",
    "whole",
    "least",
    "less",
    "amount",
    "name",
    "call",
    "part",
    "side",
    "move",
    "give",
    "take",
    "make",
    "made",
    "keep",
    "show",
    "see",
    "put",
    "serious",
    "empty",
    "well",
    "become",
    "became",
    "before",
    "after",
    "again",
    "first",
    "without",
    "against",
    "between",
}
ABOUT_THE_DOCUMENT = {
    "article",
    "story",
    "report",
    "piece",
    "text",
    "document",
    "documents",
    "use",
    "uses",
    "mention",
    "mentions",
    "mentioned",
    "according",
    "said",
    "says",
    "tell",
    "know",
    "knows",
    "gets",
    "getting",
    "got",
    "having",
    "shall",
    "theirs",
    "yes",
    "s",
    "t",
    "don't",
    "don’t",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "it's",
    "he's",
    "she's",
    "that's",
    "they're",
    "we're",
    "you're",
}
WH_WORDS = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how"}

# Number and ordinal words are spaCy's; weekdays and months the standard library's.
_TENS = {
    w: 10 * n for n, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2)
}
NUMBER_WORDS = (
    {w: n for n, w in enumerate(_num_words[:20])}
    | {w: _TENS[w] for w in _num_words if w in _TENS}
    | {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12}
)
ORDINAL_NUMBERS = {w: n for n, w in enumerate(_ordinal_words[:20], start=1)}
ORDINALS = set(ORDINAL_NUMBERS) | {"last"}
WEEKDAYS = {d.lower() for d in calendar.day_name}
MONTHS = {m.lower() for m in calendar.month_name if m}
STOPWORDS = (set(STOP_WORDS) - KEEP_MEANING - set(NUMBER_WORDS) - set(ORDINAL_NUMBERS)) | ABOUT_THE_DOCUMENT
MEDALS = {"gold", "silver", "bronze"}
# Countries and the adjectives for them, enough to tell a place or nationality from a person's name.
COUNTRIES = {
    "america": "American",
    "usa": "American",
    "us": "American",
    "united states": "American",
    "japan": "Japanese",
    "china": "Chinese",
    "korea": "Korean",
    "south korea": "Korean",
    "canada": "Canadian",
    "russia": "Russian",
    "france": "French",
    "germany": "German",
    "italy": "Italian",
    "spain": "Spanish",
    "portugal": "Portuguese",
    "britain": "British",
    "great britain": "British",
    "england": "English",
    "scotland": "Scottish",
    "ireland": "Irish",
    "kenya": "Kenyan",
    "ethiopia": "Ethiopian",
    "uganda": "Ugandan",
    "morocco": "Moroccan",
    "australia": "Australian",
    "brazil": "Brazilian",
    "mexico": "Mexican",
    "india": "Indian",
    "norway": "Norwegian",
    "sweden": "Swedish",
    "finland": "Finnish",
    "netherlands": "Dutch",
    "belgium": "Belgian",
    "switzerland": "Swiss",
    "austria": "Austrian",
    "poland": "Polish",
    "ukraine": "Ukrainian",
    "georgia": "Georgian",
    "estonia": "Estonian",
    "argentina": "Argentinian",
    "chile": "Chilean",
    "nigeria": "Nigerian",
    "egypt": "Egyptian",
    "south africa": "South African",
    "greece": "Greek",
    "turkey": "Turkish",
    "israel": "Israeli",
    "new zealand": "New Zealander",
    "denmark": "Danish",
    "colombia": "Colombian",
    "venezuela": "Venezuelan",
    "ecuador": "Ecuadorian",
    "peru": "Peruvian",
    "slovenia": "Slovenian",
    "slovakia": "Slovak",
    "czech republic": "Czech",
    "croatia": "Croatian",
    "serbia": "Serbian",
    "hungary": "Hungarian",
    "romania": "Romanian",
    "bulgaria": "Bulgarian",
    "latvia": "Latvian",
    "lithuania": "Lithuanian",
    "luxembourg": "Luxembourgish",
    "eritrea": "Eritrean",
    "rwanda": "Rwandan",
    "tanzania": "Tanzanian",
    "jamaica": "Jamaican",
    "cuba": "Cuban",
    "iran": "Iranian",
    "thailand": "Thai",
    "vietnam": "Vietnamese",
    "philippines": "Filipino",
    "indonesia": "Indonesian",
    "taiwan": "Taiwanese",
    "kazakhstan": "Kazakh",
}
DEMONYMS = {v.lower(): k for k, v in COUNTRIES.items()}
# Past tenses the lemmatizer leaves alone because they are also other words ("won" the currency).
IRREGULAR = {"won": "win", "felt": "feel", "thought": "think", "broke": "break", "wept": "weep", "fought": "fight"}


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
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    return _stemmer.stemWord(lemma(w))


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


