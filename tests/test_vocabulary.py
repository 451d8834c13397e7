"""The vocabulary (bot/lang/): every data file loads, its words are clean, lists that must not share words do not,
the derived sets are built as documented, and a broken file is refused. No model, no index."""

import shutil
import tomllib
from pathlib import Path

import pytest
from spacy.lang.en.stop_words import STOP_WORDS

from bot.lang import DOMAINS_DIR, ENGLISH_DIR, LANG_DIR, Vocabulary, VocabularyError, load_vocabulary, vocabulary

ROOT = Path(__file__).resolve().parents[1]
DATA_FILES = sorted(LANG_DIR.rglob("*.toml"))


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return vocabulary()


@pytest.fixture
def copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the vocabulary's directories to break."""
    en, domains = tmp_path / "en", tmp_path / "domains"
    shutil.copytree(ENGLISH_DIR, en)
    shutil.copytree(DOMAINS_DIR, domains)
    return en, domains


def test_every_file_loads_and_the_vocabulary_is_loaded_once():
    assert DATA_FILES, "no vocabulary files"
    for path in DATA_FILES:
        with path.open("rb") as f:
            assert tomllib.load(f), path
    assert vocabulary() is vocabulary()
    assert "results" in vocabulary().domains


def test_every_english_file_is_read(copy):
    """A file nobody reads would be vocabulary that does nothing: removing any file stops the loading."""
    en, domains = copy
    for path in sorted(en.glob("*.toml")):
        moved = path.rename(path.with_suffix(".off"))
        with pytest.raises(VocabularyError, match=path.name):
            load_vocabulary(en, domains)
        moved.rename(path)
    assert load_vocabulary(en, domains) == vocabulary()


def test_words_are_clean_lower_case_and_listed_once(vocab):
    for name in vars(vocab):
        value = getattr(vocab, name)
        if name in {"name_labels", "numeric_labels"}:
            assert all(w.isupper() and w.strip() == w for w in value), name
        elif name == "closed_classes":
            assert all(w == w.lower().strip() and w for words in value.values() for w in words)
        elif name in {"english_stop_words", "stop_words", "replies", "example_questions"}:
            continue  # spaCy's own, the answerer's built from it, and format strings (checked by the loader)
        elif isinstance(value, (frozenset, tuple)) or hasattr(value, "keys"):
            assert value, f"{name} is empty"
            assert all(isinstance(w, str) and w == w.lower().strip() and w for w in value), name
    assert all(v[:1].isupper() for v in vocab.countries.values())  # adjectives as written: "American"


def test_lists_that_must_not_share_words_do_not(vocab):
    assert not vocab.keep_meaning & vocab.about_the_document  # a word is kept or added as a stop word, not both
    assert not vocab.person_pronouns & vocab.thing_pronouns
    assert not vocab.wh_words & vocab.question_auxiliaries
    assert vocab.follow_up_auxiliaries <= vocab.question_auxiliaries
    assert not vocab.name_labels & vocab.numeric_labels
    assert "its" not in vocab.contracted_without_apostrophe  # a word of its own, never "it is"
    assert vocab.contracted_did == vocab.contracted_are and set(vocab.contracted_did) <= set(vocab.contracted_is)


def test_words_of_one_domain_stay_in_its_file():
    """The English files hold no word that the domain files hold: "gold" or "skater" are the results domain's."""
    english = {w for path in ENGLISH_DIR.glob("*.toml") for w in _strings(_toml(path))}
    for path in DOMAINS_DIR.glob("*.toml"):
        shared = english & set(_strings(_toml(path)))
        assert not shared, f"{path.name} repeats {sorted(shared)} of bot/lang/en/"


def test_derived_sets_are_built_as_documented(vocab):
    assert vocab.stop_words == (
        (set(STOP_WORDS) - vocab.keep_meaning - set(vocab.number_words) - set(vocab.ordinal_numbers))
        | vocab.about_the_document
    )
    assert vocab.english_stop_words == STOP_WORDS
    assert {"the", "of", "article"} <= vocab.stop_words and not {"behind", "two", "third", "last"} & vocab.stop_words
    assert vocab.number_words["zero"] == 0 and vocab.number_words["nineteen"] == 19
    assert vocab.number_words["forty"] == 40 and vocab.number_words["dozen"] == 12
    assert vocab.number_words["billion"] == 1_000_000_000
    assert vocab.ordinal_numbers["first"] == 1 and vocab.ordinal_numbers["twentieth"] == 20
    assert vocab.ordinals == set(vocab.ordinal_numbers) | {"last"}
    assert len(vocab.weekdays) == 7 and "monday" in vocab.weekdays
    assert len(vocab.months) == 12 and "may" in vocab.months
    assert vocab.demonyms["japanese"] == "japan"
    assert vocab.demonyms["american"] == "united states"  # the last country listed with the adjective
    assert vocab.irregular_past["won"] == "win"
    assert vocab.closed_classes["medals"] == {"gold", "silver", "bronze"}
    assert {"skater", "director"} <= vocab.person_nouns  # the results domain's and English, together


def test_the_vocabulary_cannot_be_changed_in_place(vocab):
    with pytest.raises(AttributeError):
        vocab.wh_words = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError):
        vocab.number_words["zillion"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        vocab.stop_words.add("gold")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "file, old, new, reason",
    [
        ("questions.toml", '"who", "whom"', '"Who", "whom"', "'Who', not a clean word"),
        ("questions.toml", '"who", "whom"', '"who", "who"', "'who' twice"),
        ("pronouns.toml", '"she", "he"', '"she ", "he"', "not a clean word"),
        ("follow_ups.toml", '"what about"', '"what.about"', "not a clean word"),  # a phrase read as regex
        ("pronouns.toml", "thing = ", "things = ", "missing \\['thing'\\], unknown \\['things'\\]"),
        ("numbers.toml", "dozen = 12", 'dozen = "12"', "whole number"),
        ("countries.toml", 'japan = "Japanese"', 'Japan = "Japanese"', "lower-case"),
        ("stop_words.toml", "keep_meaning = [", "keep_meaning = [[", "stop_words.toml"),  # not TOML
        ("replies.toml", "{speaker} said", "{person} said", "said must be text with the fields"),  # a field renamed
        ("replies.toml", 'yes = "Yes — {sentence}"', 'yes = "Yes — {sentence"', "yes must be text"),  # broken
        ("questions.toml", 'which = "what"', 'which = "whatever"', "'whatever' is not one of the wh_words"),
        ("guard.toml", '[{ LOWER = "not" },', '[{ LOWR = "not" },', "not_in_documents is not a list of spaCy token"),
        ("guard.toml", '{ ORTH = "," }]', '{ ORTH = "," }', "not valid TOML|guard.toml"),
    ],
)
def test_a_broken_english_file_is_refused(copy, file, old, new, reason):
    en, domains = copy
    path = en / file
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(VocabularyError, match=reason):
        load_vocabulary(en, domains)


def test_a_domain_repeating_an_english_word_is_refused(copy):
    en, domains = copy
    path = domains / "results.toml"
    path.write_text(path.read_text().replace('verbs = ["skate"', 'verbs = ["say", "skate"'))
    with pytest.raises(VocabularyError, match="repeats \\['say'\\]"):
        load_vocabulary(en, domains)


def test_without_domains_the_english_vocabulary_stands_alone(copy, tmp_path):
    en, _ = copy
    empty = tmp_path / "no-domains"
    empty.mkdir()
    plain = load_vocabulary(en, empty)
    assert plain.domains == () and not plain.closed_classes
    assert "skater" not in plain.person_nouns and "director" in plain.person_nouns


def test_an_installed_package_ships_the_data_files():
    """pyproject.toml's package data for bot.lang covers every vocabulary file (a wheel holds only those)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["bot.lang"]
    shipped = {p for pattern in patterns for p in LANG_DIR.glob(pattern)}
    assert set(DATA_FILES) <= shipped


def test_modules_take_their_words_from_the_vocabulary(vocab):
    from bot.answer import claims, condense, linking, terms
    from index.text.pipeline import parse

    assert terms.STOPWORDS is vocab.stop_words and terms.WH_WORDS is vocab.wh_words
    assert terms.NUMBER_WORDS is vocab.number_words and terms.MONTHS is vocab.months
    assert linking.PERSON_NOUNS is vocab.person_nouns and linking.NUMERIC_LABELS is vocab.numeric_labels
    assert vocab.wh_words | vocab.question_auxiliaries == linking.QUESTION_START
    assert condense.WH_WORDS is vocab.wh_words and not hasattr(condense, "QUESTION_WORDS")
    assert vocab.closed_classes["medals"] <= condense.CLOSED_CLASS
    assert claims.NEGATIONS is vocab.negations
    assert linking.expand_contractions("whats up, who'd go and its end") == "what is up, who did go and its end"
    assert condense.is_bare_why(parse("and how come?")) and not condense.is_bare_why(parse("how come he won?"))
    assert [c.denial for c in claims.split_claims("He didn't go. Nobody came. They came.")] == ["n't", "Nobody", ""]
    assert claims.says_not_in_documents("The articles do not mention it.") and not claims.says_not_in_documents("No.")


def _toml(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def _strings(value) -> list[str]:
    """Every word a TOML document holds: list items, table values that are words, and keys of word tables."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in ([k] if not isinstance(v, (dict, list)) else []) + _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value.lower()] if isinstance(value, str) else []
