"""The default answer step, no LLM, as its stages: read (bot.answer.read: the trained span reader over the sentences
where the evidence is) → decide (bot.answer.decide: the learnt decision to answer or decline) → reply
(bot.answer.reply: words the reply, an unsure reply quoting the closest sentence, or the decline). The question arrives understood: linked to the documents'
spelling and standing alone (bot.answer.linking, bot.conversation); what it asks is read once (bot.answer.understand).
Every answer cites a verbatim sentence."""

import logging

from bot.answer.corpus import Corpus
from bot.answer.decide import Answerability
from bot.answer.read import SentenceReader
from bot.answer.reply import compose, decline, unsure
from bot.answer.understand import Question
from bot.types import Draft, Passage

log = logging.getLogger(__name__)


class ReaderAnswerer:
    """An `Answerer` (bot.types): reads the corpus the expand step made of the chunks around the passages (their
    neighbourhood, never whole documents)."""

    def __init__(self, read: SentenceReader, answerability: Answerability):
        self.read, self.answerability = read, answerability

    def __call__(self, question: Question, passages: list[Passage], corpus: Corpus, previous: str = "") -> Draft:
        """`previous`: the conversation's last turn (question and answer), read before the question."""
        reading = self.read(question, passages, corpus, previous)
        if reading is None:
            return decline(corpus.documents, "nothing to read")
        decision = self.answerability.decide(reading.evidence, reading.yes, question)
        if not decision.answer and decision.unsure:
            log.info("unsure: %r in %r has p=%.2f < %.2f", reading.span, reading.sentence.text, decision.confidence,
                     decision.threshold)  # fmt: skip
            return unsure(corpus.documents, reading, decision)
        if not decision.answer:
            log.info("abstain: %r in %r has p=%.2f < %.2f", reading.span, reading.sentence.text, decision.confidence,
                     decision.threshold)  # fmt: skip
            return decline(corpus.documents, f"p={decision.confidence:.2f}", decision.confidence, reading.evidence)
        log.info("answer %r (p=%.2f, yes %.2f) from %r", reading.span, decision.confidence, reading.yes,
                 reading.sentence.text)  # fmt: skip
        return compose(question, reading, corpus, decision)
