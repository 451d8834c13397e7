"""SQuAD evaluation: the official scoring on hand-made cases, and one small real `eventbot eval --squad` run."""

import json
from types import SimpleNamespace

import pytest

from bot.eval.datasets import SQUAD_DIR
from bot.eval.items import EvaluationError
from bot.eval.scoring import compute_f1, normalize_answer
from bot.eval.squad import SquadQuestion, document_text, prediction_of, resolve_articles, sample, score, score_question
from bot.eval.squad_report import QuestionResult, confidence_auc, summarize
from bot.types import Answer, Context
from tests.conftest import run_cli

SMALL_TRAIN_ARTICLE = "Sky_(United_Kingdom)"  # 22 paragraphs; a title with parentheses
OTHER_TRAIN_ARTICLE = "Black_Death"  # 23 paragraphs


def result(answers: list[str], prediction: str, confidence: float | None = None, abstained: bool = False):
    exact, f1 = score(answers, prediction)
    return QuestionResult("id", "A", "q?", answers, prediction, abstained, exact, f1, confidence, 10.0)


# -- scoring --------------------------------------------------------------------------------------------------


def test_normalize_answer_is_the_official_one():
    assert normalize_answer("The  Denver Broncos!") == "denver broncos"
    assert normalize_answer("an apple, a pear") == "apple pear"
    assert normalize_answer("Theatre") == "theatre"  # articles only as whole words
    assert normalize_answer("“Yes”") == "“yes”"  # the official script drops ASCII punctuation only


def test_exact_match_and_f1_take_the_best_gold_answer():
    assert score(["Denver Broncos", "the Broncos"], "Broncos.") == (1.0, 1.0)
    exact, f1 = score(["Denver Broncos"], "the Broncos won")
    assert exact == 0.0
    assert f1 == pytest.approx(2 * (1 / 2) * (1 / 2) / (1 / 2 + 1 / 2))  # precision 1/2, recall 1/2
    assert score(["Denver Broncos"], "Carolina Panthers") == (0.0, 0.0)
    assert compute_f1("x y y", "y y z") == pytest.approx(2 / 3)  # token bags: two common "y"


def test_unanswerable_scores_one_only_for_an_empty_prediction():
    assert score([], "") == (1.0, 1.0)
    assert score([], "Denver") == (0.0, 0.0)
    assert score(["Denver"], "") == (0.0, 0.0)  # an abstention on an answerable question


def test_prediction_prefers_the_short_answer_then_the_text_without_markers():
    plain = Answer(question="q", answer="Denver won it [1].", abstained=False)
    assert prediction_of(plain) == "Denver won it."
    short = SimpleNamespace(answer="Denver won it [1].", abstained=False, short_answer="Denver")
    assert prediction_of(short) == "Denver"
    assert (
        prediction_of(SimpleNamespace(answer="Denver won it [1].", abstained=False, short_answer=None))
        == "Denver won it."
    )
    assert prediction_of(Answer(question="q", answer="The documents do not say.", abstained=True)) == ""


def test_a_question_is_scored_from_the_answer_with_its_confidence_and_retrieval_hits():
    paragraph = "The Denver Broncos won Super Bowl 50. The game was played in Santa Clara."
    question = SquadQuestion("q1", "Super_Bowl_50", "Who won?", ["Denver Broncos"], paragraph)
    in_paragraph = Context(
        chunk_id="c1", source="Super_Bowl_50.txt", text="The game was played in Santa Clara.", score=0.5
    )
    elsewhere = Context(
        chunk_id="c2", source="Super_Bowl_50.txt", text="Super Bowl 50 was an American football game.", score=0.4
    )
    other = Context(chunk_id="c3", source="Warsaw.txt", text="Warsaw is the capital of Poland.", score=0.3)
    got = Answer(
        question="Who won?",
        answer="The Denver Broncos [1].",
        abstained=False,
        confidence=0.8,
        timings_ms={"total": 5.0},
    )
    r = score_question(question, got.model_copy(update={"contexts": [other, in_paragraph]}), latency_ms=9.0)
    assert (r.prediction, r.exact, r.f1, r.confidence, r.latency_ms) == ("The Denver Broncos.", 1.0, 1.0, 0.8, 5.0)
    assert r.correct and not r.wrong
    assert r.article_hit and r.paragraph_hit
    title_only = score_question(question, got.model_copy(update={"contexts": [elsewhere, other]}), latency_ms=9.0)
    assert title_only.article_hit and not title_only.paragraph_hit  # another paragraph of the article
    missed = score_question(question, got.model_copy(update={"contexts": [other]}), latency_ms=9.0)
    assert not missed.article_hit and not missed.paragraph_hit
    assert summarize([r, title_only, missed])["hit_article"] == pytest.approx(2 / 3)
    assert summarize([r, title_only, missed])["hit_paragraph"] == pytest.approx(1 / 3)


def test_wrong_rate_counts_poor_answers_and_any_answer_to_unanswerables():
    results = [
        result(["Denver Broncos"], "Denver Broncos"),  # right
        result(["Denver Broncos"], "Carolina"),  # wrong: answered, F1 0
        result(["Denver Broncos"], "", abstained=True),  # declined: not wrong
        result([], "Denver"),  # wrong: an answer where there is none
        result([], "", abstained=True),  # right: declined
    ]
    assert [r.wrong for r in results] == [False, True, False, True, False]
    m = summarize(results)
    assert m["wrong_rate"] == pytest.approx(2 / 5)
    assert m["abstention_rate"] == pytest.approx(2 / 5)
    assert (m["total"], m["HasAns_total"], m["NoAns_total"]) == (5, 3, 2)
    assert m["exact"] == pytest.approx(100 * 2 / 5)
    assert m["HasAns_exact"] == pytest.approx(100 / 3)
    assert m["NoAns_exact"] == m["NoAns_f1"] == pytest.approx(50.0)


def test_auc_ranks_confidence_against_correctness_and_needs_confidences():
    ranked = [result(["x"], "x", 0.9), result(["x"], "y", 0.2), result([], "x", 0.1)]
    assert confidence_auc(ranked) == 1.0
    assert confidence_auc([result(["x"], "x", 0.1), result([], "x", 0.9)]) == 0.0  # answering an unanswerable: wrong
    declined = result([], "", 0.95, abstained=True)  # an unanswerable question's label is 0 even when declined
    assert confidence_auc([result(["x"], "x", 0.9), declined]) == 0.0
    assert confidence_auc([result(["x"], "x"), result(["x"], "y")]) is None
    assert summarize(ranked)["auc"] == 1.0


def test_sample_is_spread_over_the_whole_article():
    assert sample(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert sample(list(range(10)), 3) == [0, 3, 6]
    assert sample(list(range(4)), 6) == [0, 1, 2, 3]


def test_document_is_the_title_then_the_paragraphs():
    article = {"title": "Super_Bowl_50", "paragraphs": [{"context": "First."}, {"context": "Second."}]}
    assert document_text(article) == "Super Bowl 50\n\nFirst.\n\nSecond.\n"


# -- the real CLI ---------------------------------------------------------------------------------------------

needs_squad = pytest.mark.skipif(not (SQUAD_DIR / "split.json").is_file(), reason=f"no SQuAD folder at {SQUAD_DIR}")


def test_squad_options_are_checked_before_any_work(tmp_path):
    for args in (["--squad", str(tmp_path), "--articles", "train"], ["--limit", "3"], ["--squad", str(tmp_path)]):
        proc = run_cli("eval", *args, check=False)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("eventbot: ") and proc.stderr.count("\n") == 1, proc.stderr


@needs_squad
def test_unknown_articles_are_user_errors():
    with pytest.raises(EvaluationError, match="not train, heldout, test or an article title"):
        resolve_articles(["No_such_article"], SQUAD_DIR)
    assert resolve_articles(["Super Bowl 50", "Super_Bowl_50"], SQUAD_DIR) == ["Super_Bowl_50"]
    proc = run_cli("eval", "--squad", str(SQUAD_DIR), "--articles", "No_such_article", check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0


@needs_squad
def test_cli_scores_a_small_train_article():
    proc = run_cli("eval", "--squad", str(SQUAD_DIR), "--articles", SMALL_TRAIN_ARTICLE, "--limit", "6", "--json")
    out = json.loads(proc.stdout)
    assert out["articles"] == [SMALL_TRAIN_ARTICLE] and out["first_sight"] == []
    run = out["results"]["default"]
    assert len(run["items"]) == 6
    assert {bool(i["answers"]) for i in run["items"]} == {True, False}  # the sample holds both halves
    m = run["metrics"]["all"]
    assert m == run["metrics"]["articles"][SMALL_TRAIN_ARTICLE]
    assert (m["total"], m["HasAns_total"] + m["NoAns_total"]) == (6, 6)
    for key in ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "NoAns_f1"):
        assert 0.0 <= m[key] <= 100.0
    assert m["exact"] <= m["f1"]
    assert 0.0 <= m["wrong_rate"] <= 1.0 and 0.0 <= m["abstention_rate"] <= 1.0
    assert m["auc"] is None or 0.0 <= m["auc"] <= 1.0
    assert m["latency_mean_ms"] > 0


@needs_squad
def test_cli_retrieval_only_finds_each_question_s_article_and_paragraph():
    """Two articles indexed together; only retrieval runs, so the figures are hit@k by article and by paragraph."""
    articles = [SMALL_TRAIN_ARTICLE, OTHER_TRAIN_ARTICLE]
    args = [a for title in articles for a in ("--articles", title)]
    proc = run_cli("eval", "--squad", str(SQUAD_DIR), *args, "--limit", "8", "--retrieval-only", "--json")
    out = json.loads(proc.stdout)
    assert out["retrieval_only"] is True
    run = out["results"]["default"]
    assert {(i["prediction"], i["abstained"]) for i in run["items"]} == {("", True)}  # nothing was answered
    m = run["metrics"]["all"]
    assert m["hit_article"] >= 0.9  # two unrelated articles: the question's own is nearly always among the passages
    assert 0.5 <= m["hit_paragraph"] <= m["hit_article"]
    proc = run_cli("eval", "--squad", str(SQUAD_DIR), *args, "--limit", "8", "--retrieval-only")
    assert "paragraph@k %" in proc.stdout and "HasAns F1" not in proc.stdout
