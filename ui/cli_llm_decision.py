"""What `eventbot train-reader --calibrate-llm` and `eventbot eval --bake-off` print: the LLM's decision fitted, and
the four ways to answer side by side."""

import json
import sys
from pathlib import Path

import typer


def learn_when_to_give_the_llms_answer(out: Path, limit: int | None, refit: bool, resume: bool) -> None:
    from bot.errors import InputError
    from bot.training.fine_tune import WEIGHTS_FILE
    from bot.training.llm_calibration import calibrate_llm

    if not (out / WEIGHTS_FILE).is_file():
        raise InputError(f"no reader weights at {out / WEIGHTS_FILE}: the LLM's decision is fitted beside them")
    figures = (report := calibrate_llm(out, limit, refit, resume))["cross_validated"]
    reader, llm, decision = (
        figures["mean_accuracy_wrong"][k] for k in ("span_reader_alone", "every_grounded_llm_answer", "the_decision")
    )
    typer.echo(
        f"LLM decision: AUC {figures['auc']} over {figures['llm_grounded_answers']} grounded answers; mean accuracy / "
        f"wrong over {len(figures['groups'])} sets (out of fold): span reader {reader[0]:.2f} / {reader[1]:.3f}, every "
        f"grounded LLM answer {llm[0]:.2f} / {llm[1]:.3f}, the decision {decision[0]:.2f} / {decision[1]:.3f}; "
        f"{out / 'llm_decision.json'}. Yes or No by the P(Yes) share at {report['yes_threshold']}: {report['yes_no_by_share']}"
    )


def print_bake_off(datasets: list[Path], as_json: bool, report: Path | None) -> None:
    """`eventbot eval --bake-off`: a table (or JSON); with --report, every question's readings (JSON Lines)."""
    from rich.console import Console

    from bot.eval.report import bake_off_table
    from bot.training.llm_calibration import bake_off

    table = bake_off(datasets, rows_out=report)
    if as_json:
        return typer.echo(json.dumps(table))
    Console(width=None if sys.stdout.isatty() else 200).print(bake_off_table(table))
