"""The report `eventbot eval` prints or writes: tables by kind and of the overall metrics (rich, for the terminal),
a Markdown report with the failing items and an accuracy chart, and the whole evaluation as one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bot.eval.running import DatasetRun, Evaluation, EvaluationError

# -- tables, report, chart ------------------------------------------------------------------------------------

SECONDARY = [
    ("abstention precision", "abstention_precision", "{:.2f}"),
    ("abstention recall", "abstention_recall", "{:.2f}"),
    ("citation precision", "citation_precision", "{:.2f}"),
    ("unsure replies", "unsure_share", "{:.2f}"),
    ("unsure quote holds the evidence", "unsure_quote_holds_evidence", "{:.2f}"),
    ("grounded tokens", "grounded_tokens", "{:.2f}"),
    ("grounded names", "grounded_names", "{:.2f}"),
    ("hit@k", "hit_at_k", "{:.2f}"),
    ("MRR", "mrr", "{:.2f}"),
    ("latency p50 ms", "latency_p50_ms", "{:.1f}"),
    ("latency p95 ms", "latency_p95_ms", "{:.1f}"),
    ("answer words", "answer_words", "{:.1f}"),
    ("key points named", "key_points", "{:.2f}"),
]


def _fmt(value: float | None, pattern: str = "{:.2f}") -> str:
    return "—" if value is None else pattern.format(value)


def kind_table(dataset: DatasetRun) -> tuple[list[str], list[list[str]]]:
    """Rows = kinds + overall; columns = accuracy, wrong rate, EM, F1 for each configuration side by side."""
    several = len(dataset.runs) > 1
    headers = ["kind", "n"]
    for i, _ in enumerate(dataset.runs, 1):
        suffix = f" #{i}" if several else ""  # the legend (config_legend) names #1, #2, …
        headers += [f"accuracy{suffix}", f"wrong{suffix}", f"EM{suffix}", f"F1{suffix}"]
    rows = []
    for kind in [*dataset.kinds, "overall"]:
        first = dataset.runs[0].metrics
        n = (first["overall"] if kind == "overall" else first["kinds"][kind])["n"]
        row = [kind, str(n)]
        for run in dataset.runs:
            m = run.metrics["overall"] if kind == "overall" else run.metrics["kinds"][kind]
            row += [_fmt(m["accuracy"]), _fmt(m["wrong_rate"]), _fmt(m["exact_match"]), _fmt(m["f1"])]
        rows.append(row)
    return headers, rows


def config_legend(evaluation: Evaluation) -> str | None:
    """`#1 retriever=dense · #2 retriever=hybrid` when several configurations share the tables."""
    if len(evaluation.configs) < 2:
        return None
    return " · ".join(f"#{i} {c.label}" for i, c in enumerate(evaluation.configs, 1))


def metric_table(dataset: DatasetRun) -> tuple[list[str], list[list[str]]]:
    """Rows = the overall secondary metrics; one column per configuration."""
    k = {r.settings.get("top_k") for r in dataset.runs}
    several = len(dataset.runs) > 1
    headers = [
        "metric",
        *(f"#{i} {r.config.label}" if several else r.config.label for i, r in enumerate(dataset.runs, 1)),
    ]
    rows = []
    for title, key, pattern in SECONDARY:
        if key == "hit_at_k" and len(k) == 1:
            title = f"hit@{k.pop()}"
        rows.append([title, *(_fmt(r.metrics["overall"][key], pattern) for r in dataset.runs)])
    return headers, rows


def rich_table(title: str, headers: list[str], rows: list[list[str]], caption: str | None, total: str):
    """A terminal table: the first column left-aligned, figures right-aligned, the `total` row in bold."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row, style="bold" if row[0] == total else None)
    return table


def bake_off_table(table: dict[str, dict]):
    """`eventbot eval --bake-off`'s figures (bot.training.llm_calibration.bake_off) as a rich table."""
    from rich.table import Table

    from bot.training.llm_calibration import BAKE_OFF_WAYS

    shown = Table("set", "n", *BAKE_OFF_WAYS, "p50 / p95 ms", title="accuracy / wrong / declined")
    for name, row in table.items():
        ways = [" / ".join(f"{v:.2f}" for v in row[way]) for way in BAKE_OFF_WAYS]
        shown.add_row(name, str(row["n"]), *ways, f"{row['p50_ms']} / {row['p95_ms']}")
    return shown


def rich_tables(evaluation: Evaluation) -> list:
    legend = config_legend(evaluation)
    return [
        rich_table(title, *table, caption, total="overall")
        for d in evaluation.datasets
        for title, table, caption in (
            (f"{d.name}: answers by kind", kind_table(d), legend),
            (f"{d.name}: overall", metric_table(d), None),
        )
    ]


def markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_report(evaluation: Evaluation, chart_name: str | None) -> str:
    out = ["# eventbot evaluation", ""]
    out += ["Configurations: " + ", ".join(f"#{i} `{c.label}`" for i, c in enumerate(evaluation.configs, 1)), ""]
    if chart_name:
        out += [f"![Accuracy by kind per configuration]({chart_name})", ""]
    for d in evaluation.datasets:
        out += [f"## {d.name}", "", f"{d.path} — corpus: {', '.join(p.name for p in d.corpus)}", ""]
        out += [markdown_table(*kind_table(d)), "", markdown_table(*metric_table(d)), ""]
        for run in d.runs:
            failed = [r for r in run.results if not r.correct]
            out += [f"### Failing items — `{run.config.label}` ({len(failed)} of {len(run.results)})", ""]
            for r in failed:
                expected = " / ".join(r.expected) if r.answerable else "an abstention"
                after = f" (after: “{one_line(r.history[-2]['content'])}”)" if len(r.history) >= 2 else ""
                got = ("abstained: " if r.abstained else "WRONG: ") + one_line(r.answer)
                out += [
                    f"- `{r.id}` ({r.kind}) **{one_line(r.question)}**{after}",
                    f"  - expected: {one_line(expected)}",
                    f"  - got: {got}",
                ]
            out.append("")
    return "\n".join(out)


def accuracy_chart(evaluation: Evaluation, path: Path) -> None:
    """A PNG of accuracy by kind, one group of bars per kind and one bar per configuration, a panel per dataset."""
    from matplotlib.figure import Figure  # no pyplot: renders with the Agg canvas, no GUI, no global state

    datasets = evaluation.datasets
    fig = Figure(
        figsize=(max(7.0, 1.1 * max(len(d.kinds) + 1 for d in datasets)), 3.6 * len(datasets)), layout="constrained"
    )
    axes = fig.subplots(len(datasets), 1, squeeze=False)[:, 0]
    for ax, d in zip(axes, datasets, strict=True):
        kinds = [*d.kinds, "overall"]
        width = 0.8 / len(d.runs)
        for i, run in enumerate(d.runs):
            values = [
                (run.metrics["overall"] if k == "overall" else run.metrics["kinds"][k])["accuracy"] or 0.0
                for k in kinds
            ]
            xs = np.arange(len(kinds)) + (i - (len(d.runs) - 1) / 2) * width
            bars = ax.bar(xs, values, width, label=run.config.label)
            ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        ax.set_xticks(np.arange(len(kinds)), kinds, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("accuracy")
        ax.set_title(d.name, loc="left")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.savefig(path, dpi=110)


def write_report(evaluation: Evaluation, path: Path) -> Path:
    """Write the Markdown report at `path` and its chart next to it (same name, .png); return the chart's path."""
    chart = path.with_suffix(".png")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        accuracy_chart(evaluation, chart)
        path.write_text(markdown_report(evaluation, chart.name), encoding="utf-8")
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot write the report ({exc.strerror or exc})") from exc
    return chart


def to_json(evaluation: Evaluation) -> str:
    return json.dumps(evaluation.as_dict(), ensure_ascii=False)
