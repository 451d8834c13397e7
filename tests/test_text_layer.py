"""Unit tests of the text layer and the pieces that read it: document parsing, name linking, parse checks,
follow-up condensing and yes/no questions. spaCy's small pipeline only: no embedding model, no Chroma, no server."""

import importlib
import re

import pytest

from bot.answer.condense import BotTurn, condense_question
from bot.answer.linking import Lexicon, expand_contractions
from bot.types import Turn
from index.text.pipeline import parse_document
from index.text.sentences import Entity, ParsedSentence, Token, sentences_from_json, sentences_to_json


def sentence_with(document: str, sentences: list[ParsedSentence], phrase: str) -> ParsedSentence:
    """The parsed sentence of `document` that contains `phrase`."""
    return next(s for s in sentences if phrase in s.text(document))


def offsets(document: str, sentence: ParsedSentence, phrase: str) -> tuple[int, int]:
    """Document offsets of the first `phrase` inside `sentence`."""
    start = document.index(phrase, sentence.start)
    assert start + len(phrase) <= sentence.end, f"{phrase!r} is not in {sentence.text(document)!r}"
    return start, start + len(phrase)


def lexicon_of(text: str) -> Lexicon:
    return Lexicon([(text, s) for s in parse_document(text)])


# ---------------------------------------------------------------------------------------------------------------
# index/text/pipeline.py: documents
# ---------------------------------------------------------------------------------------------------------------

SKATING = (
    "Glenn Skates Into History\n"
    "The American champion Amber Glenn said she was proud.   She hugged Kaori Sakamoto.\n"
    "\n"
    "* * *\n"
    "   Sakamoto, 25, won silver in Milan"
)


@pytest.fixture(scope="module")
def skating() -> list[ParsedSentence]:
    return parse_document(SKATING)


def test_parse_document_splits_lines_and_sentences(skating):
    assert [s.text(SKATING) for s in skating] == [
        "Glenn Skates Into History",  # a headline without a full stop is its own sentence
        "The American champion Amber Glenn said she was proud.",
        "She hugged Kaori Sakamoto.",
        "Sakamoto, 25, won silver in Milan",  # leading spaces dropped; "* * *" (no word) skipped
    ]


def test_parse_document_offsets_slice_the_document(skating):
    for s in skating:
        assert SKATING[s.start : s.end] == s.text(SKATING)
        assert s.tokens[0].start == s.start and s.tokens[-1].end == s.end
        for t in s.tokens:
            word = SKATING[t.start : t.end]
            assert word and word == word.strip()
            assert s.start <= t.start < t.end <= s.end
            assert 0 <= t.head < len(s.tokens)
        for e in s.entities:
            assert s.start <= e.start < e.end <= s.end
    assert [SKATING[t.start : t.end] for t in skating[2].tokens] == ["She", "hugged", "Kaori", "Sakamoto", "."]


def test_parse_document_keeps_entities_and_token_analysis(skating):
    champion = skating[1]
    assert ("Amber Glenn", "PERSON") in [(SKATING[e.start : e.end], e.label) for e in champion.entities]
    by_word = {SKATING[t.start : t.end]: t for t in champion.tokens}
    assert by_word["Amber"].ent == by_word["Glenn"].ent == "PERSON"
    assert by_word["said"].lemma == "say" and by_word["said"].pos == "VERB"
    assert by_word["said"].dep == "ROOT" and champion.tokens[by_word["said"].head] is by_word["said"]
    assert champion.tokens[by_word["champion"].head] is by_word["said"]  # heads index the sentence's tokens
    assert ("Kaori Sakamoto", "PERSON") in [(SKATING[e.start : e.end], e.label) for e in skating[2].entities]


def test_many_documents_parse_in_parallel_as_they_do_one_by_one(monkeypatch):
    """Past PARALLEL_CHARS the parse runs in one process per core; documents and offsets come out the same, in order
    (an empty document included)."""
    parse_module = importlib.import_module("index.text.pipeline")

    documents = [SKATING, "", "The race was won by Ana Silva.\n\nShe finished in 2:21:14.", SKATING.upper()]
    monkeypatch.setattr(parse_module, "PARALLEL_CHARS", 1)
    monkeypatch.setattr(parse_module.os, "cpu_count", lambda: 2)
    assert list(parse_module.parse_documents(documents)) == [parse_document(d) for d in documents]


def test_parse_document_of_nothing():
    assert parse_document("") == []
    assert parse_document("\n\n  \n— * —\n") == []


def test_sentences_json_round_trips_exactly(skating):
    document = "Iñaki de la Fuente won in Lisbon.\nAnaïs Van der Berg was second"
    for text, parsed in [(SKATING, skating), (document, parse_document(document))]:
        stored = sentences_to_json(parsed)
        back = sentences_from_json(stored)
        assert back == parsed
        assert all(isinstance(t, Token) for s in back for t in s.tokens)
        assert all(isinstance(e, Entity) for s in back for e in s.entities)
        assert [s.text(text) for s in back] == [s.text(text) for s in parsed]
        assert sentences_to_json(back) == stored
    assert "Iñaki" in sentences_to_json(parse_document(document))  # not escaped to \u00f1
    assert sentences_from_json(sentences_to_json([])) == []


# ---------------------------------------------------------------------------------------------------------------
# bot/answer/linking.py
# ---------------------------------------------------------------------------------------------------------------

LISBON = """De la Fuente Takes Lisbon Marathon

Spain's Iñaki de la Fuente won the Lisbon Marathon on Sunday, his first marathon since 2019.
Belgium's Anaïs Van der Berg, 31, took second place, ahead of Japanese runner Hana Yoshida.
"I was not expecting this," De la Fuente said after crossing the line.
Yoshida said the heat made the final kilometres hard.
Van der Berg was consoled by her coach, Tomás Okafor.
The race was organised by the Lisbon Athletics Federation, which paid Van der Berg a bonus.
Fuente said he would run again next year.
"""


@pytest.fixture(scope="module")
def lisbon() -> Lexicon:
    return lexicon_of(LISBON)


@pytest.mark.parametrize(
    ("typed", "linked"),
    [
        ("where did hana yoshida finish", "Where did Hana Yoshida finish?"),  # case
        ("did anais van der berg win", "Did Anaïs Van der Berg win?"),  # accents
        ("what did hana yoshda say", "What did Hana Yoshida say?"),  # typo
        ("how'd anais van der burg do", "How did Anaïs Van der Berg do?"),  # contraction, accent and typo
        ("who is the lisbon athletics federation", "Who is the Lisbon Athletics Federation?"),  # organisation
        ("who won the lisbon marathon", "Who won the Lisbon Marathon?"),  # an event, stored as "the Lisbon Marathon"
        ("tell me about okafor.", "Tell me about Okafor."),  # not a question word: no "?" added
        ("Who is Hana Yoshida?", "Who is Hana Yoshida?"),  # already as the documents write it
    ],
)
def test_link_writes_names_as_the_documents_do(lisbon, typed, linked):
    assert lisbon.link(typed) == linked


def test_link_restores_a_mistyped_name_with_particles(lisbon):
    linked = lisbon.link("who's inaki de la fuenta")
    assert linked.startswith("Who is ")
    assert "Iñaki de la Fuente" in linked or "de la Fuente" in linked
    assert "fuenta" not in linked.lower()
    assert linked.endswith("?")


@pytest.mark.parametrize("typed", ["who is van der berg", "is van der berg belgian"])
def test_link_does_not_swallow_is_into_another_name(lisbon, typed):
    # "is van der berg" is close to "anais van der berg", but "is" is a word of the question
    linked = lisbon.link(typed)
    assert "Anaïs" not in linked
    assert re.search(r"\b[Ii]s Van der Berg\b", linked), linked


def test_link_leaves_unknown_ordinary_words_alone(lisbon):
    assert lisbon.link("what happened to the bananna") == "What happened to the bananna?"
    assert lisbon.link("is it hot") == "Is it hot?"
    assert lisbon.link("who organised the race") == "Who organised the race?"


def test_link_keeps_a_common_noun_lower_case_when_the_documents_do(lisbon):
    # LISBON writes "Lisbon Marathon" (and the headline "...Lisbon Marathon") but also "his first marathon"
    assert lisbon.link("how long is a marathon") == "How long is a marathon?"


@pytest.mark.parametrize(
    ("typed", "linked"),
    [
        ("tell me about yoshida", "Tell me about Yoshida"),
        ("did yoshida finish", "Did Yoshida finish?"),
        ("how'd yoshida do", "How did Yoshida do?"),
        ("who is fuente", "Who is Fuente?"),
    ],
)
def test_link_capitalizes_a_name_that_opens_a_sentence_in_the_documents(lisbon, typed, linked):
    assert lisbon.link(typed) == linked


@pytest.mark.xfail(
    reason="A mistyped name whose entity starts with 'the' is not restored: the name is stored as "
    "'the Lisbon Marathon', _name_at allows no fuzzy match when a run starts with a stop word ('the lisbn "
    "marathon'), and the run without it ('lisbn marathon') has a different word count from the stored name; "
    "only word by word does 'lisbn' become 'Lisbon', and since c00e677 'marathon' stays lower case.",
    strict=True,
)
def test_link_restores_a_mistyped_name_that_starts_with_the(lisbon):
    assert lisbon.link("who won the lisbn marathon") == "Who won the Lisbon Marathon?"


@pytest.mark.parametrize(
    ("typed", "expanded"),
    [
        ("how'd she do", "how did she do"),
        ("How’d she do", "How did she do"),
        ("who's the winner", "who is the winner"),
        ("whats the time", "what is the time"),
        ("where're they", "where are they"),
        ("its time", "its time"),  # a possessive, not "it is"
        ("Sakamoto's medal", "Sakamoto's medal"),  # a possessive of a name
    ],
)
def test_expand_contractions(typed, expanded):
    assert expand_contractions(typed) == expanded


def test_link_expands_contractions_and_adds_a_question_mark(lisbon):
    assert lisbon.link("how'd okafor do") == "How did Okafor do?"
    assert lisbon.link("whats the weather") == "What is the weather?"
    assert lisbon.link("who won!") == "Who won!"  # already ends a sentence


def test_people_are_decided_over_all_mentions(lisbon):
    for person in ["Iñaki de la Fuente", "De la Fuente", "Anaïs Van der Berg", "Van der Berg", "Hana Yoshida"]:
        assert person in lisbon.people
    for part in ["Fuente", "Yoshida", "Berg", "Okafor"]:
        assert part in lisbon.people
    for thing in ["Spain", "Belgium", "Japanese", "Lisbon", "Marathon", "Lisbon Athletics Federation"]:
        assert thing not in lisbon.people
    assert not {"de", "la", "der"} & lisbon.people  # particles are no names on their own


def test_subject_of_said_is_a_person_whatever_spacy_labels_it():
    said = "Kiprop said the course was fast."
    assert [e.label for e in parse_document(said)[0].entities] == ["ORG"]  # the model's vote
    assert "Kiprop" in lexicon_of(said).people
    assert "Kiprop" not in lexicon_of("The prize money went to Kiprop.").people  # ORG, and nothing says otherwise


def test_word_also_written_in_lower_case_is_no_person():
    confirmed = "Porto Marathon confirmed the new course."
    assert "Porto Marathon" in lexicon_of(confirmed).people  # labelled PERSON and subject of "confirmed"
    people = lexicon_of(confirmed + "\nIt was his first marathon.").people
    assert not {"Porto Marathon", "Marathon", "Porto"} & people


def test_people_in_finds_full_names_before_surnames(lisbon):
    text = "Iñaki de la Fuente beat Anaïs Van der Berg; De la Fuente thanked Van der Berg. Yoshida, too."
    found = lisbon.people_in(text)
    assert [p.text for p in found] == [
        "Iñaki de la Fuente",
        "Anaïs Van der Berg",
        "De la Fuente",
        "Van der Berg",
        "Yoshida",
    ]
    for span in found:
        assert text[span.start : span.end] == span.text
    assert lisbon.people_in("the race was hot") == []
    assert lisbon.people_in("Fuentes and Yoshidas") == []  # whole words only
    assert lexicon_of("The race was hot.").people_in("Yoshida") == []  # no people at all


def test_people_in_keeps_two_people_joined_by_and_apart(lisbon):
    assert [p.text for p in lisbon.people_in("Yoshida and Okafor hugged.")] == ["Yoshida", "Okafor"]
    assert [p.text for p in lisbon.people_in("Yoshida saw Okafor.")] == ["Yoshida", "Okafor"]
    assert [p.text for p in lisbon.people_in("De la Fuente and Van der Berg hugged.")] == [
        "De la Fuente",
        "Van der Berg",
    ]


# ---------------------------------------------------------------------------------------------------------------
# bot/answer/condense.py
# ---------------------------------------------------------------------------------------------------------------

NAMES = ["Kaori Sakamoto", "Amber Glenn", "Alysa Liu", "Sakamoto", "Glenn", "Liu"]
NAMES_PATTERN = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in NAMES) + r")\b")


def people(text: str) -> list[str]:
    """The person names in a text, in order, as the documents write them (case-sensitive, like the real one: the
    chain links the question and history to the documents' spelling before condensing)."""
    return NAMES_PATTERN.findall(text)


def user(text: str) -> Turn:
    return Turn(role="user", content=text)


def bot(text: str) -> Turn:
    return Turn(role="assistant", content=text)


def test_people_helper():
    assert people("Kaori Sakamoto hugged Glenn, not glenn") == ["Kaori Sakamoto", "Glenn"]


def test_condense_without_history_is_unchanged():
    assert condense_question("how old is she", [], people) == "how old is she"
    assert condense_question("how old is she", [bot("Hello! Ask me about the event.")], people) == "how old is she"


def test_condense_pronoun_becomes_the_person():
    history = [user("Where did Sakamoto finish?"), bot("Second [1].")]
    condensed = condense_question("how old is she", history, people)
    assert condensed.startswith("How old is Sakamoto")
    assert "she" not in condensed.split()


def test_condense_possessive_pronoun():
    history = [user("How did Glenn skate?"), bot("Brilliantly [1].")]
    condensed = condense_question("what was her short program score", history, people)
    assert condensed.startswith("What was Glenn's short program score")


def test_condense_pronoun_for_the_last_person_named():
    history = [user("Who got silver?"), bot("Sakamoto [1]."), user("Who consoled her?"), bot("Alysa Liu [2].")]
    assert "Alysa Liu" in condense_question("how old is she", history, people)


def test_condense_thing_pronoun_becomes_the_previous_topic():
    history = [user("where was Sakamoto after the short program"), bot("Second [1].")]
    condensed = condense_question("when was that", history, people)
    assert "the short program" in condensed
    assert not re.search(r"\bthat\b", condensed)
    assert condensed.startswith("When was")


def test_condense_fragment_swaps_the_person():
    history = [user("Where did Sakamoto finish?"), bot("Second [1].")]
    assert condense_question("and Glenn?", history, people) == "Where did Glenn finish?"
    assert condense_question("what about Kaori Sakamoto?", [user("How old is Glenn?")], people) == (
        "How old is Kaori Sakamoto?"
    )


def test_condense_fragment_swaps_the_topic():
    history = [user("Where was Sakamoto after the short program?"), bot("Second [1].")]
    condensed = condense_question("and the free skate?", history, people)
    assert condensed == "Where was Sakamoto after the free skate?"
    assert "the the" not in condensed


def test_condense_fragment_swaps_a_medal():
    assert condense_question("what about gold?", [user("Who got silver?"), bot("Sakamoto [1].")], people) == (
        "Who got gold?"
    )


def test_condense_bare_why_asks_about_the_answer():
    history = [user("Who got silver?"), bot("Sakamoto [1].")]
    assert condense_question("why?", history, people) == "Why did Sakamoto get silver?"


@pytest.mark.parametrize(
    "declined",
    ["The documents don't say.", "The article doesn't say.", "I'm not sure; the closest the article comes is: “…” [1]"],
)
def test_condense_bare_why_after_a_decline_does_not_ask_about_the_decline(declined):
    condensed = condense_question("why?", [user("Who got bronze?"), bot(declined)], people)
    assert "say" not in condensed and "sure" not in condensed and "bronze" in condensed


def test_a_turn_the_bot_said_is_read_as_data_not_from_its_words():
    """Whether the bot declined comes with its turn (BotTurn), whatever the words: an LLM's "Nowhere [1]." that it
    gave as a decline is no answer to ask why about, and the same words from a client are."""
    nowhere = "Nowhere [1]."
    assert condense_question("why?", [user("Who got bronze?"), bot(nowhere)], people) == "Why did Nowhere get bronze?"
    declined = BotTurn.of(nowhere, abstained=True)
    assert (declined.plain, declined.declined) == ("Nowhere.", True)
    assert declined.model_dump() == {"role": "assistant", "content": nowhere}  # written out: a turn like any other
    assert "Nowhere" not in condense_question("why?", [user("Who got bronze?"), declined], people)
    answered = BotTurn.of("Sakamoto [1].", abstained=False)
    assert condense_question("why?", [user("Who got silver?"), answered], people) == "Why did Sakamoto get silver?"


def test_condense_keeps_the_subject_over_a_chain_of_follow_ups():
    history = [user("Where did Sakamoto finish?"), bot("Second [1]."), user("and Glenn?"), bot("First [2].")]
    assert condense_question("how old is she", history, people).startswith("How old is Glenn")


UNSURE = "I'm not sure; the closest the article comes is: “Glenn stood up to block the camera.” [1]"


def test_condense_after_an_unsure_reply_reads_the_question_it_answered_first():
    """The sentence an unsure reply quotes is only the closest the documents came: its names are not the subject."""
    history = [user("How did Sakamoto feel after the free skate?"), bot(UNSURE)]
    assert condense_question("how old is she", history, people).startswith("How old is Sakamoto")
    # with no one in the question, the quote's name is still better than nothing
    assert condense_question("how old is she", [user("Who blocked it?"), bot(UNSURE)], people).startswith(
        "How old is Glenn"
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("how far behind her was Sakamoto", "How far behind Alysa Liu was Sakamoto"),  # before the name: someone else
        ("what did Sakamoto say to her", "What did Sakamoto say to Alysa Liu"),  # an object after it: someone else
        ("did Sakamoto say she was nervous", "Did Sakamoto say she was nervous"),  # a subject after it: the same one
    ],
)
def test_condense_pronoun_beside_a_name_the_question_gives(question, expected):
    history = [user("Who won gold?"), bot("Alysa Liu [1].")]
    assert condense_question(question, history, people).rstrip("?") == expected


def test_condense_never_puts_the_person_the_question_names_for_its_pronoun():
    history = [user("Who got silver?"), bot("Kaori Sakamoto [1].")]
    assert condense_question("how much did she lose to Sakamoto by", history, people) == (
        "How much did she lose to Sakamoto by"
    )


def test_condense_keeps_an_act_and_never_makes_the_question_word_a_topic():
    history = [user("What did Glenn do when she saw the cameraman?"), bot("Blocked the camera [1].")]
    assert condense_question("why did she do that", history, people) == "Why did Glenn do that"
    history = [user("What medal did Sakamoto win last time?"), bot("Bronze [1].")]
    assert "What medal" not in condense_question("which year was that", history, people)


def test_condense_fragment_person_fills_the_pronoun_left_open():
    history = [user("What did she do for Sakamoto?"), bot(UNSURE)]
    assert condense_question("and Glenn?", history, people) == "What did Glenn do for Sakamoto?"


def test_condense_question_naming_its_person_is_left_alone():
    history = [user("Where did Sakamoto finish?"), bot("Second [1].")]
    assert condense_question("Where did Liu finish?", history, people) == "Where did Liu finish?"
