"""The learnt decision to give the LLM's answer (bot.answer.llm_decide, bot.training.llm_calibration): how its
threshold is chosen from labelled rows, and the shipped fit."""

import json

import numpy as np
import pytest

from bot.answer.llm_decide import LLM_CALIBRATION_FILE, LLM_FEATURES, LLMDecision
from bot.reader.model import WEIGHTS_DIR, WEIGHTS_FILE
from bot.training.llm_calibration import chosen_threshold, finished_sets, fit_llm_decision, outcomes
from tests.conftest import run_cli


def row(group: str, llm_right: bool | None, reader_right: bool, reader_answered: bool, signal: float = 0.0) -> dict:
    features = None if llm_right is None else [signal] + [0.0] * (len(LLM_FEATURES) - 1)
    return {
        "group": group,
        "features": features,
        "llm_right": llm_right,
        "reader_right": reader_right,
        "reader_answered": reader_answered,
    }


def test_below_the_threshold_the_span_readers_reply_stands():
    rows = [
        row("a", True, False, False),  # the LLM right where the reader declined
        row("a", False, True, True),  # the LLM wrong where the reader was right
        row("a", None, True, False),  # no grounded LLM answer: the reader's right decline
        row("a", None, False, True),  # no grounded LLM answer: the reader's wrong answer
    ]
    p = np.array([0.9, 0.2, -1.0, -1.0])
    right, wrong = outcomes(rows, p, 0.5)
    assert right.tolist() == [True, True, True, False] and wrong.tolist() == [False, False, False, True]
    right, wrong = outcomes(rows, p, 0.1)  # the LLM's wrong answer given too
    assert right.tolist() == [True, False, True, False] and wrong.tolist() == [False, True, False, True]


def test_the_fit_learns_which_signal_tells_right_from_wrong_and_beats_both_readers_alone():
    rng = np.random.default_rng(0)
    rows = []
    for g in range(6):
        for _ in range(120):
            signal = rng.normal()
            rows.append(row(f"set{g}", bool(signal > 0), reader_right=False, reader_answered=False, signal=signal))
    model, threshold, figures = fit_llm_decision(rows)
    assert figures["auc"] > 0.95
    reader, every, decided = (
        figures["mean_accuracy_wrong"][k] for k in ("span_reader_alone", "every_grounded_llm_answer", "the_decision")
    )
    assert reader == [0.0, 0.0] and every[1] > 0.4  # declining everything, or answering everything half wrong
    assert decided[0] > 0.4 and decided[1] < 0.1  # the decision gives the right half and few wrong ones
    assert LLMDecision(model, threshold).probability([2.0] + [0.0] * (len(LLM_FEATURES) - 1)) > threshold


def test_the_shipped_decision_loads_and_says_what_it_was_fitted_on():
    path = WEIGHTS_DIR / LLM_CALIBRATION_FILE
    shipped = json.loads(path.read_text())
    figures, by_share = shipped["cross_validated"], shipped["yes_no_by_share"]
    decision = LLMDecision.load(path)
    assert 0 < decision.threshold < 1 and 0 < decision.yes_threshold < 1
    assert len(figures["groups"]) >= 20 and figures["llm_grounded_answers"] > 300
    # the share chooses Yes or No better than the LLM's own word, each set's threshold fitted on the others
    assert (
        by_share["questions"] > 100
        and by_share["right_by_the_share_each_set_held_out"] > by_share["right_by_the_llms_word"]
    )


@pytest.mark.parametrize("refit", [False, True])
def test_calibrate_llm_without_reader_weights_is_a_one_line_error(tmp_path, refit):
    result = run_cli(
        "train-reader", "--calibrate-llm", "--out", str(tmp_path), *(["--refit"] if refit else []), check=False
    )
    assert result.returncode == 2 and "no reader weights" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_threshold_is_the_best_utility_whose_wrong_rate_stays_under_the_ceiling():
    choices = {  # threshold: (accuracy, wrong) by set
        0.5: {"a": (0.70, 0.08), "b": (0.66, 0.06)},  # best utility (0.54), too many wrong (7 %)
        0.7: {"a": (0.60, 0.04), "b": (0.58, 0.03)},  # 3.5 % wrong: utility 0.52
        0.9: {"a": (0.50, 0.01), "b": (0.48, 0.01)},  # fewer wrong still, but a worse utility (0.47)
    }
    assert chosen_threshold(choices) == 0.7
    too_wrong = {t: {s: (a, w + 0.1) for s, (a, w) in f.items()} for t, f in choices.items()}
    assert chosen_threshold(too_wrong) == 0.5  # none under the ceiling: the best utility


@pytest.mark.parametrize("flag", ["--refit", "--resume"])
def test_refit_or_resume_without_earlier_readings_is_a_one_line_error(tmp_path, flag):
    (tmp_path / WEIGHTS_FILE).write_bytes(b"")  # the reader's weights are there, no readings of the LLM
    result = run_cli("train-reader", "--calibrate-llm", "--out", str(tmp_path), flag, check=False)
    assert result.returncode == 2 and f"{flag} needs the readings" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_resuming_keeps_the_sets_the_interrupted_reading_finished_and_reads_the_others_again():
    rows = [row("a", True, False, False), row("a", None, True, True), row("b", False, False, False)]
    rows.append(row("c", True, True, True))
    kept = finished_sets(rows, {"a": 2, "b": 3, "c": 1, "d": 4})  # b was cut after one of 3; d never started
    assert [r["group"] for r in kept] == ["a", "a", "c"]


def test_a_question_answered_without_the_llm_is_read_as_no_llm_answer():
    """An overview is answered from the key sentences without asking the LLM: its reading row has no LLM answer
    (a reading of the overview sets, or of a SQuAD question read as one, must not stop there)."""
    from bot.eval.items import EvalItem
    from bot.training.llm_calibration import reading_row
    from bot.types import Draft

    quoted = Draft("In short: Alysa Liu won gold [1].", False, [])
    state = {"draft": quoted, "timings_ms": {"x": 2.0}}  # no generate, no guard
    item = EvalItem(id="1", question="What is this about?", answerable=True, kind="overview", answers=["Liu"])
    row = reading_row("overviews", item, state)
    assert row["features"] is None and row["llm"] is None and row["llm_right"] is None
    assert row["chain_answered"] and row["reader_answered"] and not row["llm_alone_answered"]  # reader: the same reply
