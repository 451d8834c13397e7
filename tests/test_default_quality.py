"""Quality floors for the default reader, the one users get: the local LLM, with the learnt decision over it and the
span reader (the rest of the suite pins the span reader alone, `EVENTBOT_LLM=none`, whose floors are in
tests/test_eval.py). Four development sets, one of each kind people ask — the article typed as in a chat, a new
document, yes/no, three-turn conversations — are scored by the real `eventbot eval` in one process (one model load).

Each accuracy floor sits two and a half questions under the figure measured here, so that a question or two decided
otherwise on another CPU passes and a drop of three questions fails; and above the share a bot that declines every
question gets (its unanswerable questions), so that declining everything fails. Each wrong-rate ceiling sits two and
a half questions over the wrong answers measured. These sets are development sets (the decision was fitted on their
readings), so the figures are above what a user meets: first-sight figures are in data/eval/FIRST_SIGHT.md."""

import json

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.llm

# Measured 2026-12-06 with `eventbot eval` and the default reader (2-core AMD EPYC with AVX-512, no AMX):
# set → (questions, unanswerable questions, answered right, answered wrong)
MEASURED = {
    "event26_qa": (30, 8, 19, 0),
    "newsdoc25_qa": (30, 8, 23, 1),
    "yesno8_qa": (16, 0, 10, 0),
    "chat26_conversations": (24, 4, 8, 2),
}
MARGIN = 2.5  # questions


def accuracy_floor(questions: int, right: int) -> float:
    return (right - MARGIN) / questions


def wrong_ceiling(questions: int, wrong: int) -> float:
    return (wrong + MARGIN) / questions


def test_each_floor_fails_a_bot_that_declines_everything_or_answers_three_fewer_right():
    for name, (questions, unanswerable, right, wrong) in MEASURED.items():
        floor = accuracy_floor(questions, right)
        assert unanswerable / questions < floor, f"{name}: declining everything would pass"
        assert (right - 3) / questions < floor <= (right - 2) / questions, name
        assert (wrong + 2) / questions <= wrong_ceiling(questions, wrong) < (wrong + 3) / questions, name


@pytest.fixture(scope="module")
def default_reader_eval(tmp_path_factory) -> dict[str, dict]:
    """Each set's overall metrics, read by the default reader (EVENTBOT_LLM unset, as a user runs it)."""
    datasets = [arg for name in MEASURED for arg in ("--dataset", str(ROOT / "data" / "eval" / f"{name}.jsonl"))]
    env = {"EVENTBOT_INDEX_DIR": str(tmp_path_factory.mktemp("unused"))}
    proc = run_cli("eval", "--json", *datasets, env=env, unset=("EVENTBOT_LLM",))
    result = json.loads(proc.stdout)
    return {d["name"]: d["results"]["default"] for d in result["datasets"]}


def test_the_default_reader_keeps_its_floors(default_reader_eval):
    assert list(default_reader_eval) == list(MEASURED)
    misses = []
    for name, (questions, _, right, wrong) in MEASURED.items():
        run = default_reader_eval[name]
        metrics = run["metrics"]["overall"]
        assert len(run["items"]) == questions, name
        if metrics["accuracy"] < accuracy_floor(questions, right):
            misses.append(f"{name} accuracy {metrics['accuracy']:.3f} < {accuracy_floor(questions, right):.3f}")
        if metrics["wrong_rate"] > wrong_ceiling(questions, wrong):
            misses.append(f"{name} wrong rate {metrics['wrong_rate']:.3f} > {wrong_ceiling(questions, wrong):.3f}")
        if not any(item["backend"] == "llamacpp" for item in run["items"]):
            misses.append(f"{name}: no reply is the LLM's")
        if metrics["grounded_names"] is not None and metrics["grounded_names"] < 1.0:
            misses.append(f"{name}: an answer named what its quotes do not hold")
    assert not misses, "; ".join(misses)
