"""The options of the `eventbot` commands that take a paragraph to describe, named here (typer's `Annotated` types)
so that each command in ui/cli.py reads short."""

import os
from pathlib import Path
from typing import Annotated

import typer

# -- the collection a command reads or writes


def use_collection(name: str | None) -> str | None:
    """--collection NAME: every setting this command reads (and a `serve --workers` worker's) takes NAME as
    EVENTBOT_COLLECTION; set before any is read."""
    if name is not None:
        from bot.settings import checked_collection

        try:
            os.environ["EVENTBOT_COLLECTION"] = checked_collection(name)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return name


CollectionOption = Annotated[
    str | None,
    typer.Option(
        "--collection",
        callback=use_collection,
        help="The collection of documents (default: EVENTBOT_COLLECTION, else 'eventbot'); each is indexed and "
        "asked apart.",
    ),
]


# -- eventbot eval

Datasets = Annotated[
    list[Path] | None,
    typer.Option("--dataset", help="A JSON Lines question set (repeatable; default: every data/eval/*.jsonl)."),
]
Configs = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="A configuration, e.g. retriever=dense,top_k=6 or answerer=llm (repeatable: run side by side).",
    ),
]
ReportPath = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Write a Markdown report here, and its accuracy chart next to it (.png); with --bake-off, every "
        "question's readings as JSON Lines.",
    ),
]
SquadDir = Annotated[
    Path | None,
    typer.Option(
        "--squad",
        help="A SQuAD folder (split.json, dev-v2.0.json, dev-v1.1.json): score its questions instead "
        "of the datasets, with the official SQuAD v2.0 scoring.",
    ),
]
Articles = Annotated[
    list[str] | None,
    typer.Option(
        "--articles",
        metavar="train|heldout|test|TITLE",
        help="With --squad: the articles to index and ask (repeatable). `test` is first sight only.",
    ),
]
PerArticle = Annotated[
    int | None,
    typer.Option("--limit", min=1, help="With --squad: at most N questions per article, spread evenly over it."),
]
RetrievalOnly = Annotated[
    bool,
    typer.Option(
        "--retrieval-only", help="With --squad: only retrieve (hit@k by article and paragraph); answer nothing."
    ),
]
BakeOff = Annotated[
    bool,
    typer.Option(
        "--bake-off",
        help="Read the sets once with the installed LLM and compare the span reader alone, the LLM alone (unchecked), "
        "the LLM behind the guard, and the learnt decision: accuracy / wrong / declined, and the chain's p50 / p95.",
    ),
]

# -- eventbot train-reader

OutDir = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Where the weights, answerability.json and the model card go (default: the shipped ones)."
    ),
]
CalibrateOnly = Annotated[
    bool, typer.Option("--calibrate-only", help="Keep the weights in --out; only learn again when to answer.")
]
CalibrateLLM = Annotated[
    bool,
    typer.Option(
        "--calibrate-llm",
        help="Keep the weights and answerability.json in --out; learn when to give the installed LLM's answer "
        "(reads every development set with it: about an hour on 2 cores).",
    ),
]
Refit = Annotated[
    bool,
    typer.Option(
        "--refit",
        help="With --calibrate-only or --calibrate-llm: fit again on the readings stored in --out (calibration.jsonl, "
        "llm_calibration.jsonl); read nothing.",
    ),
]
Calibrate = Annotated[
    bool,
    typer.Option("--calibrate/--no-calibrate", help="After training, learn when to answer (and write the model card)."),
]
Checkpoints = Annotated[
    Path | None,
    typer.Option(
        "--checkpoints", help="Where the run's checkpoint goes (default: .eventbot/training, ignored by git)."
    ),
]
CheckpointMinutes = Annotated[
    float, typer.Option("--checkpoint-minutes", help="Minutes of training between checkpoints.")
]
