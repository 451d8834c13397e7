"""The words the answerer must list, as data: general English in bot/lang/en/, words that only make sense for one
domain (sport results) in bot/lang/domains/, one TOML file per topic, loaded once into one `Vocabulary`.

Like spaCy's spacy/lang/en/{stop_words,lex_attrs,tokenizer_exceptions}.py, but data files; the modules take their
words from `vocabulary()`. Sets derived from the lists are built here: the stop words (spaCy's, adjusted), the number
and ordinal words (spaCy's, with values), weekdays and months (the standard library's), demonyms (the countries read
backwards). A file that does not hold exactly the lists expected, or a word that is not a clean lower-case word,
stops the loading with a `VocabularyError` naming it."""

import calendar
import string
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from spacy.lang.en.lex_attrs import _num_words, _ordinal_words
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.matcher import Matcher
from spacy.vocab import Vocab

LANG_DIR = Path(__file__).parent
ENGLISH_DIR = LANG_DIR / "en"
DOMAINS_DIR = LANG_DIR / "domains"
SPACY_NUMBERS = 20  # spaCy's number and ordinal words are taken by position up to "nineteen" and "twentieth"
PEOPLE_LISTS = ("nouns", "verbs", "object_verbs")


class VocabularyError(ValueError):
    """A vocabulary file is missing, unreadable, or holds something other than the lists expected."""


@dataclass(frozen=True)
class Vocabulary:
    # stop words (en/stop_words.toml): spaCy's as spaCy lists them, the changes, and the answerer's
    english_stop_words: frozenset[str]
    keep_meaning: frozenset[str]
    about_the_document: frozenset[str]
    stop_words: frozenset[str]
    # questions (en/questions.toml)
    wh_words: frozenset[str]
    question_auxiliaries: frozenset[str]
    time_nouns: frozenset[str]
    describe_openings: tuple[str, ...]
    describe_wh_words: frozenset[str]
    people_nouns: frozenset[str]
    wh_kinds: Mapping[str, str]  # wh-word → the kind of question it opens (itself when not listed)
    # follow-ups (en/follow_ups.toml): phrases matched word by word, in order
    follow_up_interjections: tuple[str, ...]
    follow_up_leads: tuple[str, ...]
    bare_why: tuple[str, ...]
    follow_up_auxiliaries: frozenset[str]
    topic_determiners: tuple[str, ...]
    articles: tuple[str, ...]
    # pronouns (en/pronouns.toml)
    person_pronouns: frozenset[str]
    thing_pronouns: frozenset[str]
    # numbers (en/numbers.toml with spaCy's lists) and the calendar
    number_words: Mapping[str, int]
    ordinal_numbers: Mapping[str, int]
    ordinals: frozenset[str]
    weekdays: frozenset[str]
    months: frozenset[str]
    month_abbreviations: Mapping[str, frozenset[str]]  # "november" → {"nov."}, as dates write them
    # contractions (en/contractions.toml): the words before "'s" (is), "'d" (did), "'re" (are), in order
    contracted_is: tuple[str, ...]
    contracted_did: tuple[str, ...]
    contracted_are: tuple[str, ...]
    contracted_without_apostrophe: frozenset[str]
    # people (en/people.toml and the domains' [people])
    person_nouns: frozenset[str]
    person_verbs: frozenset[str]
    person_object_verbs: frozenset[str]
    honorifics: frozenset[str]
    # verbs (en/irregular_verbs.toml): past tense → dictionary form
    irregular_past: Mapping[str, str]
    # countries (en/countries.toml): country → adjective as written, adjective (lower case) → country
    countries: Mapping[str, str]
    demonyms: Mapping[str, str]
    # spaCy's entity labels (en/entity_labels.toml)
    name_labels: frozenset[str]
    numeric_labels: frozenset[str]
    # the grounding guard (en/guard.toml)
    negations: frozenset[str]
    citation_labels: tuple[str, ...]
    answer_labels: frozenset[str]
    guard_patterns: Mapping[str, tuple[list[dict], ...]]  # spaCy Matcher patterns by name
    # the bot's own words (en/replies.toml): format strings by name, with the fields each must fill
    replies: Mapping[str, str]
    example_questions: Mapping[str, str]
    # the domains' closed classes by name ("medals"), and the domains loaded
    closed_classes: Mapping[str, frozenset[str]]
    domains: tuple[str, ...]


@cache
def vocabulary() -> Vocabulary:
    """The vocabulary of bot/lang/en/ and every file in bot/lang/domains/, loaded once per process."""
    return load_vocabulary(ENGLISH_DIR, DOMAINS_DIR)


# The English files, in the order load_vocabulary reads them, with the lists each must hold.
ENGLISH_FILES: dict[str, set[str]] = {
    "stop_words": {"keep_meaning", "about_the_document"},
    "questions": {
        "wh_words",
        "auxiliaries",
        "time_nouns",
        "describe_openings",
        "describe_wh_words",
        "wh_kinds",
        "people_nouns",
    },
    "follow_ups": {"interjections", "leads", "bare_why", "auxiliaries", "determiners", "articles"},
    "pronouns": {"person", "thing"},
    "numbers": {"ordinals", "values"},
    "contractions": {"is", "did", "are", "without_apostrophe"},
    "people": {*PEOPLE_LISTS, "honorifics"},
    "irregular_verbs": {"past"},
    "countries": {"countries"},
    "entity_labels": {"names", "numbers"},
    "guard": {"negations", "citation_labels", "answer_labels", "patterns"},
    "replies": {"replies", "examples"},
}
# The format strings of en/replies.toml, each with the fields the code fills in.
TEMPLATES = {
    "replies": {
        "decline_one": set(),
        "decline_many": set(),
        "unsure_one": set(),
        "unsure_many": set(),
        "said": {"speaker", "quotation"},
        "yes": {"sentence"},
        "no": {"sentence"},
        "overview_one": set(),
        "overview_many": set(),
        "overview_each": set(),
        "quoted_one": set(),
        "quoted_many": set(),
        "also_one": set(),
        "also_many": set(),
    },
    "examples": {"won": {"thing"}, "who_is": {"name"}, "said": {"name"}},
}


def load_vocabulary(english_dir: Path, domains_dir: Path) -> Vocabulary:
    """The vocabulary of the English files in `english_dir` and the domain files in `domains_dir` (all `*.toml`)."""
    en = _English(english_dir)
    stop, questions, follow, pronouns, numbers, contractions, people, verbs, countries, labels, guard, replies = (
        en.file(name, keys) for name, keys in ENGLISH_FILES.items()
    )

    person_words = {key: set(_words(people, key)) for key in PEOPLE_LISTS}
    closed_classes, domain_names = _domains(domains_dir, person_words)

    number_words, ordinal_numbers = _numbers(numbers)
    keep_meaning = frozenset(_words(stop, "keep_meaning"))
    about_the_document = frozenset(_words(stop, "about_the_document"))
    country_names = _mapping(countries, "countries", lower_values=False)
    return Vocabulary(
        english_stop_words=frozenset(STOP_WORDS),
        keep_meaning=keep_meaning,
        about_the_document=about_the_document,
        stop_words=frozenset(
            (set(STOP_WORDS) - keep_meaning - set(number_words) - set(ordinal_numbers)) | about_the_document
        ),
        **_questions(questions, follow),
        person_pronouns=frozenset(_words(pronouns, "person")),
        thing_pronouns=frozenset(_words(pronouns, "thing")),
        number_words=MappingProxyType(number_words),
        ordinal_numbers=MappingProxyType(ordinal_numbers),
        ordinals=frozenset(ordinal_numbers) | frozenset(_words(numbers, "ordinals")),
        weekdays=frozenset(d.lower() for d in calendar.day_name),
        months=frozenset(m.lower() for m in calendar.month_name if m),
        month_abbreviations=MappingProxyType(
            {
                calendar.month_name[i].lower(): frozenset(
                    {f"{calendar.month_abbr[i].lower()}."} | ({"sept."} if i == 9 else set())
                )
                for i in range(1, 13)
            }
        ),
        contracted_is=_words(contractions, "is", phrases=True),
        contracted_did=_words(contractions, "did", phrases=True),
        contracted_are=_words(contractions, "are", phrases=True),
        contracted_without_apostrophe=frozenset(_words(contractions, "without_apostrophe")),
        person_nouns=frozenset(person_words["nouns"]),
        person_verbs=frozenset(person_words["verbs"]),
        person_object_verbs=frozenset(person_words["object_verbs"]),
        honorifics=frozenset(_words(people, "honorifics")),
        irregular_past=MappingProxyType(_mapping(verbs, "past")),
        countries=MappingProxyType(country_names),
        demonyms=MappingProxyType({v.lower(): k for k, v in country_names.items()}),  # the last country listed wins
        name_labels=frozenset(_words(labels, "names", case=str.upper)),
        numeric_labels=frozenset(_words(labels, "numbers", case=str.upper)),
        **_guard(guard),
        replies=MappingProxyType(_templates(replies, "replies")),
        example_questions=MappingProxyType(_templates(replies, "examples")),
        closed_classes=MappingProxyType(closed_classes),
        domains=tuple(domain_names),
    )


def _questions(questions: "_File", follow: "_File") -> dict[str, Any]:
    """The Vocabulary's fields of questions.toml and follow_ups.toml."""
    return {
        "wh_words": frozenset(_words(questions, "wh_words")),
        "question_auxiliaries": frozenset(_words(questions, "auxiliaries")),
        "time_nouns": frozenset(_words(questions, "time_nouns")),
        "describe_openings": _words(questions, "describe_openings", phrases=True),
        "describe_wh_words": frozenset(_words(questions, "describe_wh_words")),
        "people_nouns": frozenset(_words(questions, "people_nouns")),
        "wh_kinds": MappingProxyType(_wh_kinds(questions)),
        "follow_up_interjections": _words(follow, "interjections", phrases=True),
        "follow_up_leads": _words(follow, "leads", phrases=True),
        "bare_why": _words(follow, "bare_why", phrases=True),
        "follow_up_auxiliaries": frozenset(_words(follow, "auxiliaries")),
        "topic_determiners": _words(follow, "determiners", phrases=True),
        "articles": _words(follow, "articles", phrases=True),
    }


def _guard(guard: "_File") -> dict[str, Any]:
    """The Vocabulary's fields of guard.toml."""
    return {
        "negations": frozenset(_words(guard, "negations")),
        "citation_labels": _words(guard, "citation_labels", phrases=True),
        "answer_labels": frozenset(_words(guard, "answer_labels")),
        "guard_patterns": MappingProxyType(_token_patterns(guard, "patterns")),
    }


def _wh_kinds(questions: "_File") -> dict[str, str]:
    """Each wh-word's kind of question: the table's, else the word itself; the table's words and kinds are wh-words."""
    wh_words, table = _words(questions, "wh_words"), _mapping(questions, "wh_kinds")
    if stray := sorted((set(table) | set(table.values())) - set(wh_words)):
        raise VocabularyError(f"{questions.path}: [wh_kinds] {stray[0]!r} is not one of the wh_words")
    return {w: table.get(w, w) for w in wh_words}


def _numbers(numbers: "_File") -> tuple[dict[str, int], dict[str, int]]:
    """Number words and ordinals with their values: spaCy's first twenty of each, and the file's larger numbers."""
    values = numbers.table("values")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
        raise VocabularyError(f"{numbers.path}: [values] must map each word to a whole number")
    number_words = {w: n for n, w in enumerate(_num_words[:SPACY_NUMBERS])} | {w: values[w] for w in values}
    return number_words, {w: n for n, w in enumerate(_ordinal_words[:SPACY_NUMBERS], start=1)}


def _domains(domains_dir: Path, person_words: dict[str, set[str]]) -> tuple[dict[str, frozenset[str]], list[str]]:
    """The closed classes of every domain file, and their names; their people words are added to `person_words`."""
    closed_classes: dict[str, frozenset[str]] = {}
    domain_names = []
    for path in sorted(domains_dir.glob("*.toml")):
        domain = _File(path, _load(path))
        domain.expect(set(), {"closed_classes", "people"})
        classes = domain.sub("closed_classes") if "closed_classes" in domain.data else None
        for name in classes.data if classes else ():
            if name in closed_classes:
                raise VocabularyError(f"{path}: the closed class {name!r} is listed by another domain too")
            closed_classes[name] = frozenset(_words(classes, name))
        if "people" in domain.data:
            sub = domain.sub("people")
            sub.expect(set(), set(PEOPLE_LISTS))
            for key in PEOPLE_LISTS:
                if key in sub.data:
                    words = _words(sub, key)
                    if again := person_words[key] & set(words):
                        raise VocabularyError(f"{path}: people.{key} repeats {sorted(again)} of the English list")
                    person_words[key] |= set(words)
        domain_names.append(path.stem)
    return closed_classes, domain_names


def alternatives(words: tuple[str, ...]) -> str:
    """The words as the alternatives of a regular expression, in order: "who|what|…". They are plain words (the
    loader checks), so nothing needs escaping."""
    return "|".join(words)


# -- reading the files ------------------------------------------------------------------------------------------


@dataclass
class _File:
    path: Path
    data: dict[str, Any]
    where: str = ""

    def expect(self, required: set[str], allowed: set[str]) -> None:
        missing, unknown = required - set(self.data), set(self.data) - allowed
        if missing or unknown:
            what = [f"missing {sorted(missing)}"] * bool(missing) + [f"unknown {sorted(unknown)}"] * bool(unknown)
            raise VocabularyError(f"{self.path}{self.where}: {', '.join(what)}")

    def table(self, key: str) -> dict[str, Any]:
        value = self.data[key]
        if not isinstance(value, dict):
            raise VocabularyError(f"{self.path}: {key} must be a table ([{key}])")
        return value

    def sub(self, key: str) -> "_File":
        return _File(self.path, self.table(key), f" [{key}]")


class _English:
    def __init__(self, directory: Path):
        self.directory = directory

    def file(self, name: str, keys: set[str]) -> _File:
        path = self.directory / f"{name}.toml"
        f = _File(path, _load(path))
        f.expect(keys, keys)
        return f


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VocabularyError(f"{path}: {exc}") from exc


def _words(f: _File, key: str, case=str.lower, phrases: bool = False) -> tuple[str, ...]:
    """A list of words, each once, in `case` (lower case, or upper case for entity labels). `phrases`: read as a
    regular expression's alternatives or word by word, so plain letters and single spaces only ("and what about")."""
    words = f.data[key]
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise VocabularyError(f"{f.path}{f.where}: {key} must be a list of words")
    bad = [w for w in words if not w or w != w.strip() or w != case(w) or "  " in w]
    if phrases:
        bad += [w for w in words if not all(part.isalpha() for part in w.split(" "))]
    if bad:
        raise VocabularyError(f"{f.path}{f.where}: {key} holds {bad[0]!r}, not a clean word")
    repeated = [w for w, n in Counter(words).items() if n > 1]
    if repeated:
        raise VocabularyError(f"{f.path}{f.where}: {key} lists {repeated[0]!r} twice")
    return tuple(words)


def _templates(f: _File, key: str) -> dict[str, str]:
    """A table of format strings, exactly the names TEMPLATES lists, each with exactly the fields listed for it."""
    table, expected = f.table(key), TEMPLATES[key]
    _File(f.path, table, f" [{key}]").expect(set(expected), set(expected))
    for name, template in table.items():
        try:
            fields = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
        except (ValueError, TypeError):
            fields = None
        if not isinstance(template, str) or not template.strip() or fields != expected[name]:
            raise VocabularyError(
                f"{f.path}: [{key}] {name} must be text with the fields {sorted(expected[name]) or 'none'} in braces"
            )
    return dict(table)


def _token_patterns(f: _File, key: str) -> dict[str, tuple[list[dict], ...]]:
    """A table of spaCy Matcher patterns by name, each a list of token patterns; checked by spaCy's own validator."""
    table = f.table(key)
    matcher = Matcher(Vocab(), validate=True)
    for name, patterns in table.items():
        try:
            matcher.add(name, patterns)
        except (ValueError, TypeError, KeyError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise VocabularyError(f"{f.path}: [{key}] {name} is not a list of spaCy token patterns: {reason}") from exc
    return {name: tuple(patterns) for name, patterns in table.items()}


def _mapping(f: _File, key: str, lower_values: bool = True) -> dict[str, str]:
    """A table of lower-case words to words: lower case too, or as written (a country's adjective)."""
    table = f.table(key)
    for k, v in table.items():
        if not isinstance(v, str) or not v or k != k.lower().strip() or (lower_values and v != v.lower()):
            raise VocabularyError(f"{f.path}: [{key}] {k} = {v!r} is not a lower-case word and its form")
    return dict(table)
