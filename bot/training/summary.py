"""Learn which sentences of a document are its key ones (bot.answer.summary): a logistic regression over each
sentence's features, from data/train/summary_sentences.jsonl (news documents under data/eval/, one line each, with the
two to four sentences a helper, reading only the document, said a summary must include, and a few more it could add).
No document an overview set asks about is among them. Leave-one-document-out cross-validation is reported against
the document's first sentences (a news story's lead), then the model is fitted on every document and written with its
card.

    python -m bot.training.summary [--out bot/answer/summary_sentences.json]
"""

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from bot.answer.corpus import Corpus
from bot.answer.summary import FEATURES, KEY_SENTENCES, SUMMARY_FILE, SummaryModel, sentence_features
from bot.models import shared_embedder
from index.chunking import attach_sentences, split_documents
from index.loaders import load_documents
from index.text.sentences import ParsedSentence

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "data/train/summary_sentences.jsonl"
C = 1.0  # inverse regularization
HELPFUL_WEIGHT = 0.3  # a sentence a longer summary would add counts as this much of a key one


def document_sentences(path: Path) -> tuple[list[str], list[ParsedSentence]]:
    """The document's sentences as indexing splits and parses them."""
    docs = load_documents([path], 10**9)
    chunks = split_documents(docs, 400, 80)
    attach_sentences(chunks, {d.metadata["path"]: d.page_content for d in docs})
    sentences = next(iter(Corpus(chunks).sentences.values()))
    return [s.text for s in sentences], [s.parsed for s in sentences]


def normalized(text: str) -> str:
    return " ".join(text.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=SUMMARY_FILE)
    args = parser.parse_args()
    embedder = shared_embedder(False)
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    docs = []
    for row in rows:
        texts, parsed = document_sentences(ROOT / row["document"])
        vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index = {normalized(t): i for i, t in enumerate(texts)}
        must = [index[normalized(t)] for t in row["must"]]
        helpful = [index[normalized(t)] for t in row["helpful"]]
        label = np.zeros(len(texts), dtype=np.float32)
        label[helpful] = HELPFUL_WEIGHT
        label[must] = 1.0
        docs.append((texts, vectors, parsed, sentence_features(texts, vectors, parsed), label, set(must)))

    def fit(training: list) -> SummaryModel:
        x = np.vstack([d[3] for d in training])
        y = np.concatenate([d[4] for d in training])
        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        z = (x - mean) / scale
        # a key sentence is a positive example with weight 1, a helpful one with HELPFUL_WEIGHT, the rest negatives
        xs = np.vstack([z, z[y > 0]])
        ys = np.concatenate([np.zeros(len(y)), np.ones(int((y > 0).sum()))])
        weight = np.concatenate([np.where(y > 0, 0.0, 1.0), y[y > 0]])
        model = LogisticRegression(C=C, class_weight="balanced", max_iter=2000)
        model.fit(xs, ys, sample_weight=weight)
        return SummaryModel(mean, scale, model.coef_[0].astype(np.float32), float(model.intercept_[0]))

    learnt = lead = 0
    musts = sum(len(d[5]) for d in docs)
    for i, held_out in enumerate(docs):
        model = fit(docs[:i] + docs[i + 1 :])
        texts, vectors, parsed, _, _, must = held_out
        learnt += len(must & set(model.key_sentences(texts, vectors, parsed)))
        opening = [j for j, t in enumerate(texts) if len(t.split()) >= 4 and t.rstrip().endswith((".", "”", '"'))]
        lead += len(must & set(opening[:KEY_SENTENCES]))
    model = fit(docs)
    card = {
        "documents": len(docs),
        "sentences": int(sum(len(d[0]) for d in docs)),
        "key_sentences": musts,
        "key_sentences_found_leave_one_document_out": round(learnt / musts, 3),
        "key_sentences_in_the_first_sentences": round(lead / musts, 3),
        "weights": {f: round(float(w), 3) for f, w in zip(FEATURES, model.weights, strict=True)},
    }
    model.save(args.out, card)
    print(json.dumps(card, indent=1))


if __name__ == "__main__":
    main()
