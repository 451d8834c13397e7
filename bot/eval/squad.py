"""SQuAD through the real bot: real crowd-written questions, answerable and not, asked like a user would ask them.

Each chosen article becomes one text document (its title on the first line, then its paragraphs); all of them are
indexed together into one temporary index, so every question must first find its paragraph among all articles
(harder than SQuAD's own setting, where a reader is handed the paragraph). Every question goes through
`EventBot.ask(question)` without history. The prediction is the answer's short answer, else its text without `[n]`
markers, or the empty string when the bot abstained; it is scored with the official SQuAD v2.0 evaluation
(`bot.eval.scoring`: EM and F1 best over the gold answers; an unanswerable question scores 1 only for an empty
prediction). Figures measured here are SQuAD's (Rajpurkar et al., CC BY-SA 4.0): say so where they are shown.

The `test` articles of `split.json` are first sight only: their per-question items never appear in the output.
The results, their figures and the tables, report and JSON `eventbot eval --squad` shows are in `bot.eval.squad_report`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from bot.answer.cite import without_markers
from bot.eval.datasets import held_out_articles, squad_articles, squad_split
from bot.eval.items import EvaluationError
from bot.eval.metrics import normalize
from bot.eval.running import Config, ask_or_refuse, settings_for, shown_settings, temporary_bot
from bot.eval.scoring import compute_exact, compute_f1, normalize_answer
from bot.eval.squad_report import QuestionResult, SquadEvaluation, SquadRun, summarize_by_article
from bot.eval.squad_report import rich_tables as rich_tables  # what `eventbot eval --squad` shows, writes, prints
from bot.eval.squad_report import to_json as to_json
from bot.eval.squad_report import write_report as write_report
from bot.types import Answer, Context

if TYPE_CHECKING:
    from bot.event_bot import EventBot


# -- choosing articles and questions -------------------------------------------------------------------------


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


# -- scoring (the official SQuAD v2.0 evaluation, `bot.eval.scoring`) ----------------------------------------


def score(answers: Sequence[str], prediction: str) -> tuple[float, float]:
    """(EM, F1), each the best over the gold answers; an unanswerable question's only gold answer is ''."""
    golds = [a for a in answers if normalize_answer(a)] or [""]
    return float(max(compute_exact(g, prediction) for g in golds)), max(compute_f1(g, prediction) for g in golds)


def prediction_of(answer: Answer) -> str:
    """What the bot would have the user take away: the bare span, else the reply without markers; '' = declined."""
    if answer.abstained:
        return ""
    short = getattr(answer, "short_answer", None)
    return short if short is not None else without_markers(answer.answer).strip()


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


# -- running -------------------------------------------------------------------------------------------------


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
