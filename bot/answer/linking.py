"""Questions as people type them: "who's kaori sakamotto" → "Who is Kaori Sakamoto?".

The documents' own names (spaCy's entities, stored at indexing) and words are the dictionary. A question's words
and word groups are matched against it case-insensitively, without accents and with typo tolerance (rapidfuzz),
and written back as the documents write them; contractions are expanded. The answerer downstream then sees a
question in the documents' spelling and casing, whatever the user typed."""

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from rapidfuzz import fuzz, process
from spacy.lang.en.stop_words import STOP_WORDS

from index.text import ParsedSentence, nlp

log = logging.getLogger(__name__)

NAME_MIN_SCORE = 85  # rapidfuzz ratio for a typed name: "glen" ~ "Glenn" (89), "sakamotto" ~ "Sakamoto" (94)
WORD_MIN_SCORE = 88  # for other words, stricter: "olympcs" ~ "Olympics" (93), not "retiring" ~ "retire" (86)
MIN_FUZZY_CHARS = 4  # shorter words must match exactly (after case and accents)
MAX_NAME_WORDS = 4
# Contractions a chat question uses; the pipeline tokenizes them but the answerer reads whole words.
CONTRACTIONS = [
    (re.compile(r"\b(who|what|where|when|why|how|which|that|there|it|he|she)(?:'s|’s|s)\b(?=\s|$|\?)", re.I), r"\1 is"),
    (re.compile(r"\b(who|what|where|when|why|how)(?:'d|’d)\b", re.I), r"\1 did"),
    (re.compile(r"\b(who|what|where|when|why|how)(?:'re|’re)\b", re.I), r"\1 are"),
]
# The plain forms the contraction pattern above would otherwise take for "what's" without an apostrophe.
NOT_CONTRACTED = {"its", "hes", "shes", "thats", "theres", "whos", "whats", "hows", "wheres", "whens", "whys"}
QUESTION_START = {
    "who",
    "whom",
    "whose",
    "what",
    "which",
    "when",
    "where",
    "why",
    "how",
    "is",
    "was",
    "are",
    "were",
    "did",
    "does",
    "do",
    "has",
    "have",
    "had",
    "can",
    "could",
    "will",
    "would",
    "should",
}


def fold(text: str) -> str:
    """Lowercase, accents and possessive dropped, curly apostrophes straightened: the form names are compared in."""
    text = unicodedata.normalize("NFKD", text.replace("’", "'")).encode("ascii", "ignore").decode()
    return re.sub(r"'s?$", "", text.lower().strip())


class Lexicon:
    """The names and words of the indexed documents, each in the spelling and case the documents use."""

    def __init__(self, sentences: Iterable[tuple[str, ParsedSentence]]):
        names: dict[str, Counter[str]] = {}
        words: dict[str, Counter[str]] = {}
        for text, parsed in sentences:
            for e in parsed.entities:
                if e.label in {"PERSON", "NORP", "GPE", "ORG", "EVENT", "FAC", "LOC", "WORK_OF_ART", "PRODUCT"}:
                    surface = re.sub(r"['’]s$", "", text[e.start : e.end]).strip()
                    names.setdefault(fold(surface), Counter())[surface] += 1
                    for part in surface.split() if e.label == "PERSON" else []:  # "Kaori", "Sakamoto" too
                        if part[:1].isupper() and fold(part) not in STOP_WORDS:
                            names.setdefault(fold(part), Counter())[part] += 1
            for n, t in enumerate(parsed.tokens):
                word = text[t.start : t.end]
                if word.isalpha():
                    # a sentence's first word is capitalized whatever it is: count it lowercased
                    words.setdefault(fold(word), Counter())[word if n else word.lower()] += 1
        self.names = {k: c.most_common(1)[0][0] for k, c in names.items() if k}
        self.words = {k: c.most_common(1)[0][0] for k, c in words.items() if k}
        self._long_names = [k for k in self.names if len(k) >= MIN_FUZZY_CHARS]
        self._long_words = [k for k in self.words if len(k) >= MIN_FUZZY_CHARS]

    def link(self, question: str) -> str:
        """The question with its names and words spelled as the documents spell them."""
        text = expand_contractions(question.strip())
        tokens = [t for t in nlp().tokenizer(text)]
        out, i = [], 0
        while i < len(tokens):
            replaced = self._name_at(tokens, i)
            if replaced:
                surface, used = replaced
                end = tokens[i + used - 1]
                out.append((tokens[i].idx, end.idx + len(end.text), surface))
                i += used
                continue
            word = self._word(tokens[i].text)
            if word:
                out.append((tokens[i].idx, tokens[i].idx + len(tokens[i].text), word))
            i += 1
        for start, end, surface in reversed(out):
            text = text[:start] + surface + text[end:]
        text = text[:1].upper() + text[1:]
        first = text.split(None, 1)[0].lower() if text.split() else ""
        if first in QUESTION_START and text[-1:] not in "?.!":
            text += "?"
        if text != question:
            log.info("question read as %r", text)
        return text

    def _name_at(self, tokens, i: int) -> tuple[str, int] | None:
        """The longest run of words from `i` that names something in the documents: (its surface, words used)."""
        for n in range(min(MAX_NAME_WORDS, len(tokens) - i), 0, -1):
            run = tokens[i : i + n]
            if not all(t.is_alpha or t.text in {"-", "'s", "’s"} for t in run) or run[-1].text in {"-", "'s", "’s"}:
                continue
            if all(t.lower_ in STOP_WORDS for t in run):
                continue
            typed = " ".join(t.text for t in run)
            key = fold(typed)
            surface = self.names.get(key)
            if surface is None and len(key) >= MIN_FUZZY_CHARS:
                best = process.extractOne(key, self._long_names, scorer=fuzz.ratio, score_cutoff=NAME_MIN_SCORE)
                # a fuzzy match must span as many words as the name: "de la fuenta" ~ "de la Fuente"
                if best and len(best[0].split()) == n:
                    surface = self.names[best[0]]
            if surface and surface != typed:
                return surface, n
            if surface:
                return None  # already as the documents write it
        return None

    def _word(self, word: str) -> str | None:
        """A typo of a word the documents use ("olympcs"), or its capitalized form ("tiktok" → "TikTok")."""
        if not word.isalpha() or word.lower() in STOP_WORDS:
            return None
        key = fold(word)
        known = self.words.get(key)
        if known:
            return known if known[:1].isupper() and known != word else None
        if len(key) < MIN_FUZZY_CHARS + 1:
            return None
        best = process.extractOne(key, self._long_words, scorer=fuzz.ratio, score_cutoff=WORD_MIN_SCORE)
        return self.words[best[0]] if best else None


def expand_contractions(text: str) -> str:
    """ "who's" → "who is", "how'd" → "how did", "whats" → "what is"."""
    for pattern, replacement in CONTRACTIONS:
        text = pattern.sub(lambda m, r=replacement: m.expand(r) if _contracted(m) else m.group(), text)
    return text


def _contracted(m: re.Match) -> bool:
    word = m.group().lower().replace("’", "'")
    return "'" in word or word in NOT_CONTRACTED - {"its"}
