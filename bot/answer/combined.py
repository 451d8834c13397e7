"""The combined reader (EVENTBOT_READER=combined): the rule reader answers, the trained span reader checks the
answer, and a learnt arbiter decides whether it stands; when it does not, the bot says the documents don't say.

The two readers fail differently: the rules are sharp on news of events, but on documents unlike those they were
written for they answer about half of what the text does not say; the span reader's answers are rarely wrong but it
declines most questions. The arbiter is a logistic regression over whether the two agree (the span reader's best span
inside the rule reader's reply, the same sentence, the span reader's scores on the rule reader's own sentence) and the
span reader's evidence (bot.answer.answerability). It is fitted by `eventbot train-reader --calibrate-only` on the
same held-out articles and development sets as the answerability (bot.reader.calibration), and its threshold is the
one that serves them best when a wrong answer costs twice what a right one gains. (Giving the span reader's own
answer where the rules' was rejected was measured there too: it added more wrong answers than right ones.)"""

import logging
import math
from dataclasses import replace

from bot.answer.answerability import FEATURES, LogisticModel, features
from bot.answer.extractive import ExtractiveAnswerer
from bot.answer.linking import fold
from bot.answer.reading import ReaderAnswerer
from bot.types import Draft, Passage, Sentence

log = logging.getLogger(__name__)

ARBITER_FILE = "arbiter.json"
ARBITER_FEATURES = [
    "span_in_rules_reply", "same_sentence", "rules_phrase", "rules_quotes", "log_rules_words",
    "check_read", "check_margin", "check_null_score", "check_agrees",
    *(f"reader_{name}" for name in FEATURES),
]  # fmt: skip


def arbiter_features(rules: Draft, reading: Draft, check: tuple[str, object] | None) -> list[float]:
    """The arbiter's inputs (ARBITER_FEATURES order) for the rule reader's answer `rules`, the span reader's
    `reading` of the same passages (answered or not), and its `check` of the rule reader's first quote."""
    reply = fold(rules.text)
    evidence = reading.evidence
    span = fold(evidence.span) if evidence is not None else ""
    checked = fold(check[0]) if check else ""
    phrase = fold(rules.phrase)
    return [
        float(bool(span) and span in reply),
        float(evidence is not None and bool(rules.quotes) and evidence.sentence == rules.quotes[0].text),
        float(bool(rules.phrase)),
        float(len(rules.quotes)),
        math.log1p(len(rules.text.split())),
        float(check is not None),
        check[1].margin if check else 0.0,
        check[1].null_score if check else 0.0,
        float(bool(checked) and (checked in reply or bool(phrase) and phrase in checked)),
        *(features(evidence) if evidence is not None else [0.0] * len(FEATURES)),
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
        reading = self.reader(question, passages)
        check = self.reader.check(question, passages, rules.quotes[0])
        return rules, arbiter_features(rules, reading, check)

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        rules, x = self.consider(question, passages)
        if x is None:
            return rules
        p = self.arbiter.score(x)
        if p >= self.arbiter.threshold:
            log.info("the rule reader's answer stands (p=%.2f)", p)
            return replace(rules, confidence=p)
        log.info("the rule reader's answer %r is rejected (p=%.2f < %.2f)", rules.text, p, self.arbiter.threshold)
        subject = "article doesn't" if len(self.rules.knowledge.sources) <= 1 else "documents don't"
        return Draft(f"The {subject} say.", True, [], reason=f"arbiter p={p:.2f}", confidence=p)
