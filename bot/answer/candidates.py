"""What could be the answer: the spans of a sentence that are of a given answer type (a person's name, a
number with its unit, a date, a team, a placing…). The answerer then decides which of them answers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.answer.language import (
    COUNTRIES,
    DEMONYM_NOUNS,
    DEMONYMS,
    MONTHS,
    NUMBER_WORDS,
    ORDINALS,
    ORG_WORDS,
    STOPWORDS,
    WEEKDAYS,
    name_groups,
)
from bot.answer.question import AnswerType
from bot.types import Span

if TYPE_CHECKING:
    from bot.answer.linking import Lexicon


def person_names(text: str, names: Lexicon) -> list[Span]:
    """The people the documents name, where `text` names them (spaCy's PERSON entities, decided over all mentions)."""
    return names.people_in(text)


TEAM_AFTER = re.compile(r"\s+(?:team|squad|club|outfit|team-?mates?|teammates?)\b", re.IGNORECASE)


def _orgs(text: str, names: Lexicon) -> list[Span]:
    """Teams, clubs, outlets: names with an organization word ("Team USA"), in capitals ("NBC"), before "team"
    ("his Nordlys Cycling team-mates"), one hyphenated name ("Cordillera-Ruta"), a website ("Olympics.com")."""
    sites = [Span(m.group(), m.start(), m.end()) for m in WEBSITE.finditer(text)]
    return sites + [
        g
        for g in name_groups(text, names.proper)
        if any(p.lower() in ORG_WORDS for p in g.text.split())
        or re.fullmatch(r"[A-Z]{2,}", g.text)
        or TEAM_AFTER.match(text, g.end)
        or (" " not in g.text and re.search(r"\w-\w", g.text))
        if not any(s.start <= g.start < s.end for s in sites)
    ]


def _nationalities(text: str, names: Lexicon) -> list[Span]:
    """Countries and nationality words: "Japan's Kaori Sakamoto", "American Alysa Liu"."""
    out = [g for g in name_groups(text, names.proper) if g.text.lower() in COUNTRIES or g.text.lower() in DEMONYMS]
    for g in name_groups(text, names.proper):
        first = g.text.split()[0]
        if " " in g.text and first.lower() in DEMONYMS:
            out.append(Span(first, g.start, g.start + len(first)))
    return dedupe(out)


PLACE_AFTER = re.compile(
    r"\b(?:in|at|on|near|from|to|into|outside)\s+((?:the\s+)?[A-ZÀ-Þ][\w'-]*(?:\s+(?:(?:de|da|do|dos|das|del|la|le|of|the|y|von|van)\s+)?[A-ZÀ-Þ][\w'-]*)*)"
)


def _locations(text: str, names: Lexicon) -> list[Span]:
    """Names after a place preposition: "in Porto", "on Avenida dos Aliados"."""
    out = []
    for m in PLACE_AFTER.finditer(text):
        g = re.sub(r"^the\s+", "", m.group(1))
        if g.split()[0].lower() not in WEEKDAYS | MONTHS | STOPWORDS and g.split()[0].lower() in names.proper:
            start = m.end(1) - len(g)
            out.append(Span(g, start, start + len(g)))
    return out


def _places(text: str, names: Lexicon) -> list[Span]:
    """Locations, countries, and where things are published: "under a TikTok video", "(via Olympics.com)"."""
    online = [g for g in name_groups(text, names.proper) if g.text.lower() in PLATFORMS] + [
        Span(m.group(), m.start(), m.end()) for m in WEBSITE.finditer(text)
    ]
    return dedupe(_locations(text, names) + _nationalities(text, names) + online)


PLATFORMS = {"tiktok", "instagram", "twitter", "youtube", "facebook", "snapchat", "threads", "weibo", "reddit"}
WEBSITE = re.compile(r"\b[\w-]+\.(?:com|org|net|tv|co\.uk|fr|de|jp|es|it)\b")


NUMBER = r"(?:\d+(?:[.,:]\d+)*|" + "|".join(NUMBER_WORDS) + r")"


def _numbers(text: str, names: Lexicon) -> list[Span]:
    """A number with the unit after it: "1.91 points", "2 hours, 8 minutes and 41 seconds", "$50,000"."""
    out = []
    unit = r"(?:\s*(?:%|°C|°F|[a-z]+(?:-[a-z]+)*)(?:\s+(?:Celsius|Fahrenheit))?)?"
    clock = r"(?:hours?|minutes?|seconds?)"  # "2 hours, 8 minutes and 41 seconds" is one quantity
    compound = rf"\b{NUMBER}\s+{clock}(?:(?:,|\s+and)?\s+{NUMBER}\s+{clock}\b)+"
    pattern = rf"{compound}|[$€£]?\b{NUMBER}\b{unit}"
    for m in re.finditer(pattern, text, re.IGNORECASE):
        span = m.group().strip()
        last = span.split()[-1].lower() if span.split() else ""
        if last in STOPWORDS:  # "two of" → "two"
            span = span.rsplit(None, 1)[0]
        if re.match(r"-year-old", text[m.start() + len(span) :]):
            continue  # an age is no score or count
        if span.lower() in {"a", "one"}:
            continue
        out.append(Span(span, m.start(), m.start() + len(span)))
    return out


def _ages(text: str, names: Lexicon) -> list[Span]:
    pattern = r"\b\d{1,3}-year-old\b|\baged \d{1,3}\b|(?<=, )\d{1,3}(?=, )|\b\d{1,3} years old\b"
    return [Span(m.group(), m.start(), m.end()) for m in re.finditer(pattern, text)]


def _times(text: str, names: Lexicon) -> list[Span]:
    days = "|".join(WEEKDAYS | MONTHS)
    weekdays, months = "|".join(WEEKDAYS), "|".join(MONTHS)
    pattern = (
        rf"\b(?:(?:{weekdays}),?\s+)?\d{{1,2}}\s+(?:{months})(?:\s+\d{{4}})?\b|\b(?:(?:{days})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?)\b|\b(?:19|20)\d{{2}}\b|"
        rf"\b{NUMBER}\s+(?:days|weeks|months|years|hours)\s+(?:ago|earlier|later)\b|"
        r"\b(?:yesterday|today|tonight|tomorrow|last (?:night|week|year))\b"
    )
    return [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(pattern, text, re.IGNORECASE)
        if m.group().lower() not in {"may", "march"} or m.group()[0].isupper()
    ]


def _medals(text: str, names: Lexicon) -> list[Span]:
    return [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(r"\b(?:gold|silver|bronze)(?: medal)?\b", text, re.IGNORECASE)
    ]


def _placings(text: str, names: Lexicon) -> list[Span]:
    """Ordinals ("fifth", "2nd") and medals, which are placings too ("ended up with silver")."""
    ordinal = "|".join(ORDINALS - {"last"})
    ordinals = [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(rf"\b(?:{ordinal}|\d+(?:st|nd|rd|th))\b", text, re.IGNORECASE)
        if not re.search(rf"\b{NUMBER}\s+$", text[: m.start()], re.IGNORECASE)  # "one second behind" is a time
    ]
    return sorted(ordinals + _medals(text, names), key=lambda c: c.start)


QUOTED_NAME = re.compile(r"[‘“'\"]((?:[A-ZÀ-Þ][\w'’-]*)(?:\s+[A-ZÀ-Þ][\w'’-]*){0,3})[’”'\"]")


def _nicknames(text: str, names: Lexicon) -> list[Span]:
    """What something is called: a capitalized name in quotation marks ("the American ‘Blade Angels’")."""
    return [Span(m.group(1), m.start(1), m.end(1)) for m in QUOTED_NAME.finditer(text)]


CANDIDATE_FINDERS = {
    AnswerType.NAME: _nicknames,
    AnswerType.PERSON: person_names,
    AnswerType.ORG: _orgs,
    AnswerType.PLACE: _places,
    AnswerType.NATIONALITY: _nationalities,
    AnswerType.NUMBER: _numbers,
    AnswerType.AGE: _ages,
    AnswerType.TIME: _times,
    AnswerType.MEDAL: _medals,
    AnswerType.PLACING: _placings,
}
PHRASE_TYPES = set(CANDIDATE_FINDERS)


def country_of(word: str) -> str:
    w = word.lower()
    return w if w in COUNTRIES else DEMONYMS.get(w) or DEMONYM_NOUNS.get(w.removesuffix("s")) or ""


def dedupe(spans: list[Span]) -> list[Span]:
    seen, out = set(), []
    for s in spans:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out
