"""Evaluation scripts: the metric functions on hand-made answers, and the real `eventbot eval` on both sets."""

import json
from pathlib import Path

import pytest

from bot.answer.cite import without_markers
from bot.eval.items import EvalItem, EvaluationError, dataset_corpus, load_dataset
from bot.eval.metrics import (
    abstention_precision_recall,
    citation_supports,
    evidence_rank,
    exact_match,
    grounded_token_share,
    is_correct,
    score_item,
    sentences,
    summarize,
    summarize_by_kind,
    token_f1,
    ungrounded_names,
)
from bot.eval.report import write_report
from bot.eval.running import Config, ConfigRun, DatasetRun, Evaluation, parse_config, parse_configs, settings_for
from bot.types import Answer, Citation, Context, Turn
from tests.conftest import ROOT, run_cli

SILVER = "Sakamoto won the silver medal, finishing 1.91 points behind Liu."
CAMERA = "Glenn then stood up and waved his hands in front of the lens to block the camera’s view."


def answer(
    text: str, quotes: list[str] = (), abstained: bool = False, contexts: list[str] = (), total_ms: float = 10.0
) -> Answer:
    return Answer(
        question="q",
        answer=text,
        abstained=abstained,
        citations=[Citation(n=n, source="a.txt", chunk_id=f"c{n}", quote=q) for n, q in enumerate(quotes, 1)],
        contexts=[Context(chunk_id=f"x{i}", source="a.txt", text=t, score=0.5) for i, t in enumerate(contexts)],
        timings_ms={"total": total_ms},
    )


def item(
    id_: str = "i1", answers=("silver",), answerable: bool = True, evidence: str = SILVER, kind: str = "factoid"
) -> EvalItem:
    return EvalItem(id=id_, question="q?", answers=list(answers), answerable=answerable, evidence=evidence, kind=kind)


# -- accuracy, EM, F1 -----------------------------------------------------------------------------------------


def test_markers_are_removed_before_comparing():
    assert without_markers("Liu won [1][2], ahead of Sakamoto [3, 4].") == "Liu won, ahead of Sakamoto."


def test_accuracy_normalizes_case_quotes_spaces_and_markers():
    got = answer("Glenn blocked  the\nCAMERA’S view [1].", [CAMERA])
    assert is_correct(got, ["the camera's view"], answerable=True)
    assert not is_correct(got, ["the cameraman"], answerable=True)


def test_a_count_is_right_in_digits_or_in_words():
    assert is_correct(answer("5 student midwives qualify [1]."), ["Five"], answerable=True)
    assert is_correct(answer("five midwives [1]."), ["5 midwives"], answerable=True)
    assert not is_correct(answer("15 student midwives [1]."), ["Five"], answerable=True)
    assert not is_correct(answer("4 student midwives [1]."), ["Five"], answerable=True)


def test_an_abstention_is_never_a_correct_answer_but_is_correct_for_unanswerable():
    said_no = answer("The article doesn't say whether silver was won.", abstained=True)
    assert not is_correct(said_no, ["silver"], answerable=True)
    assert is_correct(said_no, [], answerable=False)
    assert not is_correct(answer("Silver [1].", [SILVER]), [], answerable=False)


def test_an_answer_of_several_sentences_is_right_when_it_names_enough_key_points_and_nothing_its_quotes_lack():
    points = ["Alysa Liu | Liu", "gold", "Sakamoto", "silver | second"]
    quotes = [SILVER, "Alysa Liu won the gold medal."]
    overview = answer("Alysa Liu won gold [2]. Sakamoto took silver, 1.91 points behind [1].", quotes)
    scored = score_item(item(answers=(), evidence=SILVER, kind="overview").model_copy(
        update={"key_points": points, "min_points": 3}), overview)  # fmt: skip
    assert scored.correct and scored.key_points == 1.0
    assert not is_correct(answer("Liu won gold [2].", quotes), [], True, key_points=points, min_points=3)
    made_up = answer("Alysa Liu won gold [2]. Sakamoto took silver, 2.5 points behind [1].", quotes)
    assert not is_correct(made_up, [], True, key_points=points, min_points=3)  # 2.5: not in what it cites
    declined = score_item(item(answers=()).model_copy(update={"key_points": points, "min_points": 3}),
                          answer("The article doesn't say.", abstained=True))  # fmt: skip
    assert not declined.correct and declined.key_points == 0.0


def test_key_points_label_an_item_and_min_points_must_fit_them(tmp_path):
    good = {"id": "o1", "question": "what happened?", "answerable": True, "kind": "overview",
            "key_points": ["Liu", "gold"], "min_points": 2}  # fmt: skip
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps(good) + "\n")
    assert load_dataset(path)[0].key_points == ["Liu", "gold"]
    path.write_text(json.dumps(good | {"min_points": 3}) + "\n")
    with pytest.raises(EvaluationError, match="min_points"):
        load_dataset(path)


def test_exact_match_is_squad_normalized():
    assert exact_match("The Silver medal [1].", ["silver medal"]) == 1.0
    assert exact_match("a silver medal, again", ["silver medal"]) == 0.0


def test_token_f1_takes_the_best_accepted_answer():
    # "alysa liu won gold" vs "alysa liu": precision 2/4, recall 1 → F1 2/3
    assert token_f1("Alysa Liu won gold [1]", ["Sakamoto", "Alysa Liu"]) == pytest.approx(2 / 3)
    assert token_f1("Sakamoto", ["Alysa Liu"]) == 0.0


# -- citations, groundedness, retrieval -----------------------------------------------------------------------


def test_citation_must_contain_single_sentence_evidence():
    assert citation_supports("finishing 1.91 points behind Liu", [SILVER])
    assert not citation_supports(SILVER, ["Sakamoto won the silver medal"])  # a fragment does not contain it
    assert not citation_supports(SILVER, [])


def test_citation_overlapping_multi_sentence_evidence_is_enough():
    evidence = "Sakamoto was in tears when she came off the ice.\n\n" + CAMERA
    assert sentences(evidence) == ["Sakamoto was in tears when she came off the ice.", CAMERA]
    assert citation_supports(evidence, [CAMERA.replace("’", "'")])  # one whole sentence, straight apostrophe
    assert not citation_supports(evidence, ["Glenn then stood"])  # too short to count as overlap


def test_grounded_token_share_counts_answer_tokens_in_the_quotes():
    assert grounded_token_share("Sakamoto won the silver medal [1].", [SILVER]) == 1.0
    assert grounded_token_share("Sakamoto won bronze [1].", [SILVER]) == pytest.approx(2 / 3)


def test_every_number_and_name_must_be_in_the_quotes():
    assert ungrounded_names("She finished 1.91 points behind Liu [1].", [SILVER]) == []
    assert ungrounded_names("Sakamoto’s margin was 2.5 points behind Alysa Liu.", [SILVER]) == ["2.5", "Alysa Liu"]
    # a sentence-opening word is no name, but a sentence-opening name is
    assert ungrounded_names("According to Tass, Kaori won.", [SILVER]) == ["Tass", "Kaori"]


def test_evidence_rank_finds_the_first_context_holding_a_sentence_of_it():
    evidence = "Sakamoto was in tears when she came off the ice. " + CAMERA
    contexts = ["Thursday’s free skate was the last one.", "Later: " + CAMERA + " More text.", evidence]
    assert evidence_rank(evidence, contexts) == 2
    assert evidence_rank(evidence, contexts[:1]) is None


# -- aggregation ----------------------------------------------------------------------------------------------


def scored_set():
    return [
        score_item(item("a1"), answer("Silver [1].", [SILVER], contexts=["x", SILVER], total_ms=10)),
        score_item(item("a2"), answer("The article doesn't say.", abstained=True, contexts=[SILVER], total_ms=20)),
        score_item(item("u1", [], False, "", "unanswerable"), answer("No.", abstained=True, total_ms=30)),
        score_item(item("u2", [], False, "", "unanswerable"), answer("Bronze in 2022 [1].", [SILVER], total_ms=40)),
    ]


def test_abstention_precision_and_recall():
    results = scored_set()
    # abstained: a2 (wrongly), u1 (rightly); unanswerable: u1, u2
    assert abstention_precision_recall(results) == (0.5, 0.5)
    assert abstention_precision_recall(results[:1]) == (None, None)


def test_summary_metrics_over_a_hand_made_set():
    m = summarize(scored_set())
    assert m["n"] == 4
    assert m["accuracy"] == 0.5  # a1 and u1
    assert m["exact_match"] == 0.5  # a1 exact, a2 abstained
    assert m["citation_precision"] == 1.0  # only a1 is an answered answerable item
    assert m["grounded_names"] == 0.5  # u2 says 2022, which its quote lacks
    assert m["hit_at_k"] == 1.0 and m["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["latency_p50_ms"] == 25.0


def test_an_unsure_reply_is_scored_by_whether_its_quote_holds_the_evidence():
    unsure = "I'm not sure; the closest the article comes is: “…” [1]"
    results = [
        score_item(item("h"), answer(unsure, [SILVER], abstained=True)),  # quotes the evidence
        score_item(item("m"), answer(unsure, [CAMERA], abstained=True)),  # quotes another sentence
        score_item(item("d"), answer("The article doesn't say.", abstained=True)),  # a decline quotes nothing
        score_item(item("u", [], False, "", "unanswerable"), answer(unsure, [SILVER], abstained=True)),
    ]
    assert [r.unsure for r in results] == [True, True, False, True]
    assert [r.unsure_quote_ok for r in results] == [True, False, None, None]  # judged on answerable questions only
    m = summarize(results)
    assert m["unsure_share"] == 0.75 and m["unsure_quote_holds_evidence"] == 0.5


def test_summary_by_kind_keeps_the_dataset_order():
    by_kind = summarize_by_kind(scored_set())
    assert list(by_kind["kinds"]) == ["factoid", "unanswerable"]
    assert by_kind["kinds"]["unanswerable"]["exact_match"] is None
    assert by_kind["kinds"]["factoid"]["abstention_recall"] is None


# -- datasets, configurations, report -------------------------------------------------------------------------


def test_dataset_lines_are_validated_and_the_sibling_folder_is_the_corpus(tmp_path):
    good = tmp_path / "race.jsonl"
    good.write_text(item().model_dump_json() + "\n\n", encoding="utf-8")
    assert [i.id for i in load_dataset(good)] == ["i1"]
    (tmp_path / "race").mkdir()
    assert dataset_corpus(good, settings_for(Config("default"))) == [tmp_path / "race"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"id": "x", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"bad.jsonl:3: not labelled yet: set \"answerable\""):
        load_dataset(bad)
    assert dataset_corpus(bad, settings_for(Config("default"))) == settings_for(Config("default")).corpus


def test_config_strings_become_settings(monkeypatch):
    monkeypatch.delenv("EVENTBOT_LLM", raising=False)
    config = parse_config("retriever=dense, top-k=6")
    assert config.label == "retriever=dense,top_k=6"
    settings = settings_for(config)
    assert (settings.retriever, settings.top_k) == ("dense", 6)
    assert settings_for(parse_config("answerer=extractive")).llm == "none"
    assert [c.label for c in parse_configs(["top_k=2", "top_k=2"])] == ["top_k=2", "top_k=2 #2"]
    assert settings_for(parse_config("answerer=llm")).llm == "llamacpp"  # the default LLM
    for bad in ("topk=3", "index_dir=/tmp/x", "retriever", "retriever=sparse"):
        with pytest.raises(EvaluationError):
            settings_for(parse_config(bad))
    monkeypatch.setenv("EVENTBOT_LLM", "none")
    with pytest.raises(EvaluationError, match="answerer=llm needs an LLM"):
        settings_for(parse_config("answerer=llm"))


def test_report_has_tables_failures_and_a_chart(tmp_path):
    results = scored_set()
    run = ConfigRun(Config("default"), {"top_k": 4}, {}, results, summarize_by_kind(results))
    dataset = DatasetRun("race", Path("race.jsonl"), [], ["factoid", "unanswerable"], [run])
    evaluation = Evaluation([Config("default")], [dataset])
    chart = write_report(evaluation, tmp_path / "out" / "report.md")
    text = (tmp_path / "out" / "report.md").read_text()
    assert chart == tmp_path / "out" / "report.png" and chart.read_bytes()[:4] == b"\x89PNG"
    assert "](report.png)" in text and "| overall | 4 | 0.50 |" in text and "hit@4" in text
    assert "`a2` (factoid)" in text and "`u2` (unanswerable)" in text and "`a1`" not in text


def test_history_is_kept_with_the_item():
    history = [Turn(role="user", content="Who won silver?"), Turn(role="assistant", content="Sakamoto")]
    follow = EvalItem(
        id="f", question="And her age?", answers=["25"], answerable=True, evidence="", kind="follow-up", history=history
    )
    assert score_item(follow, answer("25 [1]", ["25-year-old Sakamoto"])).history[0]["content"] == "Who won silver?"


# -- the real command on both sets ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def evaluation_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    proc = run_cli("eval", "--json", "--report", str(out / "report.md"))
    return json.loads(proc.stdout), out


def test_eval_runs_every_set_and_writes_the_report(evaluation_run):
    result, out = evaluation_run
    names = [
        "chat11_conversations",
        "chat12_conversations",
        "chat13_conversations",
        "chat14_conversations",
        "chat15_conversations",
        "chat16_conversations",
        "chat17_conversations",
        "chat18_conversations",
        "chat19_conversations",
        "chat20_conversations",
        "chat21_conversations",
        "chat22_conversations",
        "chat23_conversations",
        "chat24_conversations",
        "chat25_conversations",
        "chat26_conversations",
        "chat2_conversations",
        "chat2_qa",
        "chat3_conversations",
        "chat3_qa",
        "chat4_conversations",
        "chat4_qa",
        "chat5_conversations",
        "chat5_qa",
        "chat6_conversations",
        "chat6_qa",
        "chat7_conversations",
        "chat7_qa",
        "chat8_conversations",
        "chat8_qa",
        "chat9_conversations",
        "chat_conversations",
        "chat_qa",
        "chess_qa",
        "cycling_qa",
        "event11_qa",
        "event12_qa",
        "event13_qa",
        "event14_qa",
        "event15_qa",
        "event16_qa",
        "event17_qa",
        "event18_qa",
        "event19_qa",
        "event20_qa",
        "event21_qa",
        "event22_qa",
        "event23_qa",
        "event24_qa",
        "event25_qa",
        "event26_qa",
        "event7_qa",
        "event8_qa",
        "event9_qa",
        "event_qa",
        "event_qa_fresh",
        "event_qa_unseen",
        "fresh22a_qa",
        "fresh22art_qa",
        "fresh22b_qa",
        "fresh22c_qa",
        "fresh22d_qa",
        "fresh25a_qa",
        "fresh25art_qa",
        "fresh25b_qa",
        "fresh25c_qa",
        "fresh25d_qa",
        "fresh27a_qa",
        "fresh27art_qa",
        "fresh27b_qa",
        "fresh27c_qa",
        "fresh27d_qa",
        "marathon_qa",
        "newsdoc11_qa",
        "newsdoc12_qa",
        "newsdoc13_qa",
        "newsdoc14_qa",
        "newsdoc15_qa",
        "newsdoc16_qa",
        "newsdoc17_qa",
        "newsdoc18_qa",
        "newsdoc19_qa",
        "newsdoc20_qa",
        "newsdoc21_qa",
        "newsdoc22_qa",
        "newsdoc23_qa",
        "newsdoc24_qa",
        "newsdoc25_qa",
        "newsdoc26_qa",
        "newsdoc4_qa",
        "newsdoc5_qa",
        "newsdoc6_qa",
        "newsdoc7_qa",
        "newsdoc8_qa",
        "newsdoc9_qa",
        "newsdoc_qa",
        "newsyn10_qa",
        "overview1_qa",
        "overview2_qa",
        "overviewdoc1_qa",
        "overviewdoc2a_qa",
        "overviewdoc2b_qa",
        "overviewdoc2c_qa",
        "tennis_qa",
        "yesno10_qa",
        "yesno5_qa",
        "yesno6_qa",
        "yesno7_qa",
        "yesno8_qa",
        "yesno9_qa",
    ]
    assert [d["name"] for d in result["datasets"]] == names
    for d in result["datasets"]:
        items = d["results"]["default"]["items"]
        lines = [json.loads(line) for line in (ROOT / d["path"]).read_text().splitlines() if line.strip()]
        assert len(items) == sum(len(x["turns"]) if "turns" in x else 1 for x in lines)  # a conversation per turn
        assert {"id", "question", "answer", "abstained", "correct"} <= set(items[0])
    assert "## marathon_qa" in (out / "report.md").read_text()
    assert (out / "report.png").read_bytes()[:4] == b"\x89PNG"


# Regression floors and wrong-rate ceilings (answered, but wrong), measured on 2026-12-03 with the decision fitted on
# fp32 readings (the default on every CPU, so that every machine serves the same bot): each floor sits under the lower
# of two runs, the reader and embedder in fp32 and in bf16 (`EVENTBOT_READER_BF16`/`EMBED_BF16` on; 20 of 974
# replies decided differently), by one question's worth of its set (1/n; for abstention precision and recall, one
# abstention or one unanswerable question), and each ceiling above the higher by as much, so that one question more
# or less on another CPU cannot fail the test; a floor that would be 0 is left out (it could not fail). The decision
# was fitted on these sets' readings, so these are not what a user meets: out of fold the same sets average 0.37
# accuracy with 0.027 wrong; first-sight figures are in data/eval/FIRST_SIGHT.md. event_qa and marathon_qa were the
# first development sets; the others were written blind by helpers who never saw the code, each scored once before
# use (rounds 1-7). A yes/no item (`"yes_no"`) is right only when the reply opens with the right "Yes" or "No". Raise
# these as the answerer improves (git log -p tests/test_eval.py has the old values). Every accuracy floor sits above
# the share of its set's unanswerable questions, which a bot that declines everything gets (checked below): on
# 2026-12-06 (issue 58) sixteen did not; those where the span reader's figure that day stood at least two questions
# above that share got a floor one and a half questions under it, and the others lost their accuracy floor.
FLOORS = {
    "chat2_conversations": {"accuracy": 0.24, "grounded_names": 1.0},
    "chat2_qa": {"accuracy": 0.54, "abstention_precision": 0.33, "abstention_recall": 0.89, "grounded_names": 1.0},
    "chat3_conversations": {
        "accuracy": 0.29,
        "abstention_precision": 0.09,
        "abstention_recall": 0.66,
        "grounded_names": 1.0,
    },
    "chat3_qa": {"accuracy": 0.59, "abstention_precision": 0.38, "abstention_recall": 0.9, "grounded_names": 1.0},
    "chat4_conversations": {
        "accuracy": 0.29,
        "abstention_precision": 0.16,
        "abstention_recall": 0.49,
        "grounded_names": 1.0,
    },
    "chat4_qa": {"accuracy": 0.44, "abstention_precision": 0.33, "abstention_recall": 0.91, "grounded_names": 1.0},
    "chat5_conversations": {
        "accuracy": 0.29,
        "abstention_precision": 0.14,
        "abstention_recall": 0.74,
        "grounded_names": 1.0,
    },
    "chat5_qa": {"accuracy": 0.47, "abstention_precision": 0.29, "abstention_recall": 0.89, "grounded_names": 1.0},
    "chat6_conversations": {"accuracy": 0.12, "grounded_names": 1.0},
    "chat6_qa": {"accuracy": 0.59, "abstention_precision": 0.38, "abstention_recall": 0.9, "grounded_names": 1.0},
    "chat7_conversations": {
        "accuracy": 0.2,
        "abstention_precision": 0.04,
        "abstention_recall": 0.49,
        "grounded_names": 1.0,
    },
    "chat7_qa": {"accuracy": 0.47, "abstention_precision": 0.28, "abstention_recall": 0.88, "grounded_names": 1.0},
    "chat_conversations": {
        "accuracy": 0.2,
        "abstention_precision": 0.04,
        "abstention_recall": 0.49,
        "grounded_names": 1.0,
    },
    "chat_qa": {"accuracy": 0.54, "abstention_precision": 0.33, "abstention_recall": 0.89, "grounded_names": 1.0},
    "chess_qa": {"accuracy": 0.43, "abstention_precision": 0.25, "abstention_recall": 0.85, "grounded_names": 1.0},
    "cycling_qa": {"accuracy": 0.44, "abstention_precision": 0.31, "abstention_recall": 0.9, "grounded_names": 1.0},
    "event7_qa": {"accuracy": 0.59, "abstention_precision": 0.36, "abstention_recall": 0.87, "grounded_names": 1.0},
    "event_qa": {"accuracy": 0.48, "abstention_precision": 0.4, "abstention_recall": 0.96, "grounded_names": 1.0},
    "event_qa_fresh": {"accuracy": 0.34, "abstention_precision": 0.27, "abstention_recall": 0.9, "grounded_names": 1.0},
    "event_qa_unseen": {
        "accuracy": 0.34,
        "abstention_precision": 0.27,
        "abstention_recall": 0.9,
        "grounded_names": 1.0,
    },
    "marathon_qa": {"accuracy": 0.52, "abstention_precision": 0.37, "abstention_recall": 0.92, "grounded_names": 1.0},
    "newsdoc4_qa": {"accuracy": 0.49, "abstention_precision": 0.31, "abstention_recall": 0.87, "grounded_names": 1.0},
    "newsdoc5_qa": {"accuracy": 0.56, "abstention_precision": 0.27, "abstention_recall": 0.83, "grounded_names": 1.0},
    "newsdoc6_qa": {"accuracy": 0.49, "abstention_precision": 0.37, "abstention_recall": 0.89, "grounded_names": 1.0},
    "newsdoc7_qa": {"accuracy": 0.56, "abstention_precision": 0.31, "abstention_recall": 0.85, "grounded_names": 1.0},
    "newsdoc_qa": {"accuracy": 0.56, "abstention_precision": 0.34, "abstention_recall": 0.87, "grounded_names": 1.0},
    "tennis_qa": {"accuracy": 0.33, "abstention_precision": 0.23, "abstention_recall": 0.85, "grounded_names": 1.0},
    "yesno5_qa": {"accuracy": 0.31, "grounded_names": 1.0},
    "yesno6_qa": {"accuracy": 0.37, "grounded_names": 1.0},
    "yesno7_qa": {"accuracy": 0.24, "grounded_names": 1.0},
    # round 8 (2026-12-04), measured in fp32 only (no bf16 CPU at hand): two questions' worth under it
    "chat8_conversations": {"accuracy": 0.33},
    "chat8_qa": {"accuracy": 0.4},
    "event8_qa": {"accuracy": 0.46},
    "newsdoc8_qa": {"accuracy": 0.6},
    "yesno8_qa": {"accuracy": 0.25},
    # round 9 (2026-12-05), its first sight (the span reader alone, fp32, AVX-512): two questions' worth under it
    "chat9_conversations": {},  # at or under the decline-everything share: no floor
    "event9_qa": {"accuracy": 0.3},
    "newsdoc9_qa": {"accuracy": 0.57},
    "yesno9_qa": {"accuracy": 0.06},
    # round 10 (2026-12-05), yes/no only, its first sight (the span reader alone): two questions' worth under it
    "newsyn10_qa": {"accuracy": 0.25},
    "yesno10_qa": {"accuracy": 0.04},
    # round 11 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat11_conversations": {"accuracy": 0.187},  # raised over the decline-everything share
    "event11_qa": {"accuracy": 0.4},
    "newsdoc11_qa": {"accuracy": 0.53},
    # round 12 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat12_conversations": {},  # at or under the decline-everything share: no floor
    "event12_qa": {"accuracy": 0.33},
    "newsdoc12_qa": {"accuracy": 0.43},
    # round 13 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat13_conversations": {},  # at or under the decline-everything share: no floor
    "event13_qa": {"accuracy": 0.3},
    "newsdoc13_qa": {"accuracy": 0.33},
    # round 14 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat14_conversations": {},  # at or under the decline-everything share: no floor
    "event14_qa": {"accuracy": 0.43},
    "newsdoc14_qa": {"accuracy": 0.43},
    # round 15 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat15_conversations": {},  # at or under the decline-everything share: no floor
    "event15_qa": {"accuracy": 0.33},
    "newsdoc15_qa": {"accuracy": 0.6},
    # round 16 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat16_conversations": {"accuracy": 0.187},  # raised over the decline-everything share
    "event16_qa": {"accuracy": 0.4},
    "newsdoc16_qa": {"accuracy": 0.5},
    # round 17 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat17_conversations": {"accuracy": 0.25},
    "event17_qa": {"accuracy": 0.33},
    "newsdoc17_qa": {"accuracy": 0.36},
    # round 18 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat18_conversations": {},  # at or under the decline-everything share: no floor
    "event18_qa": {"accuracy": 0.3},
    "newsdoc18_qa": {"accuracy": 0.5},
    # round 19 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat19_conversations": {},  # at or under the decline-everything share: no floor
    "event19_qa": {"accuracy": 0.36},
    "newsdoc19_qa": {"accuracy": 0.4},
    # round 20 (2026-12-05), its first sight (the span reader alone): two questions' worth under it
    "chat20_conversations": {},  # at or under the decline-everything share: no floor
    "event20_qa": {"accuracy": 0.36},
    "newsdoc20_qa": {"accuracy": 0.36},
    # round 21 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat21_conversations": {"accuracy": 0.2},
    "event21_qa": {"accuracy": 0.36},
    "newsdoc21_qa": {"accuracy": 0.4},
    # round 22 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat22_conversations": {"accuracy": 0.187},  # raised over the decline-everything share
    "event22_qa": {"accuracy": 0.3},
    "newsdoc22_qa": {"accuracy": 0.33},
    # round 23 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat23_conversations": {"accuracy": 0.25},
    "event23_qa": {"accuracy": 0.36},
    "newsdoc23_qa": {"accuracy": 0.3},
    # round 24 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat24_conversations": {},  # at or under the decline-everything share: no floor
    "event24_qa": {"accuracy": 0.283},  # raised over the decline-everything share
    "newsdoc24_qa": {"accuracy": 0.33},
    # round 25 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat25_conversations": {},  # at or under the decline-everything share: no floor
    "event25_qa": {"accuracy": 0.3},
    "newsdoc25_qa": {"accuracy": 0.43},
    # round 26 (2026-12-06), its first sight (the span reader alone): two questions' worth under it
    "chat26_conversations": {},  # at or under the decline-everything share: no floor
    "event26_qa": {"accuracy": 0.283},  # raised over the decline-everything share
    "newsdoc26_qa": {"accuracy": 0.36},
    # overview round 1 (2026-12-06, issue 59): the span reader answers none of these right (first sight 1 of 12 each,
    # the unanswerable one declined): no floor until it can
    "overview1_qa": {},
    "overviewdoc1_qa": {},
    # overview round 2 (2026-12-06): first sight 1, 2, 2 and 2 of 10 (the span reader quotes an overview's opening):
    # 1.5 questions under that is at or under the decline-everything share (0.1): no floor
    "overview2_qa": {},
    "overviewdoc2a_qa": {},
    "overviewdoc2b_qa": {},
    "overviewdoc2c_qa": {},
    # overview round 3 (2026-12-07): the span reader alone 2, 3, 3, 2 and 2 of 10: two questions under that is at or
    # under the decline-everything share (0.1): no floor
    "fresh22art_qa": {},
    "fresh22a_qa": {},
    "fresh22b_qa": {},
    "fresh22c_qa": {},
    "fresh22d_qa": {},
    # overview round 4 (2026-12-07): the span reader alone 3, 3, 3, 4 and 2 of 10; two questions under that is at or
    # under the decline-everything share (0.1) but for the factory bid's
    "fresh25art_qa": {},
    "fresh25a_qa": {},
    "fresh25b_qa": {},
    "fresh25c_qa": {"accuracy": 0.2},
    "fresh25d_qa": {},
    # overview round 5 (2026-12-07): the span reader alone 3, 2, 3, 1 and 2 of 10; two questions under that is at or
    # under the decline-everything share (0.1): no floor
    "fresh27art_qa": {},
    "fresh27a_qa": {},
    "fresh27b_qa": {},
    "fresh27c_qa": {},
    "fresh27d_qa": {},
}
WRONG_RATE_CEILINGS = {
    "chat2_conversations": 0.13,
    "chat2_qa": 0.03,
    "chat3_conversations": 0.05,
    "chat3_qa": 0.03,
    "chat4_conversations": 0.13,
    "chat4_qa": 0.03,
    "chat5_conversations": 0.05,
    "chat5_qa": 0.03,
    "chat6_conversations": 0.05,
    "chat6_qa": 0.03,
    "chat7_conversations": 0.05,
    "chat7_qa": 0.06,
    "chat_conversations": 0.05,
    "chat_qa": 0.03,
    "chess_qa": 0.04,
    "cycling_qa": 0.03,
    "event7_qa": 0.04,
    "event_qa": 0.02,
    "event_qa_fresh": 0.03,
    "event_qa_unseen": 0.03,
    "marathon_qa": 0.03,
    "newsdoc4_qa": 0.04,
    "newsdoc5_qa": 0.04,
    "newsdoc6_qa": 0.04,
    "newsdoc7_qa": 0.04,
    "newsdoc_qa": 0.04,
    "tennis_qa": 0.04,
    "yesno5_qa": 0.07,
    "yesno6_qa": 0.07,
    "yesno7_qa": 0.07,
    # round 8 (2026-12-04), measured in fp32 only (no bf16 CPU at hand): two questions' worth of margin each way
    "chat8_conversations": 0.09,
    "chat8_qa": 0.05,
    "event8_qa": 0.07,
    "newsdoc8_qa": 0.05,
    "yesno8_qa": 0.13,
    # round 9 (2026-12-05): two questions' worth of margin over its first sight
    "chat9_conversations": 0.09,
    "event9_qa": 0.07,
    "newsdoc9_qa": 0.08,
    "yesno9_qa": 0.25,
    # round 10 (2026-12-05): two questions' worth of margin over its first sight
    "newsyn10_qa": 0.2,
    "yesno10_qa": 0.21,
    # round 11 (2026-12-05): two questions' worth of margin over its first sight
    "chat11_conversations": 0.17,
    "event11_qa": 0.07,
    "newsdoc11_qa": 0.1,
    # round 12 (2026-12-05): two questions' worth of margin over its first sight
    "chat12_conversations": 0.17,
    "event12_qa": 0.07,
    "newsdoc12_qa": 0.1,
    # round 13 (2026-12-05): two questions' worth of margin over its first sight
    "chat13_conversations": 0.13,
    "event13_qa": 0.1,
    "newsdoc13_qa": 0.17,
    # round 14 (2026-12-05): two questions' worth of margin over its first sight
    "chat14_conversations": 0.13,
    "event14_qa": 0.07,
    "newsdoc14_qa": 0.13,
    # round 15 (2026-12-05): two questions' worth of margin over its first sight
    "chat15_conversations": 0.08,
    "event15_qa": 0.1,
    "newsdoc15_qa": 0.1,
    # round 16 (2026-12-05): two questions' worth of margin over its first sight
    "chat16_conversations": 0.13,
    "event16_qa": 0.07,
    "newsdoc16_qa": 0.13,
    # round 17 (2026-12-05): two questions' worth of margin over its first sight
    "chat17_conversations": 0.08,
    "event17_qa": 0.07,
    "newsdoc17_qa": 0.07,
    # round 18 (2026-12-05): two questions' worth of margin over its first sight
    "chat18_conversations": 0.08,
    "event18_qa": 0.07,
    "newsdoc18_qa": 0.07,
    # round 19 (2026-12-05): two questions' worth of margin over its first sight
    "chat19_conversations": 0.08,
    "event19_qa": 0.07,
    "newsdoc19_qa": 0.07,
    # round 20 (2026-12-05): two questions' worth of margin over its first sight
    "chat20_conversations": 0.13,
    "event20_qa": 0.1,
    "newsdoc20_qa": 0.14,
    # round 21 (2026-12-06): two questions' worth of margin over its first sight
    "chat21_conversations": 0.13,
    "event21_qa": 0.07,
    "newsdoc21_qa": 0.14,
    # round 22 (2026-12-06): two questions' worth of margin over its first sight
    "chat22_conversations": 0.13,
    "event22_qa": 0.07,
    "newsdoc22_qa": 0.1,
    # round 23 (2026-12-06): two questions' worth of margin over its first sight
    "chat23_conversations": 0.09,
    "event23_qa": 0.07,
    "newsdoc23_qa": 0.14,
    # round 24 (2026-12-06): two questions' worth of margin over its first sight
    "chat24_conversations": 0.09,
    "event24_qa": 0.1,
    "newsdoc24_qa": 0.14,
    # round 25 (2026-12-06): two questions' worth of margin over its first sight
    "chat25_conversations": 0.13,
    "event25_qa": 0.1,
    "newsdoc25_qa": 0.14,
    # round 26 (2026-12-06): two questions' worth of margin over its first sight
    "chat26_conversations": 0.13,
    "event26_qa": 0.07,
    "newsdoc26_qa": 0.14,
    # overview round 1 (2026-12-06): two questions' worth of margin over its first sight
    "overview1_qa": 0.25,
    "overviewdoc1_qa": 0.17,
    # overview round 2 (2026-12-06): two questions' worth of margin over its first sight
    "overview2_qa": 0.4,
    "overviewdoc2a_qa": 0.2,
    "overviewdoc2b_qa": 0.3,
    "overviewdoc2c_qa": 0.3,
    # overview round 3 (2026-12-07): two questions' worth of margin over the span reader's figure when it became a
    # development set (1, 0, 1, 0 and 1 of 10 wrong)
    "fresh22art_qa": 0.3,
    "fresh22a_qa": 0.2,
    "fresh22b_qa": 0.3,
    "fresh22c_qa": 0.2,
    "fresh22d_qa": 0.3,
    # overview round 4 (2026-12-07): two questions' worth of margin over the span reader's figure when it became a
    # development set (0, 0, 1, 1 and 1 of 10 wrong)
    "fresh25art_qa": 0.2,
    "fresh25a_qa": 0.2,
    "fresh25b_qa": 0.3,
    "fresh25c_qa": 0.3,
    "fresh25d_qa": 0.3,
    # overview round 5 (2026-12-07): two questions' worth of margin over the span reader's figure at its first sight
    # (1, 2, 0, 0 and 1 of 10 wrong)
    "fresh27art_qa": 0.3,
    "fresh27a_qa": 0.4,
    "fresh27b_qa": 0.2,
    "fresh27c_qa": 0.2,
    "fresh27d_qa": 0.3,
}


def test_eval_quality_floors(evaluation_run):
    result, _ = evaluation_run
    misses = []
    for d in result["datasets"]:
        m = d["results"]["default"]["metrics"]["overall"]
        checks = FLOORS[d["name"]]
        misses += [
            f"{d['name']} {key} {m[key]} < {bar:.3f}" for key, bar in checks.items() if m[key] is None or m[key] < bar
        ]
        if m["wrong_rate"] > WRONG_RATE_CEILINGS[d["name"]]:
            misses.append(f"{d['name']} wrong_rate {m['wrong_rate']:.2f} > {WRONG_RATE_CEILINGS[d['name']]:.2f}")
    assert not misses, "; ".join(misses)


def test_every_accuracy_floor_fails_a_bot_that_declines_everything():
    too_low = {}
    for name, checks in FLOORS.items():
        items = load_dataset(ROOT / "data" / "eval" / f"{name}.jsonl")
        declined_right = sum(not item.answerable for item in items) / len(items)
        if "accuracy" in checks and checks["accuracy"] <= declined_right:
            too_low[name] = (checks["accuracy"], round(declined_right, 3))
    assert not too_low, too_low


def test_wrong_rate_counts_confident_wrong_answers_not_abstentions():
    results = [
        score_item(item("w", answers=["silver"]), answer("Gold [1].", [SILVER])),  # answered, wrong
        score_item(item("a", answers=["silver"]), answer("The article doesn't say.", abstained=True)),  # a miss
        score_item(item("r", answers=["silver"]), answer("Silver [1].", [SILVER])),  # right
        score_item(item("u", answers=[], answerable=False, evidence=""), answer("Silver [1].", [SILVER])),  # wrong
    ]
    assert summarize(results)["wrong_rate"] == 0.5
    assert summarize(results)["accuracy"] == 0.25


def test_accepted_answers_match_as_whole_words():
    assert not is_correct(answer("She did not say [1].", [SILVER]), ["no"], answerable=True)
    assert is_correct(answer("No — silver medal [1].", [SILVER]), ["no"], answerable=True)


def test_a_conversation_becomes_its_turns_in_order(tmp_path):
    path = tmp_path / "conv.jsonl"
    turns = [
        {"question": "who got silver", "answers": ["Sakamoto"], "answerable": True, "evidence": ""},
        {"question": "how old is she", "answers": ["25"], "answerable": True, "evidence": "", "kind": "pronoun"},
    ]
    path.write_text(json.dumps({"id": "c1", "kind": "conversation", "turns": turns}) + "\n")
    items = load_dataset(path)
    assert [(i.id, i.kind, i.conversation) for i in items] == [("c1.1", "turn 1", "c1"), ("c1.2", "pronoun", "c1")]
    path.write_text('{"id": "c1", "turns": [{"question": "q"}]}\n')
    with pytest.raises(EvaluationError, match="answerable"):
        load_dataset(path)
