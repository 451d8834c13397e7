"""The default reader: the local Qwen2.5-Coder-1.5B-Instruct that `make run` and `make test` install (one model load
per test run, a handful of questions; the rest of the suite pins the span reader alone, see conftest). What a user
of the defaults meets: answers the LLM wrote, each cited verbatim, right or declined, never a name or number the
article lacks; questions the article does not answer are declined."""

import re

import pytest

from bot.answer.cite import without_markers
from bot.answer.claims import facts
from bot.settings import Settings
from tests.conftest import ARTICLE, assert_right_or_declined, run_cli

pytestmark = pytest.mark.llm

TEXT = ARTICLE.read_text(encoding="utf-8")
DEFAULT_LLM = Settings.model_fields["llm"].default


def test_the_default_reader_is_the_local_llm_that_make_installs():
    from bot.llm_file import installed

    assert DEFAULT_LLM == "llamacpp"
    assert installed().stat().st_size > 1_000_000_000  # joined and checked by `eventbot install-llm`


@pytest.fixture(scope="module")
def default_bot(settings):
    from bot.event_bot import EventBot

    return EventBot(settings.model_copy(update={"llm": DEFAULT_LLM}))


def assert_grounded(answer) -> None:
    """Every quote is the article's own text, every [n] has its quote, every name and number is in the article."""
    quotes = [c.quote for c in answer.citations]
    assert all(q in TEXT for q in quotes), answer
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)} <= {c.n for c in answer.citations}, answer
    assert all(name.lower() in TEXT.lower() for _, name in facts(without_markers(answer.answer))), answer


@pytest.mark.parametrize(
    ("question", "expected", "not_expected"),
    [
        ("How old is Sakamoto?", "25", None),
        ("Who won the gold medal?", "Liu", "Sakamoto"),
        ("what did glenn do when the camera came close", "block", None),  # the article: "to block the camera’s view"
    ],
)
def test_the_default_answers_right_or_declines_and_cites_the_article(default_bot, question, expected, not_expected):
    answer = default_bot.ask(question)
    assert answer.backend in ("llamacpp", "extractive")  # the LLM's answer, or the span reader's where it was unsure
    assert_right_or_declined(answer, expected, not_expected)
    assert_grounded(answer)


def test_the_default_reads_with_the_llm_and_answers_what_the_article_plainly_says(default_bot):
    answer = default_bot.ask("Who consoled Sakamoto?")
    assert answer.backend == "llamacpp" and not answer.abstained, answer
    assert "Liu" in answer.answer and "Glenn" not in answer.answer and answer.citations, answer
    assert answer.timings_ms["generate"] > 0
    assert_grounded(answer)


@pytest.mark.parametrize(
    "question",
    ["What did Glenn have for breakfast?", "Who coached Alysa Liu?", "What is the capital of France?"],
)
def test_the_default_declines_what_the_article_does_not_say(default_bot, question):
    answer = default_bot.ask(question)
    assert answer.abstained and answer.short_answer is None, answer


def test_eventbot_ask_reads_with_the_llm_unless_told_otherwise(index_dir):
    """The command line as a newcomer runs it after `make run`: no EVENTBOT_LLM set, the answer object says which
    reader answered; EVENTBOT_LLM=none is the span reader alone."""
    import json

    env = {"EVENTBOT_INDEX_DIR": str(index_dir)}
    default = json.loads(run_cli("ask", "--json", "Who consoled Sakamoto?", env=env, unset=("EVENTBOT_LLM",)).stdout)
    alone = json.loads(run_cli("ask", "--json", "Who consoled Sakamoto?", env=env | {"EVENTBOT_LLM": "none"}).stdout)
    assert default["backend"] == "llamacpp" and "Liu" in default["answer"]
    assert alone["backend"] == "extractive"
