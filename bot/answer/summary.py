"""A summary of every document, chosen once when the documents are learnt (bot.learning): its key sentences, which an
overview ("what is this about?", "summarize it") quotes, and the documents list shows.

Which sentences are key is learnt (bot.training.summary; card: bot/answer/summary_sentences.md): a logistic regression
over what a reader notices of a sentence: where it stands, how central its meaning is to the document's (MiniLM
embeddings, computed here once per document), how many of the document's frequent words, names and numbers it
holds, how much of it is a quote. Trained on news documents whose key sentences a helper marked; none of them is a
document the bot's overviews are measured on. The key sentences are quoted whole, so a summary says nothing its
document does not."""

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from bot.answer.terms import content_terms, without_possessive
from bot.lang import vocabulary
from bot.types import Passage, Sentence
from index.text.sentences import ParsedSentence

if TYPE_CHECKING:
    from bot.answer.corpus import Corpus

SUMMARY_FILE = Path(__file__).with_name("summary_sentences.json")
KEY_SENTENCES = 4  # a summary's sentences (the issue asks for two to four)
MIN_WORDS = 4  # shorter lines (a byline, a dateline, a caption) are never key
SAME_MEANING = 0.8  # a sentence this close (cosine) to one already chosen repeats it (a headline and its lead)
# a long document's key sentences are chosen among its first sentences, so that choosing them costs no more than
# embedding these (the training documents have up to 44; the model prefers early sentences)
CANDIDATES = 60
FEATURES = (
    "nearness to the start",  # 1 / (1 + index)
    "place in the document",  # index / sentences
    "headline",  # the first line, without a full stop
    "centrality",  # cosine to the mean of the document's sentence embeddings
    "likeness to the first line",  # cosine to the first sentence's embedding
    "frequent words",  # mean share of the document's most frequent term that its terms reach
    "names",  # log(1 + named entities)
    "numbers",  # log(1 + numbers)
    "quoted share",  # tokens inside quotation marks / tokens
    "length",  # log(words)
)
QUOTATION_MARKS = frozenset("“”‘’\"'")
HONORIFICS = vocabulary().honorifics  # "Mrs Harrow" is a later mention of someone named in full


def quoted_share(parsed: ParsedSentence) -> float:
    """The share of a sentence's tokens that lie inside quotation marks."""
    inside, quoted = False, 0
    for token in parsed.tokens:
        if token.lemma in QUOTATION_MARKS:
            inside = not inside
        elif inside:
            quoted += 1
    return quoted / max(len(parsed.tokens), 1)


def sentence_features(texts: list[str], vectors: np.ndarray, parsed: list[ParsedSentence]) -> np.ndarray:
    """One row per sentence of a document, in the order of FEATURES. `vectors` are the sentences' unit embeddings,
    `parsed` their stored parse (entities, parts of speech)."""
    n = len(texts)
    centroid = vectors.mean(axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    terms = [content_terms(t) for t in texts]
    tf = Counter(t for ts in terms for t in ts)
    top = max(tf.values(), default=1)
    rows = []
    for i, (text, sentence) in enumerate(zip(texts, parsed, strict=True)):
        rows.append(
            [
                1.0 / (1 + i),
                i / max(n - 1, 1),
                float(i == 0 and not text.rstrip().endswith((".", "!", "?", "”", '"'))),
                float(vectors[i] @ centroid),
                float(vectors[i] @ vectors[0]),
                float(np.mean([tf[t] / top for t in terms[i]])) if terms[i] else 0.0,
                math.log1p(len(sentence.entities)),
                math.log1p(sum(t.pos == "NUM" for t in sentence.tokens)),
                quoted_share(sentence),
                math.log(max(len(text.split()), 1)),
            ]
        )
    return np.asarray(rows, dtype=np.float32)


@dataclass(frozen=True)
class SummaryModel:
    """The learnt weights over the standardized features."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    @property
    def fingerprint(self) -> str:
        """Tells these weights from others: a summary kept from other weights is chosen again."""
        return hashlib.sha256(np.concatenate([self.mean, self.scale, self.weights, [self.bias]]).tobytes()).hexdigest()[
            :12
        ]

    def scores(self, features: np.ndarray) -> np.ndarray:
        return ((features - self.mean) / self.scale) @ self.weights + self.bias

    def key_sentences(self, texts: list[str], vectors: np.ndarray, parsed: list[ParsedSentence]) -> list[int]:
        """The indices of the document's key sentences, in document order: the likeliest first, none that repeats
        one already chosen, none shorter than MIN_WORDS."""
        if not texts:
            return []
        vectors = np.asarray(vectors, dtype=np.float32)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        scores = self.scores(sentence_features(texts, vectors, parsed))
        chosen: list[int] = []
        for i in np.argsort(-scores):
            if len(chosen) == KEY_SENTENCES:
                break
            if len(texts[i].split()) < MIN_WORDS or any(vectors[i] @ vectors[j] > SAME_MEANING for j in chosen):
                continue
            chosen.append(int(i))
        return sorted(chosen)

    def save(self, path: Path, card: dict) -> None:
        data = {
            "features": list(FEATURES),
            "mean": [round(float(x), 6) for x in self.mean],
            "scale": [round(float(x), 6) for x in self.scale],
            "weights": [round(float(x), 6) for x in self.weights],
            "bias": round(float(self.bias), 6),
            "card": card,
        }
        path.write_text(json.dumps(data, indent=1) + "\n")

    @classmethod
    def load(cls, path: Path = SUMMARY_FILE) -> "SummaryModel":
        data = json.loads(path.read_text())
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path} was trained on other features: run `python -m bot.training.summary`")
        return cls(
            np.asarray(data["mean"], dtype=np.float32),
            np.asarray(data["scale"], dtype=np.float32),
            np.asarray(data["weights"], dtype=np.float32),
            float(data["bias"]),
        )


@dataclass(frozen=True)
class Summary:
    """A document's key sentences, in document order, each a passage of its own (cited like any passage), and a
    digest of the text they were chosen from, so that an unchanged document is not summarized again. With them, the
    sentences that introduce the people it names (`introductions`), which answer a list of them."""

    digest: str
    sentences: tuple[Passage, ...]
    people: tuple[Passage, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(" ".join(p.text.split()) for p in self.sentences)


def way_of(model: SummaryModel | None) -> str:
    """How summaries are chosen: by these weights (their fingerprint), or "opening"; a summary's digest starts with it."""
    return "opening" if model is None else model.fingerprint


def summarize(
    corpus: "Corpus",
    model: SummaryModel | None,
    embedder: Embeddings,
    kept: dict[str, Summary],
    show_progress: bool = False,
) -> dict[str, Summary]:
    """Every document's summary: its key sentences as `model` chooses them over the sentences' embeddings, or without
    a model its opening sentences (a news story's lead). A document whose text and way of choosing (the model's
    weights) are those of a `kept` summary keeps it."""
    summaries = {}
    way = way_of(model)
    for path, sentences in tqdm(
        corpus.sentences.items(), desc="Indexing: summaries", unit="document", disable=not show_progress
    ):
        digest = f"{way}:{hashlib.sha256(corpus.texts[path].encode()).hexdigest()[:24]}"
        if path in kept and kept[path].digest == digest:
            summaries[path] = kept[path]
            continue
        sentences = sentences[:CANDIDATES]
        texts = [s.text for s in sentences]
        if model is not None:
            vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
            chosen = model.key_sentences(texts, vectors, [s.parsed for s in sentences])
        else:
            chosen = [i for i, text in enumerate(texts) if len(text.split()) >= MIN_WORDS][:KEY_SENTENCES]
        title = corpus.knowledge.sources.get(path, ("", ""))[1] if corpus.knowledge else ""
        people = introductions(corpus.sentences[path], corpus.texts[path], corpus.lexicon.people)
        summaries[path] = Summary(digest, _passages([sentences[i] for i in chosen], title), _passages(people, title))
    return summaries


def _passages(sentences: list[Sentence], title: str) -> tuple[Passage, ...]:
    """Sentences as passages of their own, cited like any passage."""
    return tuple(Passage(s.chunk_id, s.source, s.path, title or s.source, s.text, s.span.start, 1.0) for s in sentences)


def introductions(sentences: list[Sentence], text: str, people: set[str]) -> list[Sentence]:
    """The sentences that first name each person a document names in full, the one naming most people not yet named
    first (earlier first among equals): the first n of them name the most people n such sentences can. A person is a
    name the parse labels PERSON, of two words or more and not opening with a title ("Mrs Harrow" is a later mention
    of someone named in full), that `people` (the lexicon's, bot.answer.linking) counts among people, alone or after
    a title ("Mayor Helen Okafor")."""
    first: dict[str, Sentence] = {}  # a person → the sentence that first names them in full
    named: dict[int, set[str]] = {}  # a sentence's index → the people it names in full
    for sentence in sentences:
        for person in _people_named(sentence, text, people):
            first.setdefault(person, sentence)
            named.setdefault(sentence.index, set()).add(person)
    candidates = list({s.index: s for s in first.values()}.values())
    chosen: list[Sentence] = []
    covered: set[str] = set()
    while candidates:
        best = max(candidates, key=lambda s: (len(named[s.index] - covered), -s.index))
        if not named[best.index] - covered:
            break
        chosen.append(best)
        covered |= named[best.index]
        candidates.remove(best)
    return chosen


def _people_named(sentence: Sentence, text: str, people: set[str]) -> set[str]:
    if sentence.parsed is None:
        return set()
    names = {without_possessive(text[e.start : e.end]).strip() for e in sentence.parsed.entities if e.label == "PERSON"}
    return {
        n
        for n in names
        if len(n.split()) > 1
        and n.split()[0].lower().rstrip(".") not in HONORIFICS
        and any(p == n or p.endswith(f" {n}") for p in people)  # "Mayor Helen Okafor" counts "Helen Okafor"
    }
