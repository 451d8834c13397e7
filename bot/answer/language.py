"""Small, general English helpers the extractive answerer reasons with: sentences, terms, names, numbers."""

import re
from functools import lru_cache

import simplemma
import Stemmer

from bot.types import Span

_stemmer = Stemmer.Stemmer("english")

WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_]))*|\d+(?:[.,:]\d+)*")  # letters of any alphabet: "Arbeláez"
# A sentence ends at . ! ? … (optionally closed by a quote mark) before whitespace, or at a line break.

STOPWORDS = set(
    [
        # words about the document itself, not the event: "What nickname does the article use…"
        "article",
        "story",
        "report",
        "piece",
        "text",
        "use",
        "uses",
        "mention",
        "mentions",
        "mentioned",
        "according",
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "about",
        "as",
        "into",
        "onto",
        "over",
        "under",
        "after",
        "before",
        "between",
        "through",
        "during",
        "without",
        "within",
        "upon",
        "against",
        "among",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "not",
        "no",
        "nor",
        "yes",
        "also",
        "just",
        "only",
        "very",
        "too",
        "any",
        "some",
        "all",
        "each",
        "every",
        "both",
        "either",
        "neither",
        "much",
        "many",
        "more",
        "most",
        "such",
        "own",
        "same",
        "other",
        "another",
        "again",
        "ever",
        "even",
        "still",
        "yet",
        "s",
        "t",
        "don’t",
        "don't",
        "article",
        "text",
        "document",
        "documents",
        "tell",
        "say",
        "said",
        "says",
        "know",
        "knows",
        "please",
        "according",
        "mention",
        "mentioned",
        "get",
        "gets",
        "got",
        "getting",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "it's",
        "that's",
        "he's",
        "she's",
        "they're",
        "we're",
        "you're",
    ]
)
WH_WORDS = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how"}

NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "dozen": 12,
}
ORDINAL_NUMBERS = {
    w: n
    for n, w in enumerate(
        [
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
        ],
        start=1,
    )
}
ORDINALS = set(ORDINAL_NUMBERS) | {"last"}
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
MONTHS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
}
RELATIVE_TIMES = {
    "today",
    "yesterday",
    "tomorrow",
    "tonight",
    "ago",
    "earlier",
    "later",
    "morning",
    "evening",
    "afternoon",
    "night",
    "week",
    "weekend",
    "year",
    "years",
    "days",
    "day",
    "hours",
    "minutes",
}
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
# Nouns for a country's people, where they differ from the adjective: "the Briton", "the Spaniard".
DEMONYM_NOUNS = {
    "briton": "britain",
    "brit": "britain",
    "spaniard": "spain",
    "dane": "denmark",
    "swede": "sweden",
    "finn": "finland",
    "pole": "poland",
    "scot": "scotland",
    "dutchman": "netherlands",
    "frenchman": "france",
    "frenchwoman": "france",
    "englishman": "england",
    "englishwoman": "england",
    "irishman": "ireland",
    "kiwi": "new zealand",
    "aussie": "australia",
}
ORG_WORDS = {
    "team",
    "club",
    "committee",
    "federation",
    "association",
    "union",
    "university",
    "council",
    "league",
    "olympics",
    "games",
    "championships",
    "cup",
    "news",
    "times",
    "ministry",
    "party",
    "inc",
    "ltd",
    "corp",
    "company",
    "group",
    "marathon",
    "tiktok",
    "instagram",
    "twitter",
    "youtube",
}
TITLE_WORDS = {"mr", "mrs", "ms", "dr", "coach", "president", "director", "captain", "minister", "judge"}


# Past tenses the lemmatizer leaves alone because they are also other words ("won" the currency).
IRREGULAR = {"won": "win", "felt": "feel", "thought": "think", "broke": "break", "wept": "weep", "fought": "fight"}


def words(text: str) -> list[tuple[str, int]]:
    """Word tokens with their character offsets."""
    return [(m.group(), m.start()) for m in WORD.finditer(text)]


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


def name_groups(text: str, proper_nouns: set[str]) -> list[Span]:
    """Runs of capitalized words that are names (per the corpus's own capitalization), e.g. "Alysa Liu",
    "Cordillera-Ruta", "Col de Sarrat"."""
    groups: list[Span] = []
    current: list[tuple[str, int]] = []
    tokens = words(text) + [("", len(text))]
    for i, (w, pos) in enumerate(tokens):
        if current and text[current[-1][1] + len(current[-1][0]) : pos].strip() not in ("", "-"):
            _close(text, current, groups)  # punctuation between two words ends a name: "Afterwards, Glenn"
        base = re.sub(r"['’]s$", "", w)
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if current and w in NAME_PARTICLES and nxt[:1].isupper() and nxt.lower() in proper_nouns:
            current.append((w, pos))  # "Col de Sarrat", "Tour des Cimes"
            continue
        if base and base[0].isupper() and base.lower() in proper_nouns:
            current.append((base, pos))
            if base == w:
                continue
            # a possessive ends the name: "Japan’s Kaori Sakamoto" is two names
        _close(text, current, groups)
    return groups


NAME_PARTICLES = {
    "de",
    "des",
    "du",
    "da",
    "das",
    "do",
    "dos",
    "del",
    "della",
    "di",
    "van",
    "von",
    "der",
    "den",
    "la",
    "le",
}


def _close(text: str, current: list[tuple[str, int]], groups: list[Span]) -> None:
    if current:
        start, last = current[0][1], current[-1]
        groups.append(Span(text[start : last[1] + len(last[0])], start, last[1] + len(last[0])))
        current.clear()
