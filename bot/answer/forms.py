"""What form of answer a question asks for: one fact (or a yes or no), or an answer of several sentences: an overview
("what is this about?"), a list, an explanation (why, how), a comparison, a sequence, a person's part in the story,
or an overview of every document ("what are these files about?").

A logistic regression over the question's sentence embedding (the vector retrieval computes anyway) and the words
and word pairs it is written with (the embedding weighs what a question is about; "list", "role", "why" say what form
it asks for), learnt from questions written as people type them and from SQuAD and BoolQ
questions as single facts (bot.training.forms; its card: bot/answer/question_forms.md). Read once per question by
the chain's understand step."""

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.answer.terms import terms_of
from index.text.pipeline import parse

FORMS = ("fact", "overview", "list", "explain", "compare", "sequence", "role", "collection")
LONG_FORMS = frozenset(FORMS[1:])  # answered in several cited sentences (bot.answer.sentence_guard)
OVERVIEWS = frozenset({"overview", "collection"})  # answered with the documents' key sentences (bot.answer.overview)
FORMS_FILE = Path(__file__).with_name("question_forms.json")
# a term this like (difflib's ratio) a term asking for an overview is that term mistyped ("happend", "sumary")
TYPO_LIKENESS = 0.85
MIN_TYPO_LENGTH = 6  # a shorter term is as like a real word as a mistyped one ("plane" and "plan", "grace", "race")
WORD = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern, which the training used


def word_features(question: str, vocabulary: dict[str, int]) -> np.ndarray:
    """Which of the vocabulary's words and word pairs the question has, as a unit vector (scikit-learn's
    CountVectorizer(binary=True, ngram_range=(1, 2)) then an L2 normalization)."""
    words = WORD.findall(question.lower())
    grams = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    x = np.zeros(len(vocabulary), dtype=np.float32)
    x[[vocabulary[g] for g in grams if g in vocabulary]] = 1.0
    norm = float(np.linalg.norm(x))
    return x / norm if norm else x


@dataclass(frozen=True)
class FormModel:
    """The learnt weights: one row per form over the embedding's dimensions, and a bias per form."""

    forms: tuple[str, ...]
    vocabulary: dict[str, int]  # word or word pair -> its column after the embedding's
    weights: np.ndarray  # (forms, embedding dims + vocabulary)
    bias: np.ndarray  # (forms,)
    long_threshold: float = 0.5  # a question is answered in several sentences when P(not one fact) reaches it
    # the terms that ask for an overview ("summary", "gist", "tldr"), learnt from the overview training questions
    overview_terms: frozenset[str] = frozenset()

    def features(self, question: str, vector: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(vector, dtype=np.float32), word_features(question, self.vocabulary)])

    def probabilities(self, question: str, vector: np.ndarray) -> dict[str, float]:
        logits = self.weights @ self.features(question, vector) + self.bias
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return {form: float(x) for form, x in zip(self.forms, p, strict=True)}

    def form_of(self, question: str, vector: np.ndarray, in_documents: Callable[[str], bool] = lambda t: True) -> str:
        """The form of `question`, whose embedding is `vector`: one fact unless the longer forms together reach the
        threshold (fitted so that few single facts leave the path they are answered well on), then the likeliest of
        them. An overview of something no document names ("what happens to the cafe?": a topic of the question,
        `topics`, that `in_documents` does not know) is a single fact: the documents' summary is no answer."""
        p = self.probabilities(question, vector)
        if 1.0 - p[FORMS[0]] < self.long_threshold:
            return FORMS[0]
        form = max(LONG_FORMS, key=p.__getitem__)
        if form in OVERVIEWS and not all(in_documents(t) for t in self.topics(question)):
            return FORMS[0]
        return form

    def topics(self, question: str) -> list[str]:
        """The terms of what a question names: its nouns and proper nouns, less the words people ask with (the
        vocabulary learnt from the training questions, where "lines" of "summarise it in a few lines" is) and those
        asking for an overview. "hey" or "mean" ("what does it mean for the council") name nothing; nor does a term
        asking for an overview mistyped ("what happend to the painting"); a name mistyped still names."""
        named = [
            t
            for t in parse(question)
            if t.pos_ in {"NOUN", "PROPN"}
            and not t.is_stop
            and t.lower_ not in self.vocabulary
            and t.lemma_.lower() not in self.vocabulary
        ]
        return [w for t in named for w in sorted(terms_of(t.text)) if not self._asks_for_an_overview(w)]

    def _asks_for_an_overview(self, term: str) -> bool:
        return term in self.overview_terms or (
            len(term) >= MIN_TYPO_LENGTH
            and bool(difflib.get_close_matches(term, self.overview_terms, n=1, cutoff=TYPO_LIKENESS))
        )

    def save(self, path: Path, card: dict) -> None:
        path.write_text(
            json.dumps(
                {
                    "forms": list(self.forms),
                    "overview_terms": sorted(self.overview_terms),
                    "vocabulary": sorted(self.vocabulary, key=self.vocabulary.__getitem__),
                    "long_threshold": round(self.long_threshold, 4),
                    "bias": [round(float(b), 6) for b in self.bias],
                    "weights": [[round(float(w), 6) for w in row] for row in self.weights],
                    "card": card,
                }
            )
            + "\n"
        )

    @classmethod
    def load(cls, path: Path = FORMS_FILE) -> "FormModel":
        data = json.loads(path.read_text())
        return cls(
            tuple(data["forms"]),
            {g: i for i, g in enumerate(data["vocabulary"])},
            np.asarray(data["weights"], dtype=np.float32),
            np.asarray(data["bias"], dtype=np.float32),
            float(data["long_threshold"]),
            frozenset(data["overview_terms"]),
        )
