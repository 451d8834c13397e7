"""Learn which form of answer a question asks for (bot.answer.forms): a logistic regression over the questions'
sentence embeddings.

Training questions: data/train/question_forms*.jsonl (written by helpers as people type: 110 per form, 240 terse
single facts such as "sakamoto short program result?", 160 overviews of one document or of every document, 820 of
the forms told least well and single facts that read like them; none from a set the bot is measured on), and as
single facts, questions from data/train/b*/ (helper-written, chat-typed), from SQuAD 1.1's training file and from
BoolQ (yes/no). A why or how question of those is left out: asked of a span
reader it is a single fact, asked of a person it asks for an explanation. Five-fold cross-validation is reported, then
the model is fitted on everything and written with its card.

    python -m bot.training.forms [--out bot/answer/question_forms.json]
"""

import argparse
import gzip
import json
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict

from bot.answer.forms import FORMS, FORMS_FILE, OVERVIEWS, FormModel, word_features
from bot.answer.terms import content_terms
from bot.models import shared_embedder

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
WRITTEN = sorted((ROOT / "data/train").glob("question_forms*.jsonl"))
EXPLANATION = re.compile(
    r"^\s*(why|how)\b(?!\s+(many|much|long|old|far|tall|big|often|fast|high|late|early|soon))", re.I
)
FACTS_PER_SOURCE = {"chat": 300, "squad": 200, "boolq": 100}
C = 4.0  # inverse regularization
MAX_FACTS_TAKEN_LONG = (
    0.025  # the threshold on P(a longer form) leaves at most this share of single facts out of their path
)
MIN_COUNT = 3  # a word or word pair in fewer training questions is not a feature
# a term in this many overview questions asks for an overview ("gist", "tldr"): an overview naming another term that
# no document holds is of something the documents lack (bot.answer.forms.FormModel.form_of)
MIN_OVERVIEW_QUESTIONS = 3


def written_questions() -> list[tuple[str, str]]:
    rows = [json.loads(line) for path in WRITTEN for line in path.read_text().splitlines() if line.strip()]
    return [(r["question"], r["form"]) for r in rows]


def fact_questions(rng: random.Random) -> list[tuple[str, str]]:
    """Single-fact questions from three sources, why/how ones left out."""
    rows = [json.loads(line) for f in sorted((ROOT / "data/train").glob("b*/*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]  # fmt: skip
    chat = [row["turns"][0]["question"] if "turns" in row else row["question"] for row in rows]  # a first turn
    with gzip.open(SHARED / "squad/train-v1.1.json.gz") as f:
        squad = [q["question"] for article in json.load(f)["data"] for p in article["paragraphs"] for q in p["qas"]]
    with gzip.open(SHARED / "boolq/dev.jsonl.gz", "rt") as f:
        boolq = [json.loads(line)["question"] for line in f]
    picked = []
    for name, pool in (("chat", chat), ("squad", squad), ("boolq", boolq)):
        pool = [q for q in pool if not EXPLANATION.match(q)]
        picked += rng.sample(pool, FACTS_PER_SOURCE[name])
    return [(q, "fact") for q in picked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=FORMS_FILE)
    args = parser.parse_args()
    rng = random.Random(0)
    examples = written_questions() + fact_questions(rng)
    questions, labels = [q for q, _ in examples], np.array([FORMS.index(f) for _, f in examples])
    vectors = np.asarray(shared_embedder(False).embed_documents(questions), dtype=np.float32)
    counts = CountVectorizer(binary=True, ngram_range=(1, 2), min_df=MIN_COUNT).fit(questions)
    vocabulary = {g: int(i) for g, i in counts.vocabulary_.items()}
    x = np.hstack([vectors, np.stack([word_features(q, vocabulary) for q in questions])])
    model = LogisticRegression(C=C, max_iter=2000)
    p = cross_val_predict(model, x, labels, cv=5, method="predict_proba")
    p_long = 1.0 - p[:, 0]
    threshold = float(np.quantile(p_long[labels == 0], 1.0 - MAX_FACTS_TAKEN_LONG))
    predicted = np.where(p_long < threshold, 0, 1 + p[:, 1:].argmax(axis=1))
    per_form = {
        form: round(float((predicted[labels == i] == i).mean()), 3)
        for i, form in enumerate(FORMS)
        if (labels == i).any()
    }
    accuracy = round(float((predicted == labels).mean()), 3)
    facts_called_long = round(float((predicted[labels == 0] != 0).mean()), 3)
    print(f"5-fold cross-validated accuracy {accuracy}; recall per form {per_form}")
    print(f"single facts taken for a longer form: {facts_called_long} (threshold {threshold:.3f})")
    model.fit(x, labels)
    card = {
        "what": "logistic regression over all-MiniLM-L6-v2 question embeddings and word/word-pair features: "
        "the form of answer a question asks for",
        "trained_on": dict(Counter(f for _, f in examples)),
        "sources": "data/train/question_forms*.jsonl (helper-written), data/train/b*/ (chat-typed single facts), "
        "SQuAD 1.1 train (Rajpurkar et al., CC BY-SA 4.0), BoolQ dev (CC BY-SA 3.0)",
        "cross_validated_accuracy": accuracy,
        "cross_validated_recall": per_form,
        "facts_taken_for_a_longer_form": facts_called_long,
        "long_threshold": round(threshold, 4),
        "C": C,
        "words_and_pairs": len(vocabulary),
    }
    overview_terms = Counter(t for q, f in examples if f in OVERVIEWS for t in set(content_terms(q)))
    asking = frozenset(t for t, n in overview_terms.items() if n >= MIN_OVERVIEW_QUESTIONS)
    card["overview_terms"] = len(asking)
    weights, bias = model.coef_.astype(np.float32), model.intercept_.astype(np.float32)
    FormModel(FORMS, vocabulary, weights, bias, threshold, asking).save(args.out, card)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
