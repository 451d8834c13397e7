"""The LLM's P(Yes) share on its first token (bot.answer.llamacpp.TokenLogprobs), a signal of the learnt decision
only where its answer opens with Yes or No (bot.answer.llm_decide)."""

import math

import numpy as np
import pytest

from bot.answer.llamacpp import TokenLogprobs
from bot.answer.llm_decide import LLM_FEATURES, llm_features
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
