"""SQuAD through the real bot: real crowd-written questions, answerable and not, asked like a user would ask them.

Each chosen article becomes one text document (its title on the first line, then its paragraphs); all of them are
indexed together into one temporary index, so every question must first find its paragraph among all articles
(harder than SQuAD's own setting, where a reader is handed the paragraph). Every question goes through
`EventBot.ask(question)` without history. The prediction is the answer's short answer, else its text without `[n]`
markers, or the empty string when the bot abstained; it is scored with the official SQuAD v2.0 evaluation
(`normalize_answer`, EM and F1 best over the gold answers; an unanswerable question scores 1 only for an empty
prediction). Figures measured here are SQuAD's (Rajpurkar et al., CC BY-SA 4.0): say so where they are shown.

The `test` articles of `split.json` are first sight only: their per-question items never appear in the output.
"""

from __future__ import annotations

import collections
import json
import re
import string
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from bot.eval.metrics import normalize, strip_markers
from bot.eval.report import markdown_table, one_line, rich_table
from bot.eval.running import Config, EvaluationError, ask_or_refuse, settings_for, shown_settings, temporary_bot
from bot.eval.datasets import held_out_articles, squad_articles, squad_split
from bot.types import Answer, Context

if TYPE_CHECKING:
    from bot.service import EventBot

ATTRIBUTION = "SQuAD, Rajpurkar et al. (CC BY-SA 4.0)"
CORRECT_F1 = 0.5  # an answer with less token overlap than this is counted wrong (and not right for the AUC)
PUNCTUATION = set(string.punctuation)  # ASCII only, as the official script has it


# -- choosing articles and questions --------------------------------------------------------------------------


def resolve_articles(specs: Sequence[str], squad_dir: Path) -> list[str]:
    """`train` (both train parts), `heldout`, `test` or a title (spaces may stand for underscores) → titles, in
    order, without repeats. Unknown names are user errors, found before any work."""
    if not (squad_dir / "split.json").is_file():
        raise EvaluationError(f"no SQuAD split at {squad_dir}: pass --squad DIR (the folder with split.json)")
    split = squad_split(squad_dir)
    train = split["train_from_v2.0"] + split["train_from_v1.1"]
    named = {"train": train, "heldout": held_out_articles(squad_dir), "test": split["test"]}
    known = set(train) | set(split["test"])
    titles: list[str] = []
    for spec in specs:
        title = spec.strip().replace(" ", "_")
        if spec in named:
            titles += named[spec]
        elif title in known:
            titles.append(title)
        else:
            raise EvaluationError(f"--articles {spec!r}: not train, heldout, test or an article title of split.json")
    return list(dict.fromkeys(titles))


def sample(items: Sequence[Any], limit: int | None) -> list[Any]:
    """At most `limit` items evenly spread over the whole sequence (every k-th, k fractional), deterministically:
    SQuAD v2.0 lists a paragraph's answerable questions before its unanswerable ones, so a prefix would be biased."""
    if limit is None or len(items) <= limit:
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


@dataclass(frozen=True)
class SquadQuestion:
    id: str
    article: str
    question: str
    answers: list[str]  # empty: unanswerable
    paragraph: str = ""  # the paragraph SQuAD's writers asked it about


def article_questions(article: dict, limit: int | None = None) -> list[SquadQuestion]:
    questions = [
        SquadQuestion(
            qa["id"], article["title"], qa["question"].strip(), [a["text"] for a in qa["answers"]], paragraph["context"]
        )
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]
    return sample(questions, limit)


def document_name(title: str) -> str:
    """The file an article is indexed from (and the passages' source)."""
    return f"{title}.txt"


def document_text(article: dict) -> str:
    """The article as a reader would get it: the title (underscores made spaces) on the first line, then the
    paragraphs separated by blank lines."""
    paragraphs = [p["context"].strip() for p in article["paragraphs"]]
    return "\n\n".join([article["title"].replace("_", " "), *paragraphs]) + "\n"


# -- the official SQuAD v2.0 scoring (evaluate-v2.0.py) ---------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lowercase, ASCII punctuation removed, articles a/an/the removed, whitespace collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def compute_exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = normalize_answer(gold).split(), normalize_answer(prediction).split()
    if not gold_tokens or not pred_tokens:  # a no-answer on either side: 1 when both are, else 0
        return float(gold_tokens == pred_tokens)
    same = sum((collections.Counter(gold_tokens) & collections.Counter(pred_tokens)).values())
    if not same:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def score(answers: Sequence[str], prediction: str) -> tuple[float, float]:
    """(EM, F1), each the best over the gold answers; an unanswerable question's only gold answer is ''."""
    golds = [a for a in answers if normalize_answer(a)] or [""]
    return float(max(compute_exact(g, prediction) for g in golds)), max(compute_f1(g, prediction) for g in golds)


def prediction_of(answer: Answer) -> str:
    """What the bot would have the user take away: the bare span, else the reply without markers; '' = declined."""
    if answer.abstained:
        return ""
    short = getattr(answer, "short_answer", None)
    return short if short is not None else strip_markers(answer.answer).strip()


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


def score_question(question: SquadQuestion, answer: Answer, latency_ms: float) -> QuestionResult:
    """The answer scored, and whether retrieval found the question's article and paragraph among the passages the
    answer was drawn from (hit@k, k = top_k)."""
    prediction = prediction_of(answer)
    paragraph = normalize(question.paragraph)
    exact, f1 = score(question.answers, prediction)
    confidence = getattr(answer, "confidence", None)
    return QuestionResult(
        question.id,
        question.article,
        question.question,
        question.answers,
        prediction,
        answer.abstained,
        exact,
        f1,
        None if confidence is None else float(confidence),
        answer.timings_ms.get("total", latency_ms),
        any(c.source == document_name(question.article) for c in answer.contexts),
        bool(paragraph) and any(normalize(c.text) in paragraph for c in answer.contexts),
    )


def retrieved(bot: EventBot, question: str) -> Answer:
    """Retrieval alone (`--retrieval-only`): the passages as an answer's contexts, the answer declined."""
    passages = bot.retriever(question)
    contexts = [Context(chunk_id=p.chunk_id, source=p.source, text=p.text, score=p.score) for p in passages]
    return Answer(question=question, answer="", abstained=True, contexts=contexts, backend="retrieval")


# -- metrics over many questions ------------------------------------------------------------------------------


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


# -- running --------------------------------------------------------------------------------------------------


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


def run_squad(
    squad_dir: Path,
    titles: Sequence[str],
    configs: Sequence[Config],
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    show_progress: bool = True,
    retrieval_only: bool = False,
) -> SquadEvaluation:
    """Index the articles once per configuration (chunking may differ) and ask every chosen question (or, with
    `retrieval_only`, only retrieve for it: hit@k by article and by paragraph, in seconds)."""
    settings = [settings_for(c) for c in configs]  # every user error before any work
    try:
        articles = squad_articles(list(titles), squad_dir)
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"{squad_dir}: cannot read the SQuAD articles ({exc})") from exc
    questions = [q for a in articles for q in article_questions(a, limit)]
    test = set(squad_split(squad_dir)["test"])
    evaluation = SquadEvaluation(
        squad_dir, list(titles), [t for t in titles if t in test], limit, list(configs), retrieval_only=retrieval_only
    )
    if evaluation.first_sight and progress:
        progress(f"first sight: {len(evaluation.first_sight)} test article(s); their questions stay out of the output")
    with tempfile.TemporaryDirectory(prefix="eventbot-squad-") as tmp:
        folder = Path(tmp)
        for article in articles:
            (folder / document_name(article["title"])).write_text(document_text(article), encoding="utf-8")
        for config, s in zip(configs, settings, strict=True):
            if progress:
                progress(f"{config.label}: indexing {len(articles)} SQuAD article(s), then {len(questions)} questions")
            with temporary_bot(s, [folder]) as (index, bot):
                results = []
                for q in tqdm(questions, desc=config.label, unit="q", disable=not show_progress):
                    started = time.perf_counter()
                    answer = retrieved(bot, q.question) if retrieval_only else ask_or_refuse(bot, q.question)
                    results.append(score_question(q, answer, 1000 * (time.perf_counter() - started)))
                del bot
            metrics = summarize_by_article(results, titles)
            evaluation.runs.append(SquadRun(config, shown_settings(s), index, results, metrics))
    return evaluation


# -- output ---------------------------------------------------------------------------------------------------

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
