"""`eventbot train-reader --calibrate`: learns when to answer. Every question of the held-out SQuAD train articles
and of the development sets is read the way a user's question is (linked, retrieved among its documents, read by the
trained reader); each reading's evidence (bot.answer.answerability) is labelled right or wrong, and a logistic
regression is fitted on them. Its AUC and the threshold come from article-wise cross-validation (GroupKFold): the
lowest threshold whose out-of-fold wrong rate (answered but wrong, over all questions) is at most the target."""

import json
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bot.answer.answerability import CALIBRATION_FILE, FEATURES, features
from bot.reader.data import DEV_SETS_DIR, SQUAD_DIR, held_out_articles, squad_articles
from bot.settings import Settings

log = logging.getLogger(__name__)

MAX_WRONG = 0.05


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
    settings: Settings, documents: list[Path], questions: list[tuple[str, object, str]], label
) -> Iterator[dict]:
    """Index `documents` together in a temporary folder and answer every (question, gold, group) there as the bot
    would (linked, retrieved, read, replied), at threshold 0; `label(draft, gold)` says whether the reply is right."""
    from bot.eval.running import temporary_bot

    with temporary_bot(settings, documents) as (_, bot):
        for question, gold, group in tqdm(questions, desc="reading", unit="question"):
            linked = bot.knowledge.lexicon.link(question)
            draft = bot.answerer(linked, bot.retriever(linked))
            if draft.evidence is not None:
                yield {"features": features(draft.evidence), "right": label(draft, gold), "group": group}


def reply_text(draft) -> str:
    """What the evaluations score: the short answer, else the reply without its [n] markers."""
    from bot.eval.metrics import strip_markers

    return draft.short_answer or strip_markers(draft.text)


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
        yield from readings(settings, documents, questions, label)


def dev_set_rows(settings: Settings, limit: int | None) -> Iterator[dict]:
    """The development sets' single questions, each set over its own documents."""
    from bot.eval.metrics import contains_word, normalize, strip_markers
    from bot.eval.running import dataset_corpus, load_dataset

    def label(draft, item) -> bool:
        said = normalize(strip_markers(draft.text))
        return item.answerable and any(contains_word(said, normalize(a)) for a in item.answers if a.strip())

    for path in sorted(DEV_SETS_DIR.glob("*.jsonl")):
        items = [i for i in load_dataset(path) if not i.conversation][:limit]
        yield from readings(
            settings, dataset_corpus(path, settings), [(i.question, i, path.stem) for i in items], label
        )


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


def calibrate(out: Path, squad_dir: Path = SQUAD_DIR, limit: int | None = None, max_wrong: float = MAX_WRONG) -> dict:
    """Reads, fits, writes `out/answerability.json`; returns the cross-validated figures."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    settings = Settings(reader="trained", reader_weights=out / "reader.safetensors", answer_threshold=0.0)
    calibration = out / CALIBRATION_FILE
    if not calibration.exists():  # the bot reading the questions needs one; it answers everything at threshold 0
        neutral = {"features": FEATURES, "mean": [0.0] * len(FEATURES), "scale": [1.0] * len(FEATURES)}
        calibration.write_text(json.dumps(neutral | {"weights": [0.0] * len(FEATURES), "bias": 0.0, "threshold": 0.0}))
    rows = [*squad_rows(settings, squad_dir, limit), *dev_set_rows(settings, limit)]
    gold = gold_paragraph_figures(out / "reader.safetensors", squad_dir, limit, settings.reader_max_tokens)
    (out / "calibration.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    x = np.array([r["features"] for r in rows], dtype=float)
    y = np.array([r["right"] for r in rows], dtype=int)
    groups = [r["group"] for r in rows]

    def fit(xs, ys):
        scaler = StandardScaler().fit(xs)
        model = LogisticRegression(C=1.0, max_iter=2000).fit(scaler.transform(xs), ys)
        return scaler, model

    oof = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=min(5, len(set(groups)))).split(x, y, groups):
        scaler, model = fit(x[train], y[train])
        oof[test] = model.predict_proba(scaler.transform(x[test]))[:, 1]
    threshold = next(
        (t for t in np.linspace(0.05, 0.99, 95) if ((oof >= t) & (y == 0)).sum() / len(y) <= max_wrong), 0.99
    )
    scaler, model = fit(x, y)
    answered = oof >= threshold
    report = {
        "features": FEATURES,
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "weights": model.coef_[0].tolist(),
        "bias": float(model.intercept_[0]),
        "threshold": round(float(threshold), 2),
        "reader_on_gold_paragraphs": gold,
        "cross_validated": {
            "questions": len(y),
            "groups": sorted(set(groups)),
            "right_when_forced": round(float(y.mean()), 3),
            "auc": round(float(roc_auc_score(y, oof)), 3),
            "answered": round(float(answered.mean()), 3),
            "wrong": round(float((answered & (y == 0)).mean()), 3),
            "right_among_answered": round(float(y[answered].mean()), 3) if answered.any() else None,
            "max_wrong": max_wrong,
        },
    }
    calibration.write_text(json.dumps(report, indent=1))
    return report
