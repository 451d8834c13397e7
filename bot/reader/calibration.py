"""`eventbot train-reader --calibrate-only`: learns when to answer. Every question of the held-out SQuAD train
articles and of the development sets is read the way a user's question is (linked, retrieved among its documents,
read by the rule reader and by the trained span reader); each reply is labelled right or wrong, and two logistic
regressions are fitted, each cross-validated by article (GroupKFold):

- the span reader's answerability (`answerability.json`): is its best span right? Threshold: the lowest whose
  out-of-fold wrong rate (answered but wrong, over all questions) is at most MAX_WRONG.
- the combined reader's arbiter (`arbiter.json`): is the rule reader's answer right? Threshold: the one whose
  out-of-fold replies serve the articles and sets best, each weighing the same, a wrong answer costing WRONG_COST
  right ones (bot.answer.combined)."""

import json
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bot.answer.answerability import CALIBRATION_FILE, FEATURES, features
from bot.answer.combined import ARBITER_FEATURES, ARBITER_FILE
from bot.reader.data import DEV_SETS_DIR, SQUAD_DIR, held_out_articles, squad_articles
from bot.settings import Settings

log = logging.getLogger(__name__)

MAX_WRONG = 0.05  # the span reader's own answers: at most this share of all questions answered wrongly
WRONG_COST = 2.0  # the combined reader's arbiter: a wrong answer costs twice what a right one gains
C = 1.0  # the logistic regressions' inverse regularisation (scikit-learn's default)


def squad_f1(prediction: str, gold: str) -> float:
    """SQuAD's token F1 (official normalisation)."""
    from bot.eval.metrics import squad_tokens

    p, g = squad_tokens(prediction), squad_tokens(gold)
    common = sum(min(p.count(t), g.count(t)) for t in set(p) & set(g))
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def readings(
    settings: Settings, documents: list[Path], questions: list[tuple[str, object, str]], label, answerable
) -> Iterator[dict]:
    """Index `documents` together in a temporary folder and answer every (question, gold, group) there as the bot
    would (linked, retrieved, read by both readers: bot.answer.combined.CombinedAnswerer.consider), the span reader
    at threshold 0; `label(draft, gold)` says whether a reply is right, `answerable(gold)` whether any could be."""
    from bot.eval.running import temporary_bot

    with temporary_bot(settings, documents) as (_, bot):
        for question, gold, group in tqdm(questions, desc="reading", unit="question"):
            linked = bot.knowledge.lexicon.link(question)
            passages = bot.retriever(linked)
            rules, arbiter = bot.answerer.consider(linked, passages)
            reading = bot.answerer.reader(linked, passages)  # at threshold 0: every reading has its evidence
            yield {
                "group": group,
                "answerable": answerable(gold),
                "features": features(reading.evidence) if reading.evidence is not None else None,
                "right": reading.evidence is not None and label(reading, gold),
                "arbiter": arbiter,
                "rules_right": arbiter is not None and label(rules, gold),
            }


def reply_text(draft) -> str:
    """What the evaluations score: the short answer, else the reply without its [n] markers."""
    from bot.chain import short_answer
    from bot.eval.metrics import strip_markers

    return short_answer(draft) or strip_markers(draft.text)


def squad_rows(settings: Settings, squad_dir: Path, limit: int | None) -> Iterator[dict]:
    """The held-out SQuAD train articles, indexed together (the right paragraph must be found among them)."""

    def label(draft, golds) -> bool:
        return bool(golds) and max(squad_f1(reply_text(draft), g) for g in golds) >= 0.5

    with tempfile.TemporaryDirectory(prefix="eventbot-squad-") as tmp:
        documents, questions = [], []
        for article in squad_articles(held_out_articles(squad_dir), squad_dir):
            path = Path(tmp) / f"{article['title']}.txt"
            title = article["title"].replace("_", " ")
            path.write_text(title + "\n\n" + "\n\n".join(p["context"] for p in article["paragraphs"]))
            documents.append(path)
            qas = [qa for p in article["paragraphs"] for qa in p["qas"]][:limit]
            questions += [(qa["question"], [a["text"] for a in qa["answers"]], article["title"]) for qa in qas]
        yield from readings(settings, documents, questions, label, bool)


def dev_set_rows(settings: Settings, limit: int | None) -> Iterator[dict]:
    """The development sets' single questions, each set over its own documents."""
    from bot.eval.metrics import contains_word, normalize, strip_markers
    from bot.eval.running import dataset_corpus, load_dataset

    def label(draft, item) -> bool:
        said = normalize(strip_markers(draft.text))
        return item.answerable and any(contains_word(said, normalize(a)) for a in item.answers if a.strip())

    for path in sorted(DEV_SETS_DIR.glob("*.jsonl")):
        items = [i for i in load_dataset(path) if not i.conversation][:limit]
        questions = [(i.question, i, path.stem) for i in items]
        yield from readings(settings, dataset_corpus(path, settings), questions, label, lambda i: i.answerable)


def gold_paragraph_figures(weights: Path, squad_dir: Path, limit: int | None, max_tokens: int) -> dict:
    """The reader alone on the held-out articles, reading each question's own paragraph (as SQuAD papers report):
    F1 and EM when forced to answer the answerable questions, and how well its no-answer margin alone tells
    answerable from unanswerable (AUC)."""
    from sklearn.metrics import roc_auc_score

    from bot.eval.metrics import squad_tokens
    from bot.reader.model import SpanReader

    reader = SpanReader(weights, max_tokens)
    f1s, ems, margins, answerable = [], [], [], []
    for article in squad_articles(held_out_articles(squad_dir), squad_dir):
        qas = [(qa, p["context"]) for p in article["paragraphs"] for qa in p["qas"]][:limit]
        for qa, context in tqdm(qas, desc=f"reading {article['title']}", unit="question", leave=False):
            guess = max(reader.read(qa["question"], [context]), key=lambda g: g.margin, default=None)
            golds = [a["text"] for a in qa["answers"]]
            margins.append(guess.margin if guess else -99.0)
            answerable.append(bool(golds))
            if golds:
                span = context[guess.start : guess.end] if guess else ""
                f1s.append(max(squad_f1(span, g) for g in golds))
                ems.append(max(float(squad_tokens(span) == squad_tokens(g)) for g in golds))
    return {
        "questions": len(answerable),
        "answerable_f1_forced": round(100 * float(np.mean(f1s)), 1),
        "answerable_em_forced": round(100 * float(np.mean(ems)), 1),
        "no_answer_margin_auc": round(float(roc_auc_score(answerable, margins)), 3)
        if len(set(answerable)) > 1
        else None,
    }


def fit_cross_validated(x: np.ndarray, y: np.ndarray, groups: list[str]):
    """A standardised logistic regression fitted on all rows, and its out-of-fold probabilities (GroupKFold by
    article or set: a row is judged by a model that saw nothing of its document)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    def fit(xs, ys):
        scaler = StandardScaler().fit(xs)
        return scaler, LogisticRegression(C=C, max_iter=5000).fit(scaler.transform(xs), ys)

    oof = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=min(5, len(set(groups)))).split(x, y, groups):
        scaler, model = fit(x[train], y[train])
        oof[test] = model.predict_proba(scaler.transform(x[test]))[:, 1]
    return (*fit(x, y), oof)


def model_json(names: list[str], scaler, model, threshold: float, **figures) -> str:
    """What bot.answer.answerability.LogisticModel.load reads, with the figures it was chosen by."""
    return json.dumps(
        {
            "features": names,
            "mean": scaler.mean_.tolist(),
            "scale": scaler.scale_.tolist(),
            "weights": model.coef_[0].tolist(),
            "bias": float(model.intercept_[0]),
            "threshold": round(float(threshold), 2),
            **figures,
        },
        indent=1,
    )


def combined_outcomes(rows: list[dict], arbiter_p: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(right, wrong) per row of the combined reader with arbiter threshold `t` (bot.answer.combined): the rule
    reader's answer where it answered and the arbiter lets it stand, else an abstention."""
    stands = np.array([r["arbiter"] is not None for r in rows]) & (arbiter_p >= t)
    rules_right = np.array([bool(r["rules_right"]) for r in rows])
    answerable = np.array([bool(r["answerable"]) for r in rows])
    return np.where(stands, rules_right, ~answerable), stands & ~rules_right


def by_group(rows: list[dict], right: np.ndarray, wrong: np.ndarray) -> dict[str, tuple[float, float]]:
    """Accuracy and wrong rate of each article or set."""
    groups = sorted({r["group"] for r in rows})
    index = {g: [i for i, r in enumerate(rows) if r["group"] == g] for g in groups}
    return {g: (round(float(right[ix].mean()), 3), round(float(wrong[ix].mean()), 3)) for g, ix in index.items()}


def utility(figures: dict[str, tuple[float, float]]) -> float:
    """Mean over articles and sets of accuracy − WRONG_COST × wrong: each document weighs the same."""
    return float(np.mean([acc - WRONG_COST * wrong for acc, wrong in figures.values()]))


def calibrate(out: Path, squad_dir: Path = SQUAD_DIR, limit: int | None = None, max_wrong: float = MAX_WRONG) -> dict:
    """Reads, fits, writes `out/answerability.json` and `out/arbiter.json`; returns the cross-validated figures."""
    from sklearn.metrics import roc_auc_score

    settings = Settings(reader="combined", reader_weights=out / "reader.safetensors", answer_threshold=0.0)
    neutral = {"mean": 0.0, "scale": 1.0, "weights": 0.0}
    for name, names in ((CALIBRATION_FILE, FEATURES), (ARBITER_FILE, ARBITER_FEATURES)):
        if not (out / name).exists():  # the bot reading the questions needs one (it is not used for the rows)
            model = {k: [v] * len(names) for k, v in neutral.items()} | {"bias": 0.0, "threshold": 0.0}
            (out / name).write_text(json.dumps({"features": names} | model))
    rows = [*squad_rows(settings, squad_dir, limit), *dev_set_rows(settings, limit)]
    gold = gold_paragraph_figures(out / "reader.safetensors", squad_dir, limit, settings.reader_max_tokens)
    (out / "calibration.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    # when the span reader answers: the lowest threshold whose out-of-fold wrong rate is at most max_wrong
    read = [r for r in rows if r["features"] is not None]
    x = np.array([r["features"] for r in read], dtype=float)
    y = np.array([r["right"] for r in read], dtype=int)
    scaler, model, oof = fit_cross_validated(x, y, [r["group"] for r in read])
    threshold = next(
        (t for t in np.linspace(0.05, 0.99, 95) if ((oof >= t) & (y == 0)).sum() / len(y) <= max_wrong), 0.99
    )
    answered = oof >= threshold
    report = {
        "reader_on_gold_paragraphs": gold,
        "cross_validated": {
            "questions": len(y),
            "groups": sorted({r["group"] for r in read}),
            "right_when_forced": round(float(y.mean()), 3),
            "auc": round(float(roc_auc_score(y, oof)), 3),
            "answered": round(float(answered.mean()), 3),
            "wrong": round(float((answered & (y == 0)).mean()), 3),
            "right_among_answered": round(float(y[answered].mean()), 3) if answered.any() else None,
            "max_wrong": max_wrong,
        },
    }
    (out / CALIBRATION_FILE).write_text(model_json(FEATURES, scaler, model, threshold, **report))

    # whether the rule reader's answer stands: the threshold that serves the articles and sets best
    checked = [i for i, r in enumerate(rows) if r["arbiter"] is not None]
    x = np.array([rows[i]["arbiter"] for i in checked], dtype=float)
    y = np.array([rows[i]["rules_right"] for i in checked], dtype=int)
    scaler, model, oof = fit_cross_validated(x, y, [rows[i]["group"] for i in checked])
    arbiter_p = np.zeros(len(rows))
    arbiter_p[checked] = oof
    choices = {
        round(float(t), 2): by_group(rows, *combined_outcomes(rows, arbiter_p, t)) for t in np.linspace(0, 0.95, 20)
    }
    best = max(choices, key=lambda t: utility(choices[t]))
    figures = {
        "questions": len(rows),
        "rule_answers_checked": len(checked),
        "rule_answers_right": round(float(y.mean()), 3),
        "auc": round(float(roc_auc_score(y, oof)), 3),
        "wrong_cost": WRONG_COST,
        "utility_by_threshold": {t: round(utility(f), 3) for t, f in choices.items()},
        "accuracy_wrong_by_group": {
            "rules": choices[0.0],
            "combined": choices[best],
        },
    }
    (out / ARBITER_FILE).write_text(model_json(ARBITER_FEATURES, scaler, model, best, cross_validated=figures))
    return report
