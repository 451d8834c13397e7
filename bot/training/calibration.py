"""`eventbot train-reader --calibrate-only`: learns when to answer. Every question of the held-out SQuAD train
articles and of the development sets (conversations turn by turn, with the bot's own earlier answers) is read the
way a user's question is (linked, made standalone, retrieved among its documents, read by the reader with the
previous turn) at threshold 0; each reply is labelled right or wrong as `eventbot eval` scores it, and gradient-boosted
trees over general signals (bot.answer.decide) are fitted, cross-validated by article or set
(GroupKFold). The threshold is fitted to what people ask: the one whose out-of-fold replies serve the development
sets best (mostly answerable questions, each set weighing the same), a wrong answer costing WRONG_COST right ones;
SQuAD's half-unanswerable mix trains the classifier but does not choose the threshold."""

import json
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bot.answer.decide import CALIBRATION_FILE, FEATURES, MODEL_FILE, features
from bot.eval.datasets import DEV_SETS_DIR, SQUAD_DIR, held_out_articles, squad_articles
from bot.settings import Settings
from bot.training.examples import boolq_examples
from index.embeddings import bf16_fast

log = logging.getLogger(__name__)

WRONG_COST = 2.0  # a wrong answer costs twice what a right one gains
UNSURE_RIGHT = 0.5  # an unsure reply quotes the closest sentence where the best span is right this often


def squad_f1(prediction: str, gold: str) -> float:
    """SQuAD's token F1 (`bot.eval.scoring`), Unicode punctuation dropped too, as `squad_tokens` (the EM beside it in
    `gold_paragraph_figures`) drops it; a gold answer without tokens scores 0."""
    from bot.eval.scoring import answer_tokens, compute_f1

    return compute_f1(gold, prediction, unicode_punctuation=True) if answer_tokens(gold, True) else 0.0


def answered_states(settings: Settings, documents: list[Path], items: list, group: str) -> Iterator[tuple]:
    """Index `documents` together in a temporary folder and answer every eval item there as the chain would (a
    conversation's turns in order, each read after the bot's own previous answer); yields (item, the chain's state
    at the draft)."""
    from bot.answer.condense import exchange
    from bot.eval.running import temporary_bot
    from bot.types import Turn

    with temporary_bot(settings, documents) as (_, bot):
        conversations: dict[str, list[Turn]] = {}
        for item in tqdm(items, desc=f"reading {group}", unit="question", leave=False):
            history = conversations.setdefault(item.conversation, []) if item.conversation else list(item.history)
            state = bot.drafts.invoke({"question": item.question, "history": list(history), "timings_ms": {}})
            if item.conversation:
                history += exchange(item.question, state["draft"].text, state["draft"].abstained)
            yield item, state


def is_right(draft, item, backing: list[str] | None = None) -> bool:
    """Whether `draft` is a right reply to the eval item, as `eventbot eval` scores it (an abstention is right
    where the documents do not answer). An answer of several sentences must name nothing its quotes lack, or, for a
    draft without quotes (the LLM's text unchecked), nothing `backing` (what it read) lacks."""
    from bot.eval.metrics import is_correct
    from bot.types import Answer, Citation

    quotes = backing if backing is not None else [q.text for q in draft.quotes]
    citations = [Citation(n=n, source="", chunk_id="", quote=q) for n, q in enumerate(quotes, 1)]
    reply = Answer(question=item.question, answer=draft.text, abstained=draft.abstained, citations=citations)
    return is_correct(reply, item.answers, item.answerable, item.yes_no, item.key_points, item.min_points)


def readings(settings: Settings, documents: list[Path], items: list, group: str) -> Iterator[dict]:
    """One row per item: its features, whether the reply was right, whether it could be."""
    for item, state in answered_states(settings, documents, items, group):
        draft = state["draft"]
        yield {
            "group": group,
            "answerable": item.answerable,
            "features": features(draft.evidence) if draft.evidence is not None else None,
            "right": not draft.abstained and is_right(draft, item),
            "kind": item.kind,
        }


def squad_rows(settings: Settings, squad_dir: Path, limit: int | None) -> Iterator[dict]:
    """The held-out SQuAD train articles, indexed together (the right paragraph must be found among them); an
    answer is right when it holds a gold answer's words (as `eventbot eval --squad` counts it)."""
    from bot.eval.items import EvalItem

    with tempfile.TemporaryDirectory(prefix="eventbot-squad-") as tmp:
        documents, items = [], []
        for article in squad_articles(held_out_articles(squad_dir), squad_dir):
            path = Path(tmp) / f"{article['title']}.txt"
            title = article["title"].replace("_", " ")
            path.write_text(title + "\n\n" + "\n\n".join(p["context"] for p in article["paragraphs"]))
            documents.append(path)
            qas = [qa for p in article["paragraphs"] for qa in p["qas"]][:limit]
            items += [
                EvalItem(
                    id=qa["id"],
                    question=qa["question"],
                    answers=[a["text"] for a in qa["answers"]],
                    answerable=bool(qa["answers"]),
                    kind="squad",
                )
                for qa in qas
            ]
        yield from readings(settings, documents, items, "squad")


def dev_set_rows(settings: Settings, limit: int | None) -> Iterator[dict]:
    """The development sets (single questions and conversations), each set over its own documents."""
    from bot.eval.items import dataset_corpus, load_dataset

    for path in sorted(DEV_SETS_DIR.glob("*.jsonl")):
        items = load_dataset(path)[:limit]
        yield from readings(settings, dataset_corpus(path, settings), items, path.stem)


def gold_paragraph_figures(weights: Path, squad_dir: Path, limit: int | None, max_tokens: int) -> dict:
    """The reader alone on the held-out articles, reading each question's own paragraph (as SQuAD papers report):
    F1 and EM when forced to answer the answerable questions, and how well its no-answer margin alone tells
    answerable from unanswerable (AUC); in fp32 and in bf16 (what reading in bf16 costs)."""
    from sklearn.metrics import roc_auc_score

    from bot.eval.metrics import squad_tokens
    from bot.reader.model import SpanReader

    qas = [
        (qa, p["context"])
        for article in squad_articles(held_out_articles(squad_dir), squad_dir)
        for p in article["paragraphs"]
        for qa in p["qas"]
    ][:limit]
    figures = {"questions": len(qas)}
    for name, bf16 in (("fp32", False), ("bf16", True)):
        reader = SpanReader(weights, max_tokens, bf16=bf16)
        f1s, ems, margins, answerable = [], [], [], []
        for qa, context in tqdm(qas, desc=f"reading gold paragraphs ({name})", unit="question", leave=False):
            guess = max(reader.read(qa["question"], [context]), key=lambda g: g.margin, default=None)
            golds = [a["text"] for a in qa["answers"]]
            margins.append(guess.margin if guess else -99.0)
            answerable.append(bool(golds))
            if golds:
                span = context[guess.start : guess.end] if guess else ""
                f1s.append(max(squad_f1(span, g) for g in golds))
                ems.append(max(float(squad_tokens(span) == squad_tokens(g)) for g in golds))
        figures[name] = {
            "answerable_f1_forced": round(100 * float(np.mean(f1s)), 1),
            "answerable_em_forced": round(100 * float(np.mean(ems)), 1),
            "no_answer_margin_auc": round(float(roc_auc_score(answerable, margins)), 3)
            if len(set(answerable)) > 1
            else None,
        }
    return figures


def classifier():
    """Small gradient-boosted trees: a few thousand rows, 26 signals (settings chosen once, by the cross-validated
    utility on the development sets, against the logistic regression used before: 0.315 to 0.258)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=20, random_state=0
    )


def fit_cross_validated(x: np.ndarray, y: np.ndarray, groups: list[str]):
    """The classifier fitted on all rows, and its out-of-fold probabilities (GroupKFold by article or set: a row is
    judged by a model that saw nothing of its document)."""
    return classifier().fit(x, y), out_of_fold(x, y, groups)


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: list[str], seed: int | None = None) -> np.ndarray:
    """Each row's probability from a classifier fitted on the other folds (GroupKFold, 5 folds by set); `seed`
    shuffles which sets share a fold (None: sklearn's fixed assignment)."""
    from sklearn.model_selection import GroupKFold

    folds = GroupKFold(
        n_splits=min(5, len(set(groups))), **({} if seed is None else {"shuffle": True, "random_state": seed})
    )
    oof = np.zeros(len(y))
    for train, test in folds.split(x, y, groups):
        oof[test] = classifier().fit(x[train], y[train]).predict_proba(x[test])[:, 1]
    return oof


def write_model(out: Path, model, threshold: float, floor: float | None = None, **figures) -> None:
    """What bot.answer.decide.Answerability.load reads: the trees, and the features, threshold, floor and figures."""
    import joblib

    joblib.dump(model, out / MODEL_FILE, compress=3)
    floor = threshold if floor is None else floor
    report = {"features": FEATURES, "threshold": round(float(threshold), 2), "floor": round(float(floor), 2), **figures}
    (out / CALIBRATION_FILE).write_text(json.dumps(report, indent=1))


def outcomes(rows: list[dict], p: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(right, wrong) per row when the reader answers at p ≥ t: a right answer, or an abstention on what could
    not be answered, is right; an answer that is not right is wrong."""
    answered = p >= t
    right = np.array([r["right"] for r in rows], dtype=bool)
    answerable = np.array([r["answerable"] for r in rows], dtype=bool)
    return np.where(answered, right, ~answerable), answered & ~right


def by_group(rows: list[dict], right: np.ndarray, wrong: np.ndarray) -> dict[str, tuple[float, float]]:
    """Accuracy and wrong rate of each article or set."""
    groups = sorted({r["group"] for r in rows})
    index = {g: [i for i, r in enumerate(rows) if r["group"] == g] for g in groups}
    return {g: (round(float(right[ix].mean()), 3), round(float(wrong[ix].mean()), 3)) for g, ix in index.items()}


def utility(figures: dict[str, tuple[float, float]]) -> float:
    """Mean over sets of accuracy − WRONG_COST × wrong: each set weighs the same."""
    return float(np.mean([acc - WRONG_COST * wrong for acc, wrong in figures.values()]))


def boolq_figures(weights: Path, max_tokens: int) -> dict:
    """The yes/no head on BoolQ's held-out titles (the passage's first window), against always saying "yes"."""
    from bot.reader.model import SpanReader

    reader = SpanReader(weights, max_tokens)
    examples = boolq_examples(held_out=True)
    said = [reader.read(ex.question, [ex.context])[0].yes >= 0.5 for ex in tqdm(examples, desc="BoolQ", leave=False)]
    truth = [ex.yes_no for ex in examples]
    return {
        "questions": len(examples),
        "accuracy": round(float(np.mean([a == b for a, b in zip(said, truth, strict=True)])), 3),
        "always_yes": round(float(np.mean(truth)), 3),
    }


def calibrate(out: Path, squad_dir: Path = SQUAD_DIR, limit: int | None = None, refit: bool = False) -> dict:
    """Reads, fits, writes `out/answerability.json` and `out/answerability.joblib`; returns the figures. With `refit`,
    reads nothing: fits again on the readings stored in `out/calibration.jsonl` (the reader's own figures kept)."""
    if refit:
        rows = [json.loads(line) for line in (out / "calibration.jsonl").read_text().splitlines()]
        before = json.loads((out / CALIBRATION_FILE).read_text())
        gold, boolq = before["reader_on_gold_paragraphs"], before["boolq_held_out"]
        readings_in = before.get("readings_in", "bf16")  # the runs before this field read in bf16
    else:
        settings = Settings(
            llm="none", reader="trained", reader_weights=out / "reader.safetensors", answer_threshold=0.0
        )
        if not (out / MODEL_FILE).exists():  # the bot reading the questions needs one (threshold 0: never used)
            from sklearn.dummy import DummyClassifier

            write_model(out, DummyClassifier().fit(np.zeros((2, len(FEATURES))), [0, 1]), 0.0)
        rows = [*squad_rows(settings, squad_dir, limit), *dev_set_rows(settings, limit)]
        (out / "calibration.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        gold = gold_paragraph_figures(out / "reader.safetensors", squad_dir, limit, settings.reader_max_tokens)
        boolq = boolq_figures(out / "reader.safetensors", settings.reader_max_tokens)
        readings_in = "bf16" if settings.reader_bf16 and bf16_fast() else "fp32"

    model, threshold, floor, figures = fit_answerability(rows)
    report = {
        "readings_in": readings_in,
        "reader_on_gold_paragraphs": gold,
        "boolq_held_out": boolq,
        "cross_validated": figures,
    }
    write_model(out, model, threshold, floor=floor, **report)
    return report


def fit_answerability(rows: list[dict]):
    """The classifier (fitted on every row), its threshold (chosen on the development sets' out-of-fold replies)
    and the cross-validated figures."""
    from sklearn.metrics import roc_auc_score

    read = [r for r in rows if r["features"] is not None]
    x = np.array([r["features"] for r in read], dtype=float)
    y = np.array([r["right"] for r in read], dtype=int)
    model, oof = fit_cross_validated(x, y, [r["group"] for r in read])
    dev = [i for i, r in enumerate(read) if r["group"] != "squad"]
    dev_rows = [read[i] for i in dev]
    choices = {
        round(float(t), 2): by_group(dev_rows, *outcomes(dev_rows, oof[dev], t)) for t in np.linspace(0, 0.95, 39)
    }
    threshold = max(choices, key=lambda t: utility(choices[t]))
    floor = unsure_floor(oof[dev], np.array([r["right"] for r in dev_rows], dtype=bool), threshold)
    answered = oof >= threshold
    squad = [i for i, r in enumerate(read) if r["group"] == "squad"]
    squad_rows = [read[i] for i in squad]
    figures = {
        "questions": len(y),
        "groups": sorted({r["group"] for r in read}),
        "right_when_forced": round(float(y.mean()), 3),
        "auc": round(float(roc_auc_score(y, oof)), 3),
        "auc_development_sets": round(float(roc_auc_score(y[dev], oof[dev])), 3),
        "answered": round(float(answered.mean()), 3),
        "wrong": round(float((answered & (y == 0)).mean()), 3),
        "right_among_answered": round(float(y[answered].mean()), 3) if answered.any() else None,
        "wrong_cost": WRONG_COST,
        "utility_by_threshold": {t: round(utility(f), 3) for t, f in choices.items()},
        "accuracy_wrong_by_set": choices[threshold],
        "held_out_squad_accuracy_wrong": by_group(squad_rows, *outcomes(squad_rows, oof[squad], threshold)).get(
            "squad"
        ),
    }
    band = (oof[dev] >= floor) & (oof[dev] < threshold)
    figures["unsure_floor"] = floor
    figures["unsure_share_development_sets"] = round(float(band.mean()), 3)
    figures["unsure_right_development_sets"] = round(float(y[dev][band].mean()), 3) if band.any() else None
    return model, threshold, floor, figures


def unsure_floor(p: np.ndarray, right: np.ndarray, threshold: float) -> float:
    """The lowest probability from which, up to the threshold, the reader's best span is still right at least
    UNSURE_RIGHT of the time (out of fold, on the development sets): there a reply says it is unsure and quotes the
    closest sentence rather than declining. The threshold itself when no such band exists."""
    for t in np.linspace(0, threshold, 20, endpoint=False):
        band = (p >= t) & (p < threshold)
        if band.sum() >= 10 and right[band].mean() >= UNSURE_RIGHT:
            return round(float(t), 2)
    return threshold
