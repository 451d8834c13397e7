"""`eventbot bench` runs end to end and reports every figure (values are for reading, not for asserting), and the
distractor corpus it generates is deterministic and keeps the article's facts to the article."""

import json

from bot.eval.bench import ALL_LABELS, LABELS, new_questions, warm_up_questions
from bot.eval.distractors import FORBIDDEN, article, write_corpus, write_large_document
from tests.conftest import run_cli

RATIOS = [
    "ask_p50_ratio",
    "ask_new_p50_ratio",
    "large_ask_new_p50_ratio",
    "large_ask_new_p50_vs_1",
    "ingest_vs_raw_encode",
    "ingest_vs_raw_encode_parse",
    "big_ask_p50_ratio",
    "big_whole_p50_ratio",
    "cold_serve_ratio",
    "rps_c12_vs_embed_only",
    "rps_c12_vs_c1",
]


def test_bench_quick_reports_all_figures():
    proc = run_cli("bench", "--json", "--quick")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    notes = figures.pop("notes")
    assert set(LABELS) <= set(ALL_LABELS) <= set(figures)
    assert not [k for k in notes if k not in ("machine", "large_answers_changed")], notes  # no part failed
    assert figures["chunks"] > 1 and figures["questions"] == 10
    assert figures["large_chunks"] > 10 * figures["chunks"] and figures["big_document_kb"] >= 20
    assert all(figures[k] > 0 for k in ("embed_chunks_per_s", "ask_p50_ms", "model_load_s", "floor_embed_ms"))
    assert figures["ask_p50_ms"] <= figures["ask_p95_ms"] <= figures["ask_max_ms"]
    assert all(figures[k] is not None and figures[k] > 0 for k in RATIOS), {k: figures[k] for k in RATIOS}
    assert figures["errors_c1"] == figures["errors_c4"] == figures["errors_c12"] == 0
    assert 0 < figures["hit_at_k"] <= 1 and 0 < figures["large_accuracy"] <= 1
    assert figures["serve_ready_rss_mb"] <= figures["rss_peak_mb"]
    assert figures["rps_c12_workers_2"] is None  # a full run measures it


def test_distractors_are_deterministic_and_name_nothing_of_the_article(tmp_path):
    small = write_corpus(tmp_path / "a", 5, seed=3)
    large = write_corpus(tmp_path / "b", 8, seed=3)
    assert [p.read_text() for p in small] == [p.read_text() for p in large[:5]]  # a small corpus starts a large one
    assert article(3, 0) != article(4, 0)
    texts = [p.read_text() for p in large]
    assert len(set(texts)) == len(texts) and all(3000 < len(t) < 6000 for t in texts)
    assert not any(FORBIDDEN.search(t) for t in texts)
    big = write_large_document(tmp_path / "big.txt", 300_000)
    assert big.stat().st_size >= 300_000 and not FORBIDDEN.search(big.read_text())


def test_load_questions_are_new_to_a_server():
    questions = new_questions(300)
    assert len(set(questions)) == 300
    assert new_questions(10, offset=300)[0] not in questions
    assert not set(warm_up_questions()) & set(new_questions(400))
