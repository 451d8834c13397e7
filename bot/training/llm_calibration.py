"""`eventbot train-reader --calibrate-llm`: learns when the LLM's answer is given (bot.answer.llm_decide).

Every question of the development sets, and SQUAD_PER_ARTICLE questions of each SQuAD article of the dev split's
train part (`squad_rows`), is answered by the bot with the installed LLM (conversations turn by turn);
for each, the span reader's reply is kept and so is the LLM's answer where it is grounded (its features as the
guard computes them). Each is labelled right or wrong as `eventbot eval` scores it. Gradient-boosted trees learn,
out of fold by set (GroupKFold, over SHUFFLES assignments of sets to folds), the probability that the LLM's grounded
answer is right; the threshold is the one whose out-of-fold replies serve the sets best on their mean (each set
weighing the same, a wrong answer costing WRONG_COST right ones) among those whose mean wrong rate is at most
WRONG_CEILING, where below it the span reader's own reply stands. While reading, the guard never gives the LLM's
answer (a decision of threshold 2), so a conversation's earlier answers are the span reader's. The same rows fit the
P(Yes) share at which a yes/no answer opens with Yes (`fit_yes_threshold`); the readings use the installed one, so a
refit that moves it wants another reading. `--resume` continues a reading that was stopped (`finished_sets`).
"""

import json
import os
from collections import Counter
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import numpy as np

from bot.answer.claims import says_not_in_documents
from bot.answer.llm_decide import LLM_CALIBRATION_FILE, LLM_FEATURES, LLM_MODEL_FILE, opening_yes_or_no
from bot.reader.model import WEIGHTS_DIR
from bot.settings import Settings
from bot.training.calibration import (
    WRONG_COST,
    answered_states,
    by_group,
    classifier,
    is_right,
    out_of_fold,
    utility,
)
from bot.types import Draft

ROWS_FILE = "llm_calibration.jsonl"
SHUFFLES = 6  # assignments of sets to folds whose mean out-of-fold utility chooses the threshold
# The utility is flat over a span of thresholds where the wrong rate is not; the aim is at most 5 % wrong on sets
# nobody tuned on, and first-sight rounds have come out over the out-of-fold figure (round 20: 7.1 % against 4.7 %,
# round 21: 8.3 % against 4.0 %).
WRONG_CEILING = 0.04
# SQuAD questions read from each article of the dev split's train part (23 articles; answerable and not, half each):
# the decision fitted on news sets alone gave the LLM's answer to unanswerable Wikipedia questions that a cited
# sentence answers for another entity (issue 59), so they are read and weigh as sets too, one per article.
SQUAD_PER_ARTICLE = 16
# A reading waits for the LLM's every answer: the serving timeout (a busy machine's answer falls back to the span
# reader's) would record a slow answer as none.
READING_TIMEOUT_S = 900.0


def mean_by_set(figures: list[dict[str, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """Each set's (accuracy, wrong), averaged over several out-of-fold readings of the same rows."""
    return {g: tuple(round(float(np.mean([f[g][k] for f in figures])), 3) for k in (0, 1)) for g in figures[0]}


def chosen_threshold(choices: dict[float, dict[str, tuple[float, float]]]) -> float:
    """Of thresholds and their (accuracy, wrong) by set, the one of best utility among those whose mean wrong rate
    over sets is at most WRONG_CEILING (of best utility overall where none is)."""
    capped = [t for t, f in choices.items() if np.mean([wrong for _, wrong in f.values()]) <= WRONG_CEILING]
    return max(capped or choices, key=lambda t: utility(choices[t]))


def finished_sets(rows: list[dict], questions: dict[str, int]) -> list[dict]:
    """The rows of the sets an interrupted reading finished (as many rows as the set has `questions`): `--resume`
    keeps them and reads the others from their start (a set takes a minute or two)."""
    counts = Counter(r["group"] for r in rows)
    return [r for r in rows if counts[r["group"]] == questions.get(r["group"])]


def llm_rows(settings: Settings, limit: int | None, datasets: list[Path] | None = None) -> Iterator[dict]:
    """One row per question of `datasets` (default: the development sets), each its set's (`reading_row`)."""
    from bot.eval.datasets import DEV_SETS_DIR
    from bot.eval.items import dataset_corpus, load_dataset

    for path in datasets or sorted(DEV_SETS_DIR.glob("*.jsonl")):
        items = load_dataset(path)[:limit]
        for item, state in answered_states(settings, dataset_corpus(path, settings), items, path.stem):
            yield reading_row(path.stem, item, state)


def squad_items(per_article: int, squad_dir: Path | None = None) -> tuple[list[dict], list[tuple]]:
    """The SQuAD articles of the dev split's train part that came with v2.0 (answerable and unanswerable questions;
    never the test part, which is first sight only) and `per_article` questions drawn evenly from each, answerable
    and not as they come, each with its group: its article (`squad:TITLE`), so the decision is judged out of fold by
    article there as by set elsewhere."""
    from bot.eval.datasets import SQUAD_DIR, squad_articles, squad_split
    from bot.eval.squad import article_questions

    articles = squad_articles(squad_split(squad_dir or SQUAD_DIR)["train_from_v2.0"], squad_dir or SQUAD_DIR)
    items = [(f"squad:{a['title']}", squad_item(q)) for a in articles for q in article_questions(a, per_article)]
    return articles, items


def squad_item(q):
    """A SQuAD question as an eval item, scored as `eventbot eval` scores a set's (no gold answer: unanswerable)."""
    from bot.eval.items import EvalItem

    return EvalItem(id=q.id, question=q.question, answers=q.answers, answerable=bool(q.answers), kind="squad")


def squad_rows(settings: Settings, per_article: int, skip: frozenset[str] | set[str] = frozenset()) -> Iterator[dict]:
    """One row per question of `squad_items` (those of the groups in `skip` left out), the articles indexed together
    as `eventbot eval --squad` indexes them, so each question first finds its paragraph among them all."""
    import tempfile

    from bot.eval.squad import document_name, document_text

    articles, items = squad_items(per_article)
    group_of = {item.id: group for group, item in items}
    asked = [item for group, item in items if group not in skip]
    if not asked:  # all read before (`--resume`): nothing to index
        return
    with tempfile.TemporaryDirectory(prefix="eventbot-squad-") as tmp:
        for article in articles:
            (Path(tmp) / document_name(article["title"])).write_text(document_text(article), encoding="utf-8")
        for item, state in answered_states(settings, [Path(tmp)], asked, "SQuAD"):
            yield reading_row(group_of[item.id], item, state)


def reading_row(group: str, item, state: dict) -> dict:
    """A question's reading: the LLM's grounded answer's features and whether it is right (None where it gave
    none), the span reader's reply, the reply the chain gave (with the installed decision) and how long it took."""
    # a question the chain answers without the LLM (an overview, quoting the key sentences) has no LLM reading, and
    # its reply is the one the span reader alone would give too
    review, generation = state.get("llm_review"), state.get("generation")
    reader = state.get("extractive_draft", state["draft"])
    written = generation.text or "" if generation is not None else ""
    # the LLM's text as it wrote it, unchecked (none: it failed or was not asked, so it answered nothing)
    alone = Draft(written, not written or says_not_in_documents(written), [])
    return {
        "group": group,
        "question": item.question,
        "answerable": item.answerable,
        "kind": item.kind,
        "llm": generation.text if generation is not None else None,
        "yes_share": generation.yes_share if generation is not None else None,
        "yes_no": item.yes_no,
        "features": review.features if review else None,
        "llm_right": is_right(review.draft, item) if review else None,
        "llm_alone_right": is_right(alone, item, [p.text for p in state.get("llm_passages", [])]),
        "llm_alone_answered": not alone.abstained,
        "reader_right": is_right(reader, item),
        "reader_answered": not reader.abstained,
        "chain_right": is_right(state["draft"], item),
        "chain_answered": not state["draft"].abstained,
        "ms": round(sum(state["timings_ms"].values()), 1),
    }


def outcomes(rows: list[dict], p: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(right, wrong) per row when the LLM's grounded answer is given at p ≥ t, else the span reader's reply."""
    llm = np.array([r["features"] is not None for r in rows]) & (p >= t)
    llm_right = np.array([bool(r["llm_right"]) for r in rows])
    reader_right = np.array([r["reader_right"] for r in rows])
    reader_wrong = np.array([r["reader_answered"] and not r["reader_right"] for r in rows])
    return np.where(llm, llm_right, reader_right), np.where(llm, ~llm_right, reader_wrong)


def fit_yes_threshold(rows: list[dict]) -> tuple[float | None, dict]:
    """The P(Yes) share at which the answer to a yes/no question opens with "Yes" (bot.answer.llm_decide
    .overruling_word): the one that gets the most of the development sets' yes/no questions right, among those
    the LLM answered with a Yes or a No. The figures: how many, right by the LLM's own word, right by the share at
    the threshold, and right when each set's threshold is fitted on the other sets (an honest estimate). The share
    does not depend on the threshold, so rows read with an earlier one serve."""
    said = [
        (r["group"], r["yes_no"], r["yes_share"], opening_yes_or_no(r["llm"] or "") == "yes")
        for r in rows
        if r.get("yes_no") is not None and r.get("yes_share") is not None and opening_yes_or_no(r["llm"] or "")
    ]
    if not said:
        return None, {"questions": 0}
    candidates = [round(float(t), 2) for t in np.linspace(0.05, 0.95, 91)]

    def right(part: list, t: float) -> int:
        return sum((share >= t) == truth for _, truth, share, _ in part)

    def best(part: list) -> float:
        return max(candidates, key=lambda t: (right(part, t), -abs(t - 0.5)))

    held_out = sum(
        right([s for s in said if s[0] == g], best([s for s in said if s[0] != g])) for g in {s[0] for s in said}
    )
    threshold = best(said)
    return threshold, {
        "questions": len(said),
        "right_by_the_llms_word": sum(yes == truth for _, truth, _, yes in said),
        "right_by_the_share": right(said, threshold),
        "right_by_the_share_each_set_held_out": held_out,
    }


def fit_llm_decision(rows: list[dict]):
    """The trees (fitted on every grounded answer), the threshold chosen on out-of-fold probabilities, and the
    figures: each set's accuracy and wrong rate with the span reader alone, with every grounded LLM answer, and
    with the decision. Which sets share a fold moves the best threshold by a tenth or more (the utility is flat near
    it), so the out-of-fold probabilities are taken over SHUFFLES assignments of sets to folds, and the threshold is
    the one whose utility is best on their mean among those whose mean wrong rate is at most WRONG_CEILING (the
    best overall where none is); the figures are their means too."""
    from sklearn.metrics import roc_auc_score

    answered = [i for i, r in enumerate(rows) if r["features"] is not None]
    x = np.array([rows[i]["features"] for i in answered], dtype=float)
    y = np.array([rows[i]["llm_right"] for i in answered], dtype=int)
    groups = [rows[i]["group"] for i in answered]
    model = classifier().fit(x, y)
    thresholds = [round(float(t), 2) for t in np.linspace(0, 0.99, 100)]
    shuffled = []  # per assignment of sets to folds: each threshold's (accuracy, wrong) by set
    aucs = []
    for seed in range(SHUFFLES):
        oof = np.full(len(rows), -1.0)
        oof[answered] = out_of_fold(x, y, groups, seed)
        shuffled.append({t: by_group(rows, *outcomes(rows, oof, t)) for t in thresholds})
        aucs.append(roc_auc_score(y, oof[answered]) if len(set(y)) > 1 else float("nan"))
    choices = {t: mean_by_set([s[t] for s in shuffled]) for t in thresholds}
    threshold = chosen_threshold(choices)

    unjudged = np.zeros(len(rows))  # at threshold 2 no LLM answer is given, at -1 every grounded one

    def mean(figures: dict) -> list[float]:
        return [round(float(np.mean([f[k] for f in figures.values()])), 3) for k in (0, 1)]

    if all("llm_alone_right" in r for r in rows):  # the LLM's own text, unchecked, for comparison
        alone = (np.array([r["llm_alone_right"] for r in rows]), np.array([r["llm_alone_answered"] for r in rows]))
        llm_alone = mean(by_group(rows, alone[0], alone[1] & ~alone[0]))
    else:
        llm_alone = None
    figures = {
        "questions": len(rows),
        "groups": sorted({r["group"] for r in rows}),
        "llm_grounded_answers": len(answered),
        "llm_grounded_right": round(float(y.mean()), 3),
        "auc": round(float(np.mean(aucs)), 3) if len(set(y)) > 1 else None,
        "fold_assignments": SHUFFLES,
        "wrong_cost": WRONG_COST,
        "wrong_ceiling": WRONG_CEILING,
        "utility_by_threshold": {t: round(utility(f), 3) for t, f in choices.items()},
        "mean_accuracy_wrong": {
            "span_reader_alone": mean(by_group(rows, *outcomes(rows, unjudged, 2.0))),
            "llm_alone_unchecked": llm_alone,
            "every_grounded_llm_answer": mean(by_group(rows, *outcomes(rows, unjudged, -1.0))),
            "the_decision": mean(choices[threshold]),
        },
        "accuracy_wrong_by_set": choices[threshold],
    }
    return model, threshold, figures


def calibrate_llm(out: Path, limit: int | None = None, refit: bool = False, resume: bool = False) -> dict:
    """Reads the development sets with the installed LLM (or, with `refit`, the rows stored in `out`; with `resume`,
    only the sets those rows do not finish), fits, writes `out/llm_decision.json` and `out/llm_decision.joblib`;
    returns the figures."""
    import joblib

    from bot.errors import InputError
    from bot.eval.datasets import DEV_SETS_DIR
    from bot.eval.items import load_dataset

    if (refit or resume) and not (out / ROWS_FILE).is_file():
        flag = "--refit" if refit else "--resume"
        raise InputError(f"{flag} needs the readings of an earlier --calibrate-llm in {out / ROWS_FILE}")

    if refit:
        rows = [json.loads(line) for line in (out / ROWS_FILE).read_text().splitlines()]
    else:
        from sklearn.dummy import DummyClassifier

        # while reading, a decision that never gives the LLM's answer: the guard still reviews and records it, its
        # yes/no answers' Yes or No chosen as the installed decision chooses it
        installed = WEIGHTS_DIR / LLM_CALIBRATION_FILE
        yes_threshold = json.loads(installed.read_text()).get("yes_threshold") if installed.exists() else None
        joblib.dump(DummyClassifier().fit(np.zeros((2, len(LLM_FEATURES))), [0, 1]), out / LLM_MODEL_FILE)
        reading = {"features": LLM_FEATURES, "threshold": 2.0, "yes_threshold": yes_threshold}
        (out / LLM_CALIBRATION_FILE).write_text(json.dumps(reading))
        settings = Settings(
            llm="llamacpp", reader="trained", reader_weights=out / "reader.safetensors", llm_timeout_s=READING_TIMEOUT_S
        )
        datasets = sorted(DEV_SETS_DIR.glob("*.jsonl"))
        questions = {path.stem: len(load_dataset(path)[:limit]) for path in datasets}
        per_article = SQUAD_PER_ARTICLE if limit is None else min(limit, SQUAD_PER_ARTICLE)
        questions |= Counter(group for group, _ in squad_items(per_article)[1])
        read = (out / ROWS_FILE).read_text().splitlines() if resume else []
        rows = finished_sets([json.loads(line) for line in read], questions)
        finished = {r["group"] for r in rows}
        with (out / ROWS_FILE).open("w") as stored:
            stored.writelines(json.dumps(row) + "\n" for row in rows)
            unread = [path for path in datasets if path.stem not in finished]
            for row in chain(llm_rows(settings, limit, unread), squad_rows(settings, per_article, finished)):
                rows.append(row)
                stored.write(json.dumps(row) + "\n")
                stored.flush()
    model, threshold, figures = fit_llm_decision(rows)
    yes_threshold, yes_figures = fit_yes_threshold(rows)
    joblib.dump(model, out / LLM_MODEL_FILE, compress=3)
    report = {
        "features": LLM_FEATURES,
        "threshold": threshold,
        "yes_threshold": yes_threshold,
        "yes_no_by_share": yes_figures,
        "cross_validated": figures,
    }
    (out / LLM_CALIBRATION_FILE).write_text(json.dumps(report, indent=1))
    return report


BAKE_OFF_WAYS = ("span reader alone", "LLM alone, unchecked", "LLM + guard", "the decision")


def bake_off(datasets: list[Path], limit: int | None = None, rows_out: Path | None = None) -> dict[str, dict]:
    """The four ways to answer side by side on `datasets`, read once with the installed LLM and decision: per set
    and way, accuracy, wrong and declined rates; per set, the chain's p50 and p95 milliseconds a question. The
    readings go to `rows_out` (JSON Lines) as they come, when given."""
    settings = Settings(llm="llamacpp", llm_timeout_s=READING_TIMEOUT_S)
    rows = []
    with open(rows_out or os.devnull, "w") as stored:
        for row in llm_rows(settings, limit, datasets):
            rows.append(row)
            stored.write(json.dumps(row) + "\n")
            stored.flush()

    def rates(right: list[bool], answered: list[bool]) -> tuple[float, float, float]:
        n = len(right)
        wrong = sum(a and not r for r, a in zip(right, answered, strict=True))
        return round(sum(right) / n, 3), round(wrong / n, 3), round(sum(not a for a in answered) / n, 3)

    table: dict[str, dict] = {}
    for group in dict.fromkeys(r["group"] for r in rows):
        rs = [r for r in rows if r["group"] == group]
        grounded = [r["features"] is not None for r in rs]  # "LLM + guard": every grounded answer, else the reader's
        ms = np.array([r["ms"] for r in rs])
        table[group] = {
            "n": len(rs),
            BAKE_OFF_WAYS[0]: rates([r["reader_right"] for r in rs], [r["reader_answered"] for r in rs]),
            BAKE_OFF_WAYS[1]: rates([r["llm_alone_right"] for r in rs], [r["llm_alone_answered"] for r in rs]),
            BAKE_OFF_WAYS[2]: rates(
                [bool(r["llm_right"]) if g else r["reader_right"] for r, g in zip(rs, grounded, strict=True)],
                [g or r["reader_answered"] for r, g in zip(rs, grounded, strict=True)],
            ),
            BAKE_OFF_WAYS[3]: rates([r["chain_right"] for r in rs], [r["chain_answered"] for r in rs]),
            "p50_ms": round(float(np.percentile(ms, 50))),
            "p95_ms": round(float(np.percentile(ms, 95))),
        }
    return table
