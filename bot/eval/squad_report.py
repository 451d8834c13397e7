"""What `eventbot eval --squad` reports: each question's result as the official SQuAD v2.0 evaluation scores it, the
figures over many questions (the official ones under their key names, and ours: wrong and abstention rates, AUC,
latency, retrieval hits), the evaluation as one object, and its tables, Markdown report and JSON. Figures measured
here are SQuAD's (Rajpurkar et al., CC BY-SA 4.0): say so where they are shown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bot.eval.items import EvaluationError
from bot.eval.report import markdown_table, one_line, rich_table
from bot.eval.running import Config
from bot.eval.scoring import normalize_answer

ATTRIBUTION = "SQuAD, Rajpurkar et al. (CC BY-SA 4.0)"
CORRECT_F1 = 0.5  # an answer with less token overlap than this is counted wrong (and not right for the AUC)


@dataclass
class QuestionResult:
    id: str
    article: str
    question: str
    answers: list[str]
    prediction: str
    abstained: bool
    exact: float
    f1: float
    confidence: float | None
    latency_ms: float
    article_hit: bool = False  # a retrieved passage comes from the question's article
    paragraph_hit: bool = False  # … from its very paragraph

    @property
    def has_answer(self) -> bool:
        return bool(self.answers)

    @property
    def answered(self) -> bool:
        """As the official scoring sees it: a prediction that normalizes to nothing is a no-answer."""
        return bool(normalize_answer(self.prediction))

    @property
    def correct(self) -> bool:
        """Right enough to trust: F1 ≥ 0.5 on an answerable question; answering an unanswerable one never is."""
        return self.has_answer and self.f1 >= CORRECT_F1

    @property
    def wrong(self) -> bool:
        """A confident wrong answer, worse than declining: answered but not correct."""
        return self.answered and not self.correct


# -- metrics over many questions -----------------------------------------------------------------------------


def _mean(values: Sequence[float | bool]) -> float | None:
    return sum(map(float, values)) / len(values) if values else None


def _pct(values: Sequence[float]) -> float | None:
    mean = _mean(values)
    return None if mean is None else 100 * mean


def confidence_auc(results: Sequence[QuestionResult]) -> float | None:
    """ROC AUC of the answer's confidence against "the answer is correct": does confidence rank right answers above
    wrong ones and declined answerable ones? None without confidences or without both outcomes."""
    scored = [r for r in results if r.confidence is not None]
    labels = [r.correct for r in scored]
    if len(set(labels)) < 2:
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, [r.confidence for r in scored]))


def summarize(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The official figures (×100, official key names) and ours: wrong and abstention rates, AUC, mean latency."""
    has = [r for r in results if r.has_answer]
    no = [r for r in results if not r.has_answer]
    return {
        "total": len(results),
        "exact": _pct([r.exact for r in results]),
        "f1": _pct([r.f1 for r in results]),
        "HasAns_total": len(has),
        "HasAns_exact": _pct([r.exact for r in has]),
        "HasAns_f1": _pct([r.f1 for r in has]),
        "NoAns_total": len(no),
        "NoAns_exact": _pct([r.exact for r in no]),  # the share declined
        "NoAns_f1": _pct([r.f1 for r in no]),
        "wrong_rate": _mean([r.wrong for r in results]),
        "abstention_rate": _mean([r.abstained for r in results]),
        "auc": confidence_auc(results),
        "latency_mean_ms": _mean([r.latency_ms for r in results]),
        "hit_article": _mean([r.article_hit for r in has]),  # over answerable questions, as eval's hit@k
        "hit_paragraph": _mean([r.paragraph_hit for r in has]),
    }


def summarize_by_article(results: Sequence[QuestionResult], titles: Sequence[str]) -> dict[str, Any]:
    return {
        "all": summarize(results),
        "articles": {t: summarize([r for r in results if r.article == t]) for t in titles},
    }


# -- one run of SQuAD through the bot ------------------------------------------------------------------------


@dataclass
class SquadRun:
    config: Config
    settings: dict[str, Any]
    index: dict[str, Any]
    results: list[QuestionResult]
    metrics: dict[str, Any]


@dataclass
class SquadEvaluation:
    squad_dir: Path
    articles: list[str]
    first_sight: list[str]  # the chosen test articles: figures only, never their questions
    limit: int | None
    configs: list[Config]
    runs: list[SquadRun] = field(default_factory=list)
    retrieval_only: bool = False  # questions retrieved for, not answered: only the hit figures mean anything

    def as_dict(self) -> dict[str, Any]:
        hidden = set(self.first_sight)
        return {
            "squad": str(self.squad_dir),
            "attribution": ATTRIBUTION,
            "articles": self.articles,
            "first_sight": self.first_sight,
            "limit": self.limit,
            "retrieval_only": self.retrieval_only,
            "configs": [asdict(c) for c in self.configs],
            "results": {
                r.config.label: {
                    "settings": r.settings,
                    "index": r.index,
                    "metrics": r.metrics,
                    "items": [asdict(i) for i in r.results if i.article not in hidden],
                }
                for r in self.runs
            },
        }


# -- output --------------------------------------------------------------------------------------------------

COLUMNS = [  # (header, metric, format, scale)
    ("EM", "exact", "{:.1f}", 1),
    ("F1", "f1", "{:.1f}", 1),
    ("HasAns EM", "HasAns_exact", "{:.1f}", 1),
    ("HasAns F1", "HasAns_f1", "{:.1f}", 1),
    ("NoAns", "NoAns_exact", "{:.1f}", 1),
    ("wrong %", "wrong_rate", "{:.1f}", 100),
    ("abstain %", "abstention_rate", "{:.1f}", 100),
    ("AUC", "auc", "{:.3f}", 1),
    ("ms", "latency_mean_ms", "{:.0f}", 1),
    ("article@k %", "hit_article", "{:.1f}", 100),
    ("paragraph@k %", "hit_paragraph", "{:.1f}", 100),
]
BRIEF = {"EM", "F1", "HasAns F1", "NoAns", "wrong %", "abstain %", "paragraph@k %"}
RETRIEVAL = {
    "article@k %",
    "paragraph@k %",
    "ms",
}  # what a retrieval-only run measures  # per article when configurations share a table


def _cell(metrics: dict[str, Any], key: str, pattern: str, scale: int) -> str:
    return "—" if metrics[key] is None else pattern.format(metrics[key] * scale)


def article_table(evaluation: SquadEvaluation, brief: bool = False) -> tuple[list[str], list[list[str]]]:
    """Rows = articles + all; columns = the figures of each configuration side by side (#1, #2, … as in eval)."""
    several = len(evaluation.runs) > 1
    columns = _columns(evaluation, brief)
    headers = ["article", "n"]
    for i, _ in enumerate(evaluation.runs, 1):
        headers += [f"{h} #{i}" if several else h for h, *_ in columns]
    rows = []
    for title in [*evaluation.articles, "all"]:
        first = evaluation.runs[0].metrics
        row = [title, str((first["all"] if title == "all" else first["articles"][title])["total"])]
        for run in evaluation.runs:
            m = run.metrics["all"] if title == "all" else run.metrics["articles"][title]
            row += [_cell(m, key, pattern, scale) for _, key, pattern, scale in columns]
        rows.append(row)
    return headers, rows


def overall_table(evaluation: SquadEvaluation) -> tuple[list[str], list[list[str]]]:
    """Rows = every figure over all articles; one column per configuration."""
    headers = ["all articles", *(f"#{i} {r.config.label}" for i, r in enumerate(evaluation.runs, 1))]
    columns = _columns(evaluation, brief=False)
    rows = [[h, *(_cell(r.metrics["all"], key, p, scale) for r in evaluation.runs)] for h, key, p, scale in columns]
    return headers, rows


def _columns(evaluation: SquadEvaluation, brief: bool) -> list[tuple[str, str, str, int]]:
    if evaluation.retrieval_only:
        return [c for c in COLUMNS if c[0] in RETRIEVAL]
    return [c for c in COLUMNS if c[0] in BRIEF] if brief else COLUMNS


def caption(evaluation: SquadEvaluation) -> str:
    """What the figures are, whose data they come from, and which configuration is #1, #2, …"""
    limit = f", at most {evaluation.limit} questions per article" if evaluation.limit else ""
    lines = [f"{ATTRIBUTION}{limit}. NoAns = share of unanswerable questions declined."]
    if evaluation.retrieval_only:
        lines = [
            f"{ATTRIBUTION}{limit}. Retrieval only: answerable questions whose article / paragraph is among the passages."
        ]
    lines.append("article@k, paragraph@k: answerable questions whose article / paragraph is among the top-k passages.")
    if len(evaluation.configs) > 1:
        lines.append(" · ".join(f"#{i} {c.label}" for i, c in enumerate(evaluation.configs, 1)))
    return "\n".join(lines)


def rich_tables(evaluation: SquadEvaluation) -> list:
    several = len(evaluation.runs) > 1  # then the articles show the main figures, and every figure is in a second table
    tables = [
        rich_table("SQuAD through the bot", *article_table(evaluation, brief=several), caption(evaluation), "all")
    ]
    if several:
        tables.append(rich_table("SQuAD through the bot: all articles", *overall_table(evaluation), None, "all"))
    return tables


def markdown_report(evaluation: SquadEvaluation, wrong_shown: int = 25) -> str:
    """The table, then some confident wrong answers per configuration (never of first-sight articles)."""
    out = ["# eventbot on SQuAD", "", caption(evaluation).replace("\n", "  \n"), ""]
    out += [markdown_table(*article_table(evaluation)), ""]
    if len(evaluation.runs) > 1:
        out += [markdown_table(*overall_table(evaluation)), ""]
    for run in evaluation.runs:
        wrong = [r for r in run.results if r.wrong and r.article not in evaluation.first_sight]
        shown = f"; the first {wrong_shown} shown" if len(wrong) > wrong_shown else ""
        out += [f"## Wrong answers — `{run.config.label}` ({len(wrong)}{shown})", ""]
        for r in wrong[:wrong_shown]:
            expected = " / ".join(dict.fromkeys(r.answers)) if r.has_answer else "a decline (unanswerable)"
            out += [f"- `{r.article}` **{one_line(r.question)}**", f"  - expected: {one_line(expected)}"]
            out += [f"  - got: {one_line(r.prediction)} (F1 {r.f1:.2f})"]
        out.append("")
    return "\n".join(out)


def write_report(evaluation: SquadEvaluation, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown_report(evaluation), encoding="utf-8")
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot write the report ({exc.strerror or exc})") from exc


def to_json(evaluation: SquadEvaluation) -> str:
    return json.dumps(evaluation.as_dict(), ensure_ascii=False)
