"""The LLM's P(Yes) share on its first token (bot.answer.llamacpp.TokenLogprobs), a signal of the learnt decision
only where its answer opens with Yes or No, and the word that opens it where the fitted threshold
overrules the LLM's own (bot.answer.llm_decide)."""

import math

import numpy as np
import pytest

from bot.answer.llamacpp import TokenLogprobs
from bot.answer.llm_decide import LLM_FEATURES, llm_features, overruling_word
from bot.types import Draft, Question

VOCABULARY = ["Yes", " Yes", "yes", "No", " No", "no", "Not", "She", "."]


class Vocabulary:
    """Just enough of a llama_cpp.Llama for the processor: one token per word."""

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        word = text.decode()
        return [VOCABULARY.index(word if word in VOCABULARY else word.split()[0])]


def test_the_first_step_records_the_share_of_yes_and_changes_nothing():
    scores = np.full(len(VOCABULARY), -10.0)
    scores[VOCABULARY.index("Yes")], scores[VOCABULARY.index("No")], scores[VOCABULARY.index("Not")] = 1.0, 0.5, 0.0
    recorder = TokenLogprobs(Vocabulary(), "Not in the documents.")
    assert (recorder(np.array([1, 2, 3]), scores) == scores).all()
    assert recorder.yes_share == pytest.approx(math.exp(1.0) / (math.exp(1.0) + math.exp(0.5)), rel=1e-3)
    assert recorder.p_not_in_documents == pytest.approx(1 / (1 + math.exp(1.0) + math.exp(0.5)), rel=1e-3)
    recorder(np.array([1, 2, 3, 0]), np.zeros(len(VOCABULARY)))  # the next step: "Yes" written
    assert recorder.yes_share == pytest.approx(0.62, abs=0.01) and recorder.logprobs == [pytest.approx(-0.68, abs=0.01)]


def test_the_decision_reads_the_share_only_where_the_answer_opens_with_yes_or_no():
    asked = Question("did she cry", "yes-no", frozenset({"cry"}), ())
    at = LLM_FEATURES.index("llm_yes_share")

    def share_feature(text: str) -> float:
        draft = Draft(text, False, [])
        return llm_features([-0.1], 0.01, 0.3, draft, draft, None, asked, [], None)[at]

    assert share_feature("No, she smiled. [1]") == 0.3
    assert share_feature("Yes — she cried. [1]") == 0.3
    assert math.isnan(share_feature("She smiled. [1]"))
    assert math.isnan(share_feature("Nobody cried. [1]"))


@pytest.mark.parametrize(
    ("text", "share", "overruled_by"),
    [
        ("Yes, she won the gold medal. [2]", 0.2, "No"),
        ("No, she won silver [3][1, 3].", 0.9, "Yes"),
        ("Yes, she cried. [1]", 0.69, None),  # the share agrees
        ("no — she smiled [1]", 0.5, None),
        ("She won silver. [2]", 0.1, None),  # no Yes or No to choose
        ("Nobody cried. [2]", 0.9, None),
        ("Yes, she cried. [1]", None, None),  # a backend without log-probabilities
    ],
)
def test_the_share_overrules_the_llms_word_where_they_disagree(text, share, overruled_by):
    assert overruling_word(text, share, threshold=0.69) == overruled_by


def test_without_a_fitted_threshold_the_llm_keeps_its_word():
    assert overruling_word("Yes, she won. [2]", 0.01, threshold=None) is None


def test_the_threshold_is_the_share_that_gets_most_yes_no_questions_right():
    from bot.training.llm_calibration import fit_yes_threshold

    def row(group: str, truth: bool, share: float, llm: str = "Yes, she did. [1]") -> dict:
        return {"group": group, "yes_no": truth, "yes_share": share, "llm": llm}

    # the LLM says Yes to all; its share is higher where the truth is yes, and above a half for most noes
    rows = [row(g, True, s) for g in "ab" for s in (0.8, 0.9, 0.95)]
    rows += [row(g, False, s) for g in "ab" for s in (0.55, 0.6, 0.7)]
    rows += [row("a", None, 0.1), row("b", False, 0.99, "Not in the documents.")]  # not yes/no; not a Yes or No
    threshold, figures = fit_yes_threshold(rows)
    assert 0.7 < threshold <= 0.8
    assert figures == {
        "questions": 12,
        "right_by_the_llms_word": 6,
        "right_by_the_share": 12,
        "right_by_the_share_each_set_held_out": 12,
    }
    assert fit_yes_threshold([row("a", None, 0.5)]) == (None, {"questions": 0})
