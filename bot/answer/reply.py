"""Wording a reply from what the reader found, from the parse indexing stored (nothing is parsed here). One place
for every reply shape:

- a span, exactly as the document writes it ("Alysa Liu [1].", "25 [1]."): a sentence built around it from the
  question's words read badly when the span was not the question's complement ("Sakamoto behind Liu was 1.91") and
  named people the quote does not;
- a yes/no question: "Yes — …" or "No — …" (decided by the reader's yes/no head) then the sentence that decides it;
- a why/how question: the reason's span when it is a phrase, else its sentence;
- a quotation is never cut: a span inside one grows to the whole quotation, and the reply names who said it;
- a sentence reply never opens with a connective ("However, …", "But …");
- unsure (between the decision's floor and its threshold): "I'm not sure; the closest the article comes is: “…” [1]";
- a decline: "The article doesn't say." (or "The documents don't say." over several documents).

`reply_to` is the chain's reply step: which of these the reading and the decision call for.
"""

import logging
import re
from dataclasses import dataclass, replace
from functools import partial

from bot.answer.claims import backing_of, denied_terms, unaffirmed_fact
from bot.answer.corpus import Corpus
from bot.answer.terms import term
from bot.lang import vocabulary
from bot.types import Decision, Draft, Evidence, Question, Reading, Sentence
from index.text.pipeline import parse

log = logging.getLogger(__name__)

REPLIES = vocabulary().replies  # the replies' own words (bot/lang/en/replies.toml)

SENTENCE_KINDS = {"why", "how", "describe"}  # answered with the sentence the span sits in, unless the span is a phrase
QUOTE_PAIRS = {"“": "”", '"': '"'}
CONNECTIVE_POS = {"CCONJ", "ADV", "SCONJ"}
CONNECTIVE_DEPS = {"cc", "advmod", "mark", "discourse", "intj"}


@dataclass(frozen=True)
class Quotation:
    """Words in quotation marks: offsets of the text between the marks (in the document), and who said them."""

    start: int
    end: int
    speaker: str | None


def end_with_stop(text: str) -> str:
    """The text ending in a full stop unless it ends in a stop or a closing quote already."""
    return text if text[-1:] in ".!?”’\"'" else text + "."


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def without_connective(sentence: Sentence) -> str:
    """The sentence as the document writes it, less an opening connective and its comma: "However, technical errors
    …" → "Technical errors …". Read from the parse indexing stored (a coordinating conjunction, or an adverb or
    subordinator attached as a discourse marker, that opens the sentence)."""
    parsed = sentence.parsed
    if parsed is None or len(parsed.tokens) < 3:
        return sentence.text
    first, second = parsed.tokens[0], parsed.tokens[1]
    text, base = sentence.text, sentence.span.start
    if first.pos == "CCONJ" or (
        first.pos in CONNECTIVE_POS and first.dep in CONNECTIVE_DEPS and _is_comma(second, text, base)
    ):
        cut = second.end if _is_comma(second, text, base) else first.end
        rest = text[cut - base :].lstrip()
        return capitalized(rest) if rest else text
    return text


def _is_comma(token, text: str, base: int) -> bool:
    return text[token.start - base : token.end - base] == ","


def quotation_around(document: str, start: int, end: int, sentences: list[Sentence]) -> Quotation | None:
    """The quotation that holds (or overlaps) the span document[start:end], within its paragraph, and its speaker:
    the nearest person named outside the marks in the quotation's sentences or the sentence before (by the stored
    entities). None when the span is not inside quotation marks."""
    para_start = document.rfind("\n\n", 0, start) + 1
    para_end = document.find("\n\n", end)
    para_end = len(document) if para_end < 0 else para_end
    for opening, closing in QUOTE_PAIRS.items():
        marks = [
            m.start()
            for m in re.finditer(
                re.escape(opening) if opening == closing else f"[{opening}{closing}]", document[para_start:para_end]
            )
        ]
        pairs = _pairs(document, [para_start + m for m in marks], opening, closing)
        for q_start, q_end in pairs:
            if q_start < end and start < q_end:
                return Quotation(q_start + 1, q_end, _speaker(q_start, q_end + 1, sentences))
    return None


def _pairs(document: str, marks: list[int], opening: str, closing: str) -> list[tuple[int, int]]:
    """Opening and closing marks matched in order (the offsets of the marks themselves)."""
    pairs, open_at = [], None
    for at in marks:
        mark = document[at]
        if open_at is None and (mark == opening):
            open_at = at
        elif open_at is not None and mark == closing:
            pairs.append((open_at, at))
            open_at = None
    return pairs


def _speaker(start: int, end: int, sentences: list[Sentence]) -> str | None:
    """The person named outside the marks nearest to them, in the quotation's sentences (first) or the sentence
    before it."""
    inside = [s for s in sentences if s.span.start < end and start < s.span.end]
    if not inside:
        return None
    before = [s for s in sentences if s.index == inside[0].index - 1]
    for group in (inside, before):
        people = [
            (e, s)
            for s in group
            if s.parsed is not None
            for e in s.parsed.entities
            if e.label == "PERSON" and not (start <= e.start < end)
        ]
        if people:
            e, s = min(people, key=lambda es: min(abs(es[0].start - end), abs(es[0].end - start)))
            return s.text[e.start - s.span.start : e.end - s.span.start]
    return None


def quotation_reply(quoted: str, speaker: str | None) -> str:
    """ "Glenn said: “…”" (the whole quotation, in the document's marks)."""
    quotation = f"“{quoted.strip()}”"
    return REPLIES["said"].format(speaker=speaker, quotation=quotation) if speaker else quotation


def yes_no_reply(yes: bool, sentence: Sentence) -> str:
    return REPLIES["yes" if yes else "no"].format(sentence=without_connective(sentence))


def reply_to(question: Question, reading: Reading | None, decision: Decision | None, corpus: Corpus) -> Draft:
    """The reply step: the answer worded (compose), an unsure reply quoting the closest sentence, or a decline."""
    if reading is None or decision is None:
        return decline(corpus.documents, "nothing to read")
    if not decision.answer and decision.unsure:
        log.info("unsure: %r in %r has p=%.2f < %.2f", reading.span, reading.sentence.text, decision.confidence,
                 decision.threshold)  # fmt: skip
        return unsure(corpus.documents, reading, decision)
    if not decision.answer:
        log.info("abstain: %r in %r has p=%.2f < %.2f", reading.span, reading.sentence.text, decision.confidence,
                 decision.threshold)  # fmt: skip
        return decline(corpus.documents, f"p={decision.confidence:.2f}", decision.confidence, reading.evidence)
    if question.kind == "yes-no" and decision.yes and (why := unfounded_yes(question, reading.sentence)):
        log.info("unsure: a yes to %r, but %r %s", question.text, reading.sentence.text, why)
        return unsure(corpus.documents, reading, decision)
    log.info("answer %r (p=%.2f, yes %.2f) from %r", reading.span, decision.confidence, reading.yes,
             reading.sentence.text)  # fmt: skip
    return compose(question, reading, corpus, decision)


def unfounded_yes(question: Question, sentence: Sentence) -> str | None:
    """Why a "Yes" to `question` is not grounded in the sentence it would quote, or None: the sentence denies one of
    the question's words, its names aside ("was she nervous?" on "I wasn't that nervous."), or lacks one of its numbers
    or dates ("is the boat 9 metres long?" on "… 7.8 metres long …"). Such a reply is unsure and quotes the sentence."""
    names = {term(w) for name in question.names for w in name.split()}
    if denied := denied_terms(parse(sentence.text)[:]) & (question.terms - names):
        return f"denies {sorted(denied)}"
    if missing := unaffirmed_fact(question.text, backing_of(sentence.text)):
        return f"lacks the question's {missing[0]} {missing[1]!r}"
    return None


def compose(question: Question, reading: Reading, corpus: Corpus, decision: Decision) -> Draft:
    """The reply's shape by what is asked, citing the span's sentence (or the sentences of the quotation)."""
    kind = question.kind
    draft = partial(
        Draft,
        abstained=False,
        quotes=[reading.sentence],
        phrase=reading.span,
        confidence=decision.confidence,
        evidence=reading.evidence,
    )
    if kind == "yes-no":
        return draft(f"{end_with_stop(yes_no_reply(decision.yes, reading.sentence))} [1]")
    path = reading.sentence.path
    quotation = quotation_around(corpus.texts[path], reading.start, reading.end, corpus.sentences[path])
    if quotation is not None and _cuts(reading, quotation):
        sentences = [s for s in corpus.sentences[path] if s.span.start < quotation.end and quotation.start < s.span.end]
        quoted = corpus.texts[path][quotation.start : quotation.end]
        quotes = [_with_chunk(s, reading.sentence.chunk_id) for s in sentences] or [reading.sentence]
        if quotation.speaker and not any(quotation.speaker in q.text for q in quotes):  # named the sentence before
            before = [s for s in corpus.sentences[path] if s.index == quotes[0].index - 1]
            quotes = [_with_chunk(s, reading.sentence.chunk_id) for s in before] + quotes
        markers = ", ".join(str(n) for n in range(1, len(quotes) + 1))
        return replace(draft(f"{end_with_stop(quotation_reply(quoted, quotation.speaker))} [{markers}]"), quotes=quotes)
    if (kind in SENTENCE_KINDS and (kind == "describe" or len(reading.span.split()) < 2)) or not reading.span:
        return draft(f"{end_with_stop(without_connective(reading.sentence))} [1]")
    return draft(f"{capitalized(reading.span)} [1].", short_answer=reading.span)


DECLINES = (REPLIES["decline_one"], REPLIES["decline_many"])
UNSURE = (REPLIES["unsure_one"], REPLIES["unsure_many"])


def decline(documents: int, reason: str, confidence: float | None = None, evidence: Evidence | None = None) -> Draft:
    """ "The article doesn't say." (or "The documents don't say." when `documents` > 1), with why, for the log."""
    return Draft(DECLINES[documents > 1], True, [], reason=reason, confidence=confidence, evidence=evidence)


def unsure(documents: int, reading: Reading, decision: Decision) -> Draft:
    """ "I'm not sure; the closest the article comes is: “…” [1]": not an answer (abstained), but the sentence
    nearest to one, quoted, so that the user can judge it."""
    text = f"{UNSURE[documents > 1]}“{reading.sentence.text.strip()}” [1]"
    return Draft(
        text,
        True,
        [reading.sentence],
        reason=f"unsure: p={decision.confidence:.2f}",
        confidence=decision.confidence,
        evidence=reading.evidence,
    )


def is_decline(reply: str) -> bool:
    """Whether a reply (as a conversation's history holds it) is one of the declines or unsure replies above: it
    answered nothing a follow-up could build on."""
    return reply.strip() in DECLINES or reply.lstrip().startswith(UNSURE)


def _cuts(reading: Reading, quotation: Quotation) -> bool:
    """Whether replying with the span alone would cut the quotation it sits in: the span is a long part of it (a
    clause, not a name or number quoted in passing), or runs across one of its marks."""
    crosses = reading.start < quotation.start or reading.end > quotation.end
    return crosses or len(reading.span.split()) >= 4


def _with_chunk(sentence: Sentence, chunk_id: str) -> Sentence:
    return replace(sentence, chunk_id=sentence.chunk_id or chunk_id)
