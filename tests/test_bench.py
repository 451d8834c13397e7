"""`eventbot bench` runs end to end and reports every figure (values are for reading, not for asserting)."""

import json

from bot.eval.bench import LABELS
from tests.conftest import run_cli


def test_bench_quick_reports_all_figures():
    proc = run_cli("bench", "--json", "--quick")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(LABELS) <= set(figures)
    assert figures["chunks"] > 1 and figures["questions"] == 10
    assert all(figures[k] > 0 for k in ("embed_chunks_per_s", "ask_p50_ms", "model_load_s"))
    assert figures["ask_p50_ms"] <= figures["ask_p95_ms"] <= figures["ask_max_ms"]
