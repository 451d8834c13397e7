"""Questions as people type them, end to end on the real chain, on the article and on a second document: linked
names, who-is, yes/no, why, follow-ups, the example questions, and what must not be guessed."""

import pytest

from bot.types import Turn
from tests.conftest import ROOT, assert_right_or_declined
from tests.test_reading import bot_on


@pytest.fixture(scope="module")
def cycling(tmp_path_factory):
    return bot_on("cycling_qa", tmp_path_factory)


def test_lowercase_typos_and_contractions_are_read_as_the_documents_write_them(bot, cycling):
    assert bot.ask("how old's kaori sakamotto").standalone_question == "How old is Kaori Sakamoto?"
    glenn = bot.ask("how old is glen")  # Glenn's age is not given: no guess (an unsure reply may quote Sakamoto's)
    assert glenn.abstained and glenn.short_answer is None
    assert cycling.ask("whos julian arbelaez").standalone_question == "Who is Julián Arbeláez?"


@pytest.mark.parametrize(
    ("fixture", "question", "expected", "not_expected"),
    [
        ("bot", "who's kaori sakamoto", "Japan", "Alysa Liu [1]"),  # a description
    ],
)
def test_who_is_x_is_answered_by_what_describes_x(request, fixture, question, expected, not_expected):
    answer = request.getfixturevalue(fixture).ask(question)
    assert not answer.abstained and expected in answer.answer and not_expected not in answer.answer
    documents = (
        ROOT.joinpath("data/event-article.txt").read_text()
        + ROOT.joinpath("data/eval/cycling_qa/tour-stage.txt").read_text()
    )
    assert answer.citations and all(c.quote in documents for c in answer.citations)  # verbatim sentences


@pytest.mark.parametrize(
    ("fixture", "question", "expected", "not_expected"),
    [
        ("bot", "who are the blade angels", "American", "Glenn [1]"),  # unsure today (docs/limitations.md)
    ],
)
def test_who_is_x_not_answered_yet_is_never_someone_else(request, fixture, question, expected, not_expected):
    assert_right_or_declined(request.getfixturevalue(fixture).ask(question), expected, not_expected)


@pytest.mark.xfail(strict=True, reason="answered by the headline that names him, not by what says who he is")
def test_who_is_x_is_not_answered_by_a_headline_that_only_names_x(cycling):
    answer = cycling.ask("who is eirik solvang")
    assert "Norway" in answer.answer or answer.abstained


def test_a_yes_no_question_says_yes_with_the_fact(bot):
    answer = bot.ask("did glenn finish fifth")
    assert answer.answer.startswith("Yes — ") and "fifth" in answer.citations[0].quote


@pytest.mark.xfail(strict=True, reason="the learnt decision is unsure of it today (docs/limitations.md)")
def test_a_yes_no_question_says_no_with_the_fact(bot):
    answer = bot.ask("did sakamotto win gold")
    assert answer.answer.startswith("No — ") and "silver" in answer.answer and answer.citations


def test_a_counted_ordinal_is_no_placing(cycling):
    # "Solvang won the fifth stage": "fifth" counts stages, it is not his placing
    answer = cycling.ask("did solvang win the fifth stage")
    assert answer.answer.startswith("Yes — ") and "fifth stage" in answer.citations[0].quote


def test_why_questions_are_answered_by_a_cause(bot):
    answer = bot.ask("why did sakamoto lose the gold")
    assert not answer.abstained and "mistakes" in answer.answer


def test_who_won_is_not_someone_who_won_silver(bot):
    answer = bot.ask("who won the women's free skate")
    assert "Sakamoto [1]" not in answer.answer


def test_follow_ups_keep_the_subject_and_the_topic(bot):
    """Each follow-up is made standalone from the conversation so far (the bot's turns are given, so that this tests
    the condensing alone, not what the reader answers)."""
    said = ["Kaori Sakamoto [1].", "She made critical mistakes [1].", "25-year-old [1].", "Second [1]."]
    typed = ["who got silver", "why?", "how old is she", "where was she after the short program", "when was that"]
    history: list[Turn] = []
    asked = []
    for question, reply in zip(typed, [*said, ""], strict=True):
        asked.append(bot.ask(question, history).standalone_question)
        history += [Turn(role="user", content=question), Turn(role="assistant", content=reply)]
    assert asked[1] == "Why did Kaori Sakamoto get silver?"
    assert asked[2] == "How old is Kaori Sakamoto?"
    assert asked[4] == "When was the short program?"


def test_example_questions_come_from_each_document_and_quote_it(bot, cycling):
    """The suggested questions differ per document, and each is one its document speaks to: the reply quotes it
    (an answer, or an unsure reply with the closest sentence), never "the documents don't say"."""
    article_text = ROOT.joinpath("data/event-article.txt").read_text()
    stage_text = ROOT.joinpath("data/eval/cycling_qa/tour-stage.txt").read_text()
    article, stage = bot.example_questions(), cycling.example_questions()
    assert article and stage and not set(stage) & set(article)
    for asker, questions, text in ((bot, article, article_text), (cycling, stage, stage_text)):
        for question in questions:
            answer = asker.ask(question)
            assert answer.citations and all(c.quote in text for c in answer.citations), (question, answer.answer)
