"""The combined reader (EVENTBOT_READER=combined): the rule reader answers, the trained span reader
checks the answer, and a learnt arbiter decides whether it stands; when it does not, the bot says the documents
don't say.

The two readers fail differently: the rules are sharp on news of events, but on documents unlike those they were
written for they answer about half of what the text does not say; the span reader's answers are rarely wrong but it
declines most questions. So the span reader reads the rule reader's own sentence, and the
arbiter, a logistic regression, weighs whether it finds an answer there (its span and no-answer scores) and whether
that answer is the rule reader's, with the shape of the reply and the kind of question. It is fitted by `eventbot
train-reader --calibrate-only` on the same held-out articles and development sets as the answerability
(bot.reader.calibration); its threshold is the one that serves them best when a wrong answer costs twice what a right
one gains. (Measured there and left out: the span reader's own reading of the passages as further inputs, which did
not help, and its own answer where the rules' was rejected, which added more wrong answers than right ones.)"""

import logging
import math
from dataclasses import replace

from bot.answer.answerability import KINDS, LogisticModel, asked_kind
from bot.answer.extractive import ExtractiveAnswerer
from bot.answer.linking import fold
from bot.answer.reading import ReaderAnswerer, abstention
from bot.reader.model import SpanGuess
from bot.types import Draft, Passage, Sentence

log = logging.getLogger(__name__)

ARBITER_FILE = "arbiter.json"
ARBITER_FEATURES = [
    "rules_phrase", "rules_quotes", "log_rules_words", "check_read", "check_margin", "check_null_score",
    "check_agrees", *(f"kind_{k}" for k in KINDS),
]  # fmt: skip


def arbiter_features(question: str, rules: Draft, check: tuple[str, SpanGuess] | None) -> list[float]:
    """The arbiter's inputs (ARBITER_FEATURES order) for the rule reader's answer `rules` to `question`, given the
    span reader's `check` of its first quote: (the span it found there, its scores), or None when it found none."""
    reply, phrase = fold(rules.text), fold(rules.phrase)
    checked = fold(check[0]) if check else ""
    kind = asked_kind(question)
    return [
        float(bool(rules.phrase)),
        float(len(rules.quotes)),
        math.log1p(len(rules.text.split())),
        float(check is not None),
        check[1].margin if check else 0.0,
        check[1].null_score if check else 0.0,
        float(bool(checked) and (checked in reply or bool(phrase) and phrase in checked)),
        *(float(kind == k) for k in KINDS),
    ]


class CombinedAnswerer:
    """The rule reader's answer when the arbiter lets it stand; otherwise an abstention."""

    def __init__(self, rules: ExtractiveAnswerer, reader: ReaderAnswerer, arbiter: LogisticModel):
        self.rules, self.reader, self.arbiter = rules, reader, arbiter

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        return self.rules.sentences_in(passage)

    def consider(self, question: str, passages: list[Passage]) -> tuple[Draft, list[float] | None]:
        """The rule reader's draft, and the arbiter's inputs when it answered (else None)."""
        rules = self.rules(question, passages)
        if rules.abstained or not rules.quotes:
            return rules, None
        return rules, arbiter_features(question, rules, self.reader.check(question, rules.quotes[0].text))

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        rules, x = self.consider(question, passages)
        if x is None:
            return rules
        p = self.arbiter.score(x)
        if p >= self.arbiter.threshold:
            log.info("the rule reader's answer stands (p=%.2f)", p)
            return replace(rules, confidence=p)
        log.info("the rule reader's answer %r is rejected (p=%.2f < %.2f)", rules.text, p, self.arbiter.threshold)
        return abstention(len(self.rules.knowledge.sources), f"arbiter p={p:.2f}", confidence=p)
