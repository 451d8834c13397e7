"""The default answerer: no LLM. Picks the sentence(s) that answer, a precise phrase when the question asks
for one, or abstains when the passages do not support an answer. Every claim cites a verbatim sentence."""

import logging
import re
from collections.abc import Callable
from dataclasses import replace

from langchain_core.documents import Document

from bot.answer.candidates import CANDIDATE_FINDERS, NUMBER, PHRASE_TYPES, country_of, person_names
from bot.answer.clauses import Mention, clauses, owner
from bot.answer.corpus import Corpus, Knowledge
from bot.answer.kinds import describe, described_person, yes_no
from bot.answer.language import (
    MEDALS,
    NUMBER_WORDS,
    ORDINALS,
    ORG_WORDS,
    STOPWORDS,
    content_words,
    lemma,
    term,
    terms_of,
    words,
)
from bot.answer.linking import PERSON_NOUNS, fold
from bot.answer.paraphrase import rewordings, speaks_otherwise
from bot.answer.parse_checks import (
    asked_role,
    nominal,
    ordinal_of_a_thing,
    role,
    role_agrees,
    type_agrees,
    won_less,
)
from bot.answer.question import EARLIER_WORDS, GENDERS, ORDER_WORDS, UNITS, AnswerType, Question, analyse
from bot.types import Draft, Passage, Sentence, Span
from bot.vectors import CachedEmbeddings
from index.text import parse

log = logging.getLogger(__name__)

# Weights of a sentence's score: meaning (cosine) and the share of the question's terms it contains.
DENSE_WEIGHT, COVERAGE_WEIGHT, TYPE_BONUS = 0.5, 0.5, 0.1
MIN_COVERAGE = 0.5  # below this share of key terms the sentence must be very close in meaning...
MIN_COVERAGE_TYPED = 0.34  # ...lower when a phrase of the asked-for type is there and the names match
MIN_COVERAGE_QUOTE = 0.15  # ...and for a quotation by the person asked about (what it is about is paraphrased)
MIN_DENSE_ALONE = 0.62  # ...at least this cosine; measured on the eval sets, see README "Answer quality"
# Sentences one question may read when its passages do not answer it: theirs and their neighbours'. A constant,
# so no question costs the whole of a long document (a news article has 30 to 45 sentences).
READ_BUDGET = 50
SECOND_SENTENCE_RATIO = 0.9
NEXT_SENTENCE_RATIO = 0.8
CAUSE_BONUS = 0.15
WHY = re.compile(r"^\s*(?:why|how come|what (?:went wrong|caused|made))\b", re.IGNORECASE)
MIN_DENSE_CAUSE = 0.5  # cosine of a why-question and a sentence giving a cause, when no word test passed  # a why-question prefers a sentence that gives a cause
CAUSAL = re.compile(
    r"\b(?:because|caused?|causing|due to|led to|leading to|since|so that|as a result|after|mistakes?|errors?"
    r"|reason|realized|realised|thanks to|owing to|therefore|for)\b",
    re.IGNORECASE,
)  # the sentence right after the best one, for what-happened questions
SYNONYM_MIN, SYNONYM_CREDIT = 0.5, 0.6  # word-vector cosine that counts as a near-synonym, and its weight
EVENT_NAME_TERMS = {term(w) for w in ORG_WORDS}
ADDRESSED = re.compile(
    r"\b(?:said|says|saying|told|tells|shouted|yelled)\s+(?:to\s+)?(?:him|her|them|the\s+\w+|[A-Z]\w+)\b"
)
SELF_EVIDENT_TYPES = {AnswerType.PLACING, AnswerType.MEDAL, AnswerType.AGE, AnswerType.NAME, AnswerType.NATIONALITY}
PRONOUN = re.compile(r"\b(?:he|she|him|her|his|hers)\b", re.IGNORECASE)
OWNER_GAP_CHARS = 8  # "Kiprop, 27," / "31-year-old Haldane": a value this close belongs to that name
RESULT_VERBS = {term(w) for w in ("finish", "come", "end", "place", "take", "win", "claim", "earn", "secure", "cross")}
EXACT_CLOSED = {term(w) for w in ORDINALS | MEDALS} | {term(w) for w in NUMBER_WORDS}
# "47 seconds ahead of", "1.91 points behind": a gap between two values, not a value itself
DIFFERENCE = re.compile(r"\s+(?:ahead|behind|clear|faster|slower|later|earlier|more|fewer|less|short)\b", re.I)
UNREALIZED_PENALTY = 0.15
# Questions a value answers (a number, a date, an age); a sentence without one does not answer them.
VALUE_TYPES = {AnswerType.NUMBER, AnswerType.AGE, AnswerType.TIME}
# A question about what is to come, and a sentence that tells of it (not of what happened).
FUTURE = re.compile(r"\b(?:will|going to|next (?:year|season|time|edition|one|games|olympics))\b", re.IGNORECASE)
FUTURE_TOLD = re.compile(r"\b(?:will|'ll|going to|plans?|planned|next|upcoming|future|would|retire)\b", re.IGNORECASE)
TIME_ASKED = re.compile(r"\b(?:years?|days?|weeks?|months?|long|ago|old|age|time|when|date|decades?)\b", re.I)
SPEAKER_BONUS = 0.15  # a quote question prefers the asked person's own words
# "in a good position to win", "was expected to finish": the event after "to" may not have happened.
UNREALIZED = re.compile(
    r"\b(?:here|there|position|hop\w*|expect\w*|favou?rite\w*|chance|bid|aim\w*|tr(?:y|ied|ying)|want\w*|poised|likely"
    r"|attempt\w*|fail\w*|set|going|hopes)\s+to\s+(?:\w+\s+){0,3}\w+|(?:\w+\s+){0,2}favou?rites?\b",
    re.IGNORECASE,
)


class ExtractiveAnswerer:
    """Sentence selection by meaning + key-term coverage, typed phrase extraction, principled abstention.

    What it knows of all the documents comes from `knowledge` (learnt at indexing); for each question it reads only
    the stored chunks `around(passages)` returns: the passages and their neighbourhood, never whole documents."""

    def __init__(
        self, vectors: CachedEmbeddings, knowledge: Knowledge, around: Callable[[list[Passage]], list[Document]]
    ):
        self.vectors = vectors  # shared with retrieval: the question it embedded is found here, not embedded again
        self.knowledge, self.around = knowledge, around

    def corpus_for(self, passages: list[Passage]) -> Corpus:
        return Corpus(self.around(passages) if passages else [], self.knowledge)

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        """The sentences of a passage (for the guard, which checks an LLM's claims against them)."""
        return self.corpus_for([passage]).sentences_in(passage)

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        return Reader(self.vectors, self.corpus_for(passages))(question, passages)


class Reader:
    """One question's reading of the chunks around its passages (see ExtractiveAnswerer)."""

    def __init__(self, vectors: CachedEmbeddings, corpus: Corpus):
        self.vectors, self.corpus = vectors, corpus

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        question = self.corpus.named_by_nationality(question)
        named = described_person(question, lambda q: self._read(q, passages), self.corpus.lexicon.people_in)
        question = named or question
        kind_answer = describe(question, self.corpus, lambda: self.corpus.read(passages, READ_BUDGET)) or yes_no(
            question, lambda q: self._read(q, passages), self._names_in
        )
        draft = kind_answer or self._read(question, passages)
        if draft.abstained and not draft.reason and WHY.match(question):
            return self._cause(question, passages) or draft
        return draft

    def _cause(self, question: str, passages: list[Passage]) -> Draft | None:
        """A why-question the reader could not match word for word ("why did Sakamoto lose the gold?"): the
        sentence closest in meaning that gives a cause and is about the person asked about (named in it or just
        before it), when it is close enough."""
        asked = self._names_in(question)
        sentences = [
            s
            for s in self.corpus.read(passages, READ_BUDGET)
            if CAUSAL.search(s.text) and (not asked or asked & self._names_in(self.corpus.window(s)))
        ]
        if not sentences:
            return None
        qvec = self.vectors.vector(question)
        vectors = self.vectors.vectors([s.text for s in sentences])
        dense, best = max(((float(v @ qvec), s) for s, v in zip(sentences, vectors, strict=True)), key=lambda p: p[0])
        if dense < MIN_DENSE_CAUSE:
            log.info("abstain: no sentence giving a cause is close enough (%.2f)", dense)
            return None
        log.info("cause (dense=%.2f): %s", dense, best.text)
        return Draft(f"{_end(best.text)} [1]", False, [best])

    def _reply(self, q: Question, phrase: str, quoted: Sentence) -> str:
        """The phrase as a reply to the question: "Sakamoto is 25", "Sakamoto won the silver medal" when the
        question asks about one person, named as the cited sentence names them (every name of an answer is in
        its quote); otherwise the phrase itself ("Alysa Liu")."""
        lexicon = self.corpus.lexicon
        asked = lexicon.people_in(q.text)
        if len(asked) != 1:
            return _capitalize(phrase)
        words = set(lexicon.full_name(asked[0].text).split())
        named = [p.text for p in lexicon.people_in(quoted.text) if words & set(p.text.split())]
        if not named:
            return _capitalize(phrase)
        person = max(named, key=len)
        age = re.fullmatch(r"(\d+)(?:-year-old)?", phrase)
        if q.answer_type is AnswerType.AGE and age:
            return f"{person} is {age.group(1)}"
        medal = re.fullmatch(r"(?:the\s+)?(gold|silver|bronze)(?:\s+medal)?", phrase, re.IGNORECASE)
        if q.answer_type is AnswerType.MEDAL and medal and re.search(r"\b(?:win|won|get|got|take|took)\b", q.text):
            return f"{person} won the {medal.group(1).lower()} medal"
        return _capitalize(phrase)

    def _subject_there(self, q: Question, s: Sentence) -> bool:
        """The thing the question measures is in the sentence: "How long did the rain delay last?" is not
        answered by "The match lasted two hours and 41 minutes" (no delay there)."""
        said = terms_of(s.text)
        return all(t in said for t in q.subject_nouns)

    def _names_in(self, text: str) -> set[str]:
        return {fold(w) for p in self.corpus.lexicon.people_in(text) for w in p.text.split()}

    def _read(self, question: str, passages: list[Passage]) -> Draft:
        known = lambda t: t in self.corpus.df  # noqa: E731
        # "runner-up" where the article says "silver": ask in its words too, first when the question's are foreign
        asked = analyse(question, self.corpus.proper_nouns)
        tries = [(r, asked) for r in rewordings(question, known)]
        foreign = speaks_otherwise(question, known) and asked.answer_type is not AnswerType.QUOTE  # quotes paraphrase
        # (foreign words would only be matched by loose near-synonyms: "runner-up" ~ "second in the race two years ago")
        tries = tries if foreign and tries else [(question, None), *tries]  # no rewording: the question as asked
        first = None
        for text, kind in tries:
            draft = self._answer(text, passages, kind)
            if not draft.abstained or draft.reason:  # answered, or refused outright (an injection)
                if text != question:
                    log.info("answered when asked as %r", text)
                return draft
            first = first or draft
        return first

    def _answer(self, question: str, passages: list[Passage], asked: Question | None = None) -> Draft:
        q = analyse(question, self.corpus.proper_nouns)
        q.names = [self.corpus.full_name(name) for name in q.names]
        parsed = parse(question)
        q.asked_role = asked_role(parsed)
        # the subject of what the question asks about ("the rain delay" lasted), not of "to be" ("what was the
        # winning time") nor the thing counted ("how many people")
        q.subject_nouns = [
            term(t.text)
            for t in parsed
            if (t.dep_ in {"nsubj", "nsubjpass"} or (t.dep_ == "ROOT" and t.pos_ == "NOUN"))  # a misparsed verb
            and t.pos_ == "NOUN"
            and t.head.lemma_ != "be"
            and t.lemma_.lower() not in PERSON_NOUNS  # "the runner in fourth": who gets it, not what is measured
            and (t.dep_ == "ROOT" or not any(c.lower_ in {"many", "much", "what", "which", "how"} for c in t.subtree))
        ]
        if asked:  # reworded: still the kind of answer first asked for
            q.answer_type = asked.answer_type
            if asked.answer_type not in PHRASE_TYPES:  # a reason need not name the medal its rewording brought in
                q.closed = asked.closed
        if q.injection:
            return self._abstain("it only answers questions about the documents, and follows no instructions")
        if not q.terms or not passages:
            return self._abstain()
        if q.someone_else and q.answer_type is not AnswerType.PERSON:
            # "How old is the guy who finished second?": who that is must be worked out first, which this
            # answerer does not do; ask "Who finished second?" first
            log.info("abstain: the question is about someone described, not named")
            return self._abstain()
        missing = self._names_missing_everywhere(q, passages)
        if missing:
            return self._abstain(f"it never mentions {missing}")

        supported = [s for s in self._score(question, q, self._sentences(passages)) if self._supports(q, s)]
        if not supported:  # the passages missed it: read around them, within the budget
            around = self.corpus.read(passages, READ_BUDGET)
            supported = [s for s in self._score(question, q, around) if self._supports(q, s)]
        if not supported:
            log.info("abstain: no sentence passes the checks for a %s question", q.answer_type.value)
            return self._abstain()
        best = supported[0]
        log.info(
            "best (%s) dense=%.2f coverage=%.2f candidates=%s: %s",
            q.answer_type.value,
            best.dense,
            best.coverage,
            [c.text for c in best.candidates],
            best.text,
        )
        # (quote questions paraphrase what was said: "the end of her career" for "how my story ends")
        typed = q.answer_type in PHRASE_TYPES and bool(best.candidates)
        # "How many points separated Sakamoto from Liu in the standings?", "Did Glenn finish on the podium?": a value
        # of the asked type, said of the person asked about, answers even when the question uses a foreign word
        measured = typed and q.names and (q.unit or q.answer_type in SELF_EVIDENT_TYPES)
        if (
            q.answer_type is not AnswerType.QUOTE
            and not measured
            and best.dense < MIN_DENSE_ALONE
            and self._unknown_terms(q, best)
        ):
            log.info("abstain: the documents never use %s", self._unknown_terms(q, best))
            return self._abstain()
        needed = MIN_COVERAGE_TYPED if typed else MIN_COVERAGE
        # "how hot…" answered by "27 degrees", "nickname" by "‘Blade Angels’": the form shows it is the answer
        if typed and (q.unit or q.answer_type is AnswerType.NAME):
            needed = 0.0
        if q.answer_type is AnswerType.QUOTE and self._said_by_asked(q, best):
            needed = MIN_COVERAGE_QUOTE  # the asked person's own words, the closest to the topic of those they said
        if best.coverage < needed and best.dense < MIN_DENSE_ALONE:
            log.info("abstain: too little of the question is in the best sentence")
            return self._abstain()

        if q.count > 1 and q.answer_type is AnswerType.PERSON:
            return self._several(q, supported, needed)
        phrase = self._phrase(q, best)
        if phrase:
            return Draft(f"{self._reply(q, phrase, best)} [1].", False, [best], phrase=phrase)
        if q.answer_type in VALUE_TYPES and not best.candidates:
            # "What was her free skate score?": a sentence about her free skate without a score is no answer
            log.info("abstain: the best sentence holds no %s", q.answer_type.value)
            return self._abstain()
        quotes = [best] + self._second_sentence(q, best, supported[1:])
        text = " ".join(f"{_end(s.text)} [{i}]" for i, s in enumerate(quotes, 1))
        return Draft(text, False, quotes)

    # -- scoring ---------------------------------------------------------------------------------------------

    def _sentences(self, passages: list[Passage]) -> list[Sentence]:
        seen: set[tuple[str, int]] = set()
        sentences = []
        for p in passages:
            for s in self.corpus.sentences_in(p):
                if (s.path, s.index) not in seen:  # overlapping chunks repeat sentences
                    seen.add((s.path, s.index))
                    sentences.append(s)
        return sentences

    def _score(self, question: str, q: Question, sentences: list[Sentence]) -> list[Sentence]:
        if not sentences:
            return []
        # a quote question is matched on what the quote is about, not on "X said"
        qvec = self.vectors.vector(q.topic if q.answer_type is AnswerType.QUOTE else question)
        # near-synonyms are looked for among the sentences' words: embed those not cached in one batch, not
        # sentence by sentence (a model call costs far more than one more short text in a batch)
        asked = [q.surface.get(t, t) for t in q.terms]
        self.vectors.vectors(sorted({*asked, *(w for s in sentences for w in synonym_candidates(s.text))}))
        for s, vec in zip(sentences, self.vectors.vectors([s.text for s in sentences]), strict=True):
            s.dense = float(vec @ qvec)
            s.candidates = self._candidates(q, s)
            s.coverage = self._coverage(q, s)
            anchored = bool(_anchored(q, s.text, s.candidates, self.corpus.mentions(s.text)))
            s.score = DENSE_WEIGHT * s.dense + COVERAGE_WEIGHT * s.coverage + (TYPE_BONUS if anchored else 0.0)
            if _unrealized(q, s.text):
                s.score -= UNREALIZED_PENALTY
            if q.answer_type is AnswerType.REASON and CAUSAL.search(s.text):
                s.score += CAUSE_BONUS
            if q.answer_type is AnswerType.QUOTE and q.names and self.corpus.speaker(s):
                s.score += SPEAKER_BONUS if self._said_by_asked(q, s) else -SPEAKER_BONUS
        return sorted(sentences, key=lambda s: s.score, reverse=True)

    def _coverage(self, q: Question, s: Sentence) -> float:
        """IDF-weighted share of the question's terms the sentence holds. A name counts once: fully when any of
        its words is in the sentence or the one before ("she", "he"), half when named a few sentences back. A
        word only in the sentence before gets half credit; a word the text lacks gets partial credit for a
        near-synonym in the sentence ("prize" ~ "medal")."""
        own_words = [w for w, _ in words(s.text)]
        own = {term(w) for w in own_words}
        window = terms_of(self.corpus.window(s)) | self.corpus.speaker(s)
        context = terms_of(self.corpus.context(s))
        name_terms = {t for name in q.names for t in name}
        total = hit = 0.0
        # a word the documents never use weighs like an average word of the question, not like the rarest
        known = [self.corpus.idf(t) for t in q.terms if self.corpus.df.get(t)]
        known_weight = sum(known) / len(known) if known else 1.0
        for name in q.names:
            weight = max(self.corpus.idf(t) for t in name)
            total += weight
            if set(name) & window:
                hit += weight
            elif set(name) & context:  # named a few sentences back: likely, not certainly, the one meant
                hit += 0.5 * weight
        for t in q.terms:
            if t in name_terms or (t == q.type_word and s.candidates):
                continue  # names are counted above; a typed candidate answers "which country"
            weight = self.corpus.idf(t) if self.corpus.df.get(t) or t in q.nouns else known_weight
            total += weight
            if t in own:
                hit += weight
            elif t in window:
                hit += 0.5 * weight
            elif t not in q.closed:
                hit += weight * self._synonym_credit(q.surface.get(t, t), own_words)
        return hit / total if total else 0.0

    def _unknown_terms(self, q: Question, s: Sentence) -> list[str]:
        """Words of the question the documents never use and the sentence has no near-synonym for: what the
        question is about ("the president of Kenya", "his coach") is likely not in the documents."""
        name_terms = {t for name in q.names for t in name}
        sentence_words = [w for w, _ in words(s.text)]
        return [
            t
            for t in q.nouns
            if t not in name_terms
            and not (t == q.type_word and s.candidates)
            and self.corpus.df.get(t, 0) == 0
            and not self._synonym_credit(q.surface.get(t, t), sentence_words)
        ]

    def _synonym_credit(self, word: str, sentence_words: list[str]) -> float:
        content = content_words(sentence_words)
        if not content:
            return 0.0
        vectors = self.vectors.vectors([word, *content])
        best = max(float(vectors[0] @ v) for v in vectors[1:])
        return SYNONYM_CREDIT * best if best >= SYNONYM_MIN else 0.0

    def _supports(self, q: Question, s: Sentence) -> bool:
        """Hard checks: the names the question is about were named near the sentence, every closed-class term
        it names (a medal, a placing, a weekday, a number) is in the sentence's window, and an answer of the
        expected type is there."""
        # who is being talked about: the names of the last few sentences, the speaker of a quotation, and the
        # event itself ("the Olympics", "the marathon"), which a whole document is about
        if q.answer_type is AnswerType.NUMBER and q.unit and not self._subject_there(q, s):
            return False  # a measure of something else
        if FUTURE.search(q.text) and not FUTURE_TOLD.search(s.text):
            return False  # "Where will next year's championship be held?" is not answered by where this one was
        speaker = self.corpus.speaker(s) | self.corpus.referent(s)  # who says it, or whom "The 26-year-old" means
        context_terms = terms_of(self.corpus.context(s)) | speaker
        people = [name for name in q.names if not set(name) <= EVENT_NAME_TERMS]
        named = [bool(set(name) & context_terms) for name in people]
        # a quote question needs its speaker nearby; what the quote is about may be a "him" or "her"
        if people and not (any(named) if q.answer_type is AnswerType.QUOTE else all(named)):
            return False
        if q.names and q.answer_type is not AnswerType.PERSON and self._about_someone_else(q, s):
            return False
        if q.answer_type in PHRASE_TYPES - {AnswerType.PERSON}:
            # a value (an age, a time, a sum) belongs to someone named in the sentence or the one before
            window_terms = terms_of(self.corpus.window(s)) | speaker
            if any(not set(name) & window_terms for name in people):
                return False
        # what a sentence only hoped for ("in a position to win gold") does not count, except for why-questions,
        # which ask about exactly that contrast ("Why did she win silver instead of gold?")
        window_text = self.corpus.window(s)
        window = terms_of(window_text) if q.answer_type is AnswerType.REASON else (_realized_terms(q, window_text))
        own = _realized_terms(q, _without_durations(s.text))
        nationality = self._asked_nationality(q)
        # a placing, medal or number must be in the sentence itself; a country or day may be in the one before
        if any(
            c not in (own if c in EXACT_CLOSED or c[:1].isdigit() else window) for c in q.closed if c != nationality
        ):
            return False
        if q.answer_type is not AnswerType.QUOTE and not _orders_match(q, s.text):
            return False
        for g in q.genders:  # "the men's race" is not answered by a sentence about "the women's race"
            others = GENDERS - {g}
            # (a report of the men's race may never say "men's"; it is the women's when it was just talking of them)
            if (g not in context_terms and others & context_terms) or (others & window and g not in window):
                return False
        if q.answer_type is AnswerType.PERSON:
            if q.roles and not self._holds_roles(q, s, window):
                return False
            if q.relation in RESULT_VERBS and set(q.closed) & EXACT_CLOSED:
                if not _result_stated(q, s.text):  # "Who finished third?" needs a third place that was a result
                    return False
            elif q.relation and s.dense < MIN_DENSE_ALONE and not self._does(q, s.text):
                return False  # "Who was recording them?" needs a sentence where someone records (or means it)
            # "Who is Amber Glenn?" asks for a description, not another name.
            return bool(s.candidates) or q.describe
        if q.answer_type in PHRASE_TYPES:
            return bool(s.candidates)
        if q.type_word and not self._holds_roles(q, s, window, [q.type_word]):
            return False  # "Which jumps did she miss?" needs a sentence that speaks of jumps
        if q.type_word and q.text.lower().startswith("which") and not _specific(q.type_word, s.text):
            return False  # …and says which: "a pair of jumps" does not
        if q.answer_type is AnswerType.REASON and not CAUSAL.search(s.text):
            return False  # a reason is given with "because", "caused", "after", "realized"…
        if q.answer_type is AnswerType.QUOTE:
            if q.addressee and not ADDRESSED.search(self.corpus.window(s)):
                return False  # "What did she say to him?" needs words said to someone, not a quote in general
            return self.corpus.in_quotation(s)
        return True

    def _holds_roles(self, q: Question, s: Sentence, window: set[str], roles: list[str] | None = None) -> bool:
        """ "Who is Gebre's coach?" needs a sentence that speaks of a coach (or a near-synonym)."""
        sentence_words = [w for w, _ in words(s.text)]
        return all(r in window or self._synonym_credit(q.surface.get(r, r), sentence_words) for r in (roles or q.roles))

    def _about_someone_else(self, q: Question, s: Sentence) -> bool:
        """The sentence names people, none of them the one asked about: "How old is Glenn?" is not answered
        by "25-year-old Sakamoto…"."""
        people = [
            terms_of(p.text)
            for p in person_names(s.text, self.corpus.lexicon)
            if not re.match(r"['’]s\b", s.text[p.end :])  # "pulled Haldane's arm" is not about Haldane
        ]
        asked = [set(name) for name in q.names]
        if PRONOUN.search(s.text) and any(a & terms_of(self.corpus.window(s)) for a in asked):
            return False  # "…caused him to finish 1.91 points behind Liu": "him" is who was just named
        return bool(people) and not any(p & a for p in people for a in asked)

    def _names_missing_everywhere(self, q: Question, passages: list[Passage]) -> str:
        """A name the documents never use (not only the retrieved passages): "it never mentions France"."""
        for name in q.names:
            if not any(t in self.corpus.df for t in name):
                return _name_text(q.text, name)
        return ""

    # -- phrases ---------------------------------------------------------------------------------------------

    def _parse_agrees(self, q: Question, s: Sentence, c: Span) -> bool:
        """The stored parse does not contradict the phrase: its entity label fits the asked type ("Belgium" is no
        venue when it is "Belgium's Anaïs"), and a person is in the role asked about ("behind Liu" did not win)."""
        if s.parsed is None:
            return True
        start, end = s.span.start + c.start, s.span.start + c.end
        label = self.corpus.labels.label(self.corpus.texts[s.path], s.parsed, start, end)
        if q.answer_type is AnswerType.PLACING and ordinal_of_a_thing(s.parsed, start, end):
            log.info("not a placing: it counts things: %s", c.text)
            return False  # "won the fifth stage" does not say where anyone finished
        if q.answer_type is AnswerType.PLACE and self.corpus.labels.inside_longer(s.parsed, start, end):
            log.info("not a place: part of a longer name: %s", c.text)
            return False  # "French" in "the French Open final"
        if label == "DATE" and q.answer_type is AnswerType.NUMBER and not TIME_ASKED.search(q.text):
            log.info("a date is no answer to a question that asks for no time: %s", c.text)
            return False  # "What was her score?" is not answered by "the last four years"
        if not type_agrees(q.answer_type, label):
            log.info("not a %s by its entity label %s: %s", q.answer_type.value, label, c.text)
            return False
        if q.answer_type in {AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG}:
            if not nominal(s.parsed, start, end, label):
                log.info("not a %s: not a noun phrase: %s", q.answer_type.value, c.text)
                return False
            winner = q.relation == term("win") and not set(q.closed) & EXACT_CLOSED
            if (
                q.answer_type is AnswerType.PERSON
                and winner
                and won_less(self.corpus.texts[s.path], s.parsed, start, end)
            ):
                log.info("not who won: the sentence has them win less: %s", c.text)
                return False
            found = role(s.parsed, start, end)
            if not role_agrees(q.answer_type, q.asked_role, found):
                log.info("not the %s asked for (%s): %s", q.answer_type.value, found, c.text)
                return False
        return True

    def _candidates(self, q: Question, s: Sentence) -> list[Span]:
        finder = CANDIDATE_FINDERS.get(q.answer_type)
        if finder is None:
            return []
        unit_ok = (lambda c: True) if not q.unit else (lambda c: bool(re.search(q.unit, c.text, re.IGNORECASE)))
        q_terms = set(q.terms) | {t for name in q.names for t in name}
        name_terms = {t for name in q.names for t in name}
        ago_ok = q.unit == UNITS["time"] and bool(re.search(r"\b(?:ago|before|since|earlier)\b", q.text, re.I))
        unrealized = _unrealized_spans(q, s.text)
        asked = [set(name) for name in q.names]
        mentions = self.corpus.mentions(s.text) if asked or q.answer_type is AnswerType.PERSON else []
        found = [
            c
            for c in finder(s.text, self.corpus.lexicon)
            if not terms_of(c.text) <= q_terms  # the question's own words are no answer
            and not (q.answer_type is AnswerType.PERSON and terms_of(c.text) & name_terms)
            and (ago_ok or not re.match(r"\s+ago\b", s.text[c.end :]))  # "two days ago" says when, not how long
            and not any(a <= c.start < b for a, b in unrealized)  # "a good position to win gold" is no medal
            and not (asked and q.answer_type is not AnswerType.PERSON and _owned_by_other(s.text, c, mentions, asked))
            and not (q.someone_else and _owned_by_asked(s.text, c, mentions, asked))  # "the man who helped Haldane"
            and unit_ok(c)  # "how many miles" is not answered in hours
            and (q.margin or not DIFFERENCE.match(s.text[c.end :]))  # "47 seconds ahead" is a gap, not a time
        ]
        if q.answer_type is AnswerType.PERSON and q.relation:
            found = self._doers(q, s.text) or found  # "Who was recording them?" — "a cameraman was recording them"
            agents = _agents(q.relation, s.text, mentions)
            placing = q.relation in RESULT_VERBS and set(q.closed) & EXACT_CLOSED  # whose placing: see below
            if agents and not placing:  # "Who won the stage?": who won it, not who else the sentence names
                found = [
                    c
                    for c in found
                    if c.text[:1].islower()  # "a cameraman"
                    or any(terms_of(c.text) & a for a in agents)
                ]
        found = [c for c in found if self._parse_agrees(q, s, c)]
        if q.type_word == "date":
            found = [c for c in found if re.search(r"\d", c.text)]  # "What date…": "12 June", not "Sunday"
        anchored = _anchored(q, s.text, found, mentions)
        if anchored:  # "won in 2 hours, 8 minutes…" answers the winning time; "…who was second in 2:09:28" does not
            found = anchored
        nationality = self._asked_nationality(q)
        if nationality:  # "Which American skaters…": people the documents call American
            people = self.corpus.nationals[country_of(q.surface.get(nationality, nationality))]
            found = [c for c in found if any(terms_of(c.text) & p for p in people)]
        if q.answer_type is AnswerType.PERSON and q.closed:  # "Who finished fourth?": whose fourth place it is
            holders = [
                owner(s.text, pos, mentions) for w, pos in words(s.text) if term(w) in set(q.closed) & EXACT_CLOSED
            ]
            known = [h.person for h in holders if h and h.person]
            if known:
                found = [c for c in found if any(terms_of(c.text) & h for h in known)]
        return found

    def _does(self, q: Question, text: str) -> bool:
        """The sentence says someone does what the question asks about: the verb itself, or a verb close in meaning,
        compared in dictionary form ("shielded" ~ "to block", "filmed" ~ "recording"; a noun like "video" does not
        count)."""
        verb = lemma(q.surface.get(q.relation or "", q.relation or ""))
        return q.relation in terms_of(text) or bool(self._synonym_credit(verb, _verbs(text)))

    def _doers(self, q: Question, text: str) -> list[Span]:
        """Who does what a who-question asks about, told by a noun phrase rather than a name: the subject of
        that verb or a near-synonym ("Who filmed them?" — "a cameraman was recording them")."""
        verb = q.surface.get(q.relation or "", q.relation or "")
        return [
            Span(m.group(1), m.start(1), m.end(1))
            for m in DOER.finditer(text)
            if m.group(1).split()[-1] not in STOPWORDS
            and (term(m.group(2)) == q.relation or self._synonym_credit(verb, [m.group(2)]))
        ]

    def _phrase(self, q: Question, s: Sentence) -> str:
        """The one candidate nearest the question's terms in the sentence; none when two are equally near."""
        if q.answer_type not in PHRASE_TYPES or not s.candidates:
            return ""
        if len(s.candidates) == 1:
            return s.candidates[0].text
        unrealized = _unrealized_spans(q, s.text)
        anchors = [
            pos
            for w, pos in words(s.text)
            if term(w) in q.terms and w.lower() not in STOPWORDS and not any(a <= pos < b for a, b in unrealized)
        ]
        if not anchors:
            return ""
        distance = sorted(
            (min((_gap(c, a) for a in anchors if not c.start <= a < c.end), default=10**6), c.text)
            for c in s.candidates
        )
        if distance[1][0] - distance[0][0] < 8:  # about two words apart: too close to call
            return ""
        return distance[0][1]

    def _said_by_asked(self, q: Question, s: Sentence) -> bool:
        """The quotation is by the person the question names first ("What did Kiprop say about Gebre?")."""
        people = [name for name in q.names if not set(name) <= EVENT_NAME_TERMS]
        return bool(people) and bool(self.corpus.speaker(s) & set(people[0]))

    def _asked_nationality(self, q: Question) -> str | None:
        """The closed term of "Which American skater…" when it describes the person asked for and the documents
        say who is American; it is then checked on the person, not the sentence."""
        if q.answer_type is not AnswerType.PERSON:
            return None
        for c in q.closed:
            country = country_of(q.surface.get(c, c))
            if country and self.corpus.nationals.get(country):
                return c
        return None

    def _several(self, q: Question, supported: list[Sentence], needed: float) -> Draft:
        """ "Which two skaters…": a person from each of the best sentences, until there are as many as asked."""
        names: list[tuple[str, int]] = []
        quotes: list[Sentence] = []
        for s in supported:
            if s.coverage < needed and s.dense < MIN_DENSE_ALONE:
                continue
            for c in s.candidates:
                terms = terms_of(c.text)
                if any(terms & terms_of(n) for n, _ in names):
                    continue
                if s not in quotes:
                    quotes.append(s)
                names.append((c.text, quotes.index(s) + 1))
                if len(names) == q.count:
                    text = " and ".join(f"{n} [{i}]" for n, i in names)
                    return Draft(_capitalize(text) + ".", False, quotes)
        log.info("abstain: asked for %d people, found %d", q.count, len(names))
        return self._abstain()

    def _second_sentence(self, q: Question, best: Sentence, rest: list[Sentence]) -> list[Sentence]:
        """Add a second sentence when it is nearly as good and brings key terms the first lacks; for a quotation,
        the sentence that carries it on ("I saw him fall…" "In my village we are taught…")."""
        if q.answer_type is AnswerType.QUOTE:
            following = self.corpus.sentences[best.path][best.index + 1 : best.index + 2]
            speaker = self.corpus.speaker(best)
            runs_on = best.text.rstrip()[-1:] not in "”\"’'"  # the quotation has not closed
            if following and speaker and runs_on and self.corpus.speaker(following[0]) == speaker:
                return [replace(following[0], chunk_id=following[0].chunk_id or best.chunk_id)]
        if q.answer_type in PHRASE_TYPES - {AnswerType.PERSON} or not rest:
            return []
        best_terms = terms_of(best.text)
        for s in rest[:3]:
            new_terms = terms_of(s.text) - best_terms
            if s.score >= SECOND_SENTENCE_RATIO * best.score and set(q.terms) & new_terms:
                return [s]
        if q.answer_type in {AnswerType.ANY, AnswerType.REASON}:
            # "What did Glenn do when…": what happened next is often told in the sentence that follows
            following = [s for s in rest if s.path == best.path and s.index == best.index + 1]
            if following and (q.reaction or following[0].score >= NEXT_SENTENCE_RATIO * best.score):
                return following
        return []

    def _abstain(self, reason: str = "") -> Draft:
        subject = "article doesn't" if self.corpus.documents <= 1 else "documents don't"
        text = f"The {subject} say" + (f": {reason}." if reason else ".")
        return Draft(text, True, [], reason)


def _verbs(text: str) -> list[str]:
    """The verbs of a sentence in dictionary form, roughly ("shielded", "recording", "to block")."""
    tokens = [w for w, _ in words(text)]
    return [
        lemma(w) for w in [w for w in tokens if re.search(r"(?:ed|ing)$", w)] + re.findall(r"\bto\s+([a-z]+)\b", text)
    ]


def synonym_candidates(text: str) -> set[str]:
    """The words of a sentence that a question's word may be a near-synonym of: its content words and its verbs.
    Their vectors are learnt at indexing (bot.knowledge), so answering embeds only the question's own words."""
    return {*content_words([w for w, _ in words(text)]), *_verbs(text)}


def _unrealized_spans(q: Question, text: str) -> list[tuple[int, int]]:
    """Where the text speaks of what was only hoped for or expected ("the gold medal favorite"); nothing when the
    question asks about exactly that ("Who was expected to win gold?")."""
    if UNREALIZED.search(q.text):
        return []
    return [m.span() for m in UNREALIZED.finditer(text)]


def _realized_terms(q: Question, text: str) -> set[str]:
    """Terms of a text outside its "hoped to…"/"favorite" spans."""
    spans = _unrealized_spans(q, text)
    return {term(w) for w, pos in words(text) if not any(a <= pos < b for a, b in spans)}


def _unrealized(q: Question, text: str) -> bool:
    """A question term in the sentence appears only as something that was hoped for, not something done."""
    spans = _unrealized_spans(q, text)
    if not spans:
        return False
    inside = {term(w) for w, pos in words(text) if any(a <= pos < b for a, b in spans)}
    outside = {term(w) for w, pos in words(text) if not any(a <= pos < b for a, b in spans)}
    return bool((set(q.terms) & inside) - outside)


DOER = re.compile(
    r"\b((?:a|an|the|one|some|two|three|several)\s+(?:[a-z-]+\s+){0,2}?[a-z-]+)\s+"
    r"(?:(?:was|were|is|are|had|has|had been|has been|have been|would|could|then|also)\s+)?([a-z]+)\b"
)


def _anchored(q: Question, text: str, candidates: list[Span], mentions: list[Mention]) -> list[Span]:
    """The candidates in a clause that holds one of the question's own terms, or is said of the person asked."""
    asked = (set(q.terms) | {t for name in q.names for t in name}) - {q.type_word}
    people = [set(name) for name in q.names]
    spans = clauses(text)
    out = []
    for c in candidates:
        who = _owner(text, c, mentions)
        if who and any(who.person & p for p in people):
            out.append(c)
            continue
        for a, b in spans:
            if a <= c.start < b and {term(w) for w, pos in words(text[a:b]) if not c.start <= a + pos < c.end} & asked:
                out.append(c)
                break
    return out


def _orders_match(q: Question, text: str) -> bool:
    """ "his first marathon" needs a sentence about a first marathon; "at the previous Olympics" one that speaks
    of an earlier time ("the bronze medal last time")."""
    tokens = [w.lower() for w, _ in words(text)]
    terms = [term(w) for w in tokens]
    for ordinal, noun in q.ordered:
        same = ORDER_WORDS.get(ordinal, {ordinal})
        if not any(w in same and noun in terms[i + 1 : i + 3] for i, w in enumerate(tokens)):
            return False
    return not q.earlier or bool(EARLIER_WORDS & set(tokens))


GENERIC = STOPWORDS | {"pair", "couple", "few", "several", "some", "many", "two", "three", "number"}


def _specific(noun: str, text: str) -> bool:
    """The sentence says which: the noun comes with a name or a describing word ("the triple Axel", "Cordillera-Ruta
    team"), not only "a pair of jumps"."""
    tokens = words(text)
    for i, (w, _) in enumerate(tokens):
        if term(w) != noun:
            continue
        if any(x.lower() not in GENERIC for x, _ in tokens[max(0, i - 3) : i]):
            return True
    return False


def _result_stated(q: Question, text: str) -> bool:
    """ "Who finished third?" is answered by "…went past them to take third place": a placing the question names,
    in a clause that says someone finished, took or was it ("Running in third place" is not a result)."""
    text = _without_durations(text)
    for a, b in clauses(text):
        terms = [term(w) for w, _ in words(text[a:b])]
        after_placing = {terms[i + 1] for i, t in enumerate(terms[:-1]) if t in EXACT_CLOSED}  # "third place"
        past = not q.earlier and {"ago", "previous", "previously"} & set(terms)  # "…second in the race two years ago"
        if (
            set(terms) & set(q.closed) & EXACT_CLOSED
            and (set(terms) - after_placing) & (RESULT_VERBS | {"be"})
            and not past
        ):
            return True
    return False


def _agents(relation: str, text: str, mentions: list[Mention]) -> list[frozenset[str]]:
    """Who does the verb in the sentence: the person after "by" ("consoled by American Alysa Liu"), else the
    subject of the verb's clause ("Norway's Eirik Solvang won the fifth stage")."""
    agents = []
    for w, pos in words(text):
        if term(w) != relation:
            continue
        by = re.match(r"\s+by\s+", text[pos + len(w) :])
        if by:
            start = pos + len(w) + by.end()
            who = next((m for m in mentions if m.span.start >= start - 1), None)
        else:
            who = owner(text, pos, mentions)
        if who and who.person:
            agents.append(who.person)
    return agents


def _without_durations(text: str) -> str:
    """The text with "one second", "two seconds" blanked out: a second that is no placing."""
    return re.sub(rf"\b{NUMBER}\s+seconds?\b", lambda m: " " * len(m.group()), text, flags=re.IGNORECASE)


def _owned_by_other(text: str, candidate: Span, mentions: list[Mention], asked: list[set[str]]) -> bool:
    """The value is said of someone other than the person asked about: "Kiprop, 27," is not Wanjiru's age."""
    who = _owner(text, candidate, mentions)
    return bool(who and who.person) and not any(who.person & a for a in asked)


def _owned_by_asked(text: str, candidate: Span, mentions: list[Mention], asked: list[set[str]]) -> bool:
    """The value is said of a person the question names, when it asks about someone else ("the man who helped X")."""
    who = _owner(text, candidate, mentions)
    return bool(who and who.person) and any(who.person & a for a in asked)


def _owner(text: str, candidate: Span, mentions: list[Mention]) -> Mention | None:
    """Whose value it is: the person right next to it ("Kiprop, 27", "American Alysa Liu"), else its clause's."""
    others = [m for m in mentions if not m.span.start <= candidate.start < m.span.end]
    gap = lambda m: min(abs(candidate.start - m.span.end), abs(m.span.start - candidate.end))  # noqa: E731
    nearest = min(others, key=gap, default=None)
    between = nearest and text[min(candidate.end, nearest.span.end) : max(candidate.start, nearest.span.start)]
    if nearest and gap(nearest) <= OWNER_GAP_CHARS and re.fullmatch(r"[\s,'’s]*", between):
        return nearest
    return owner(text, candidate.start, others)


def _gap(c: Span, anchor: int) -> int:
    return 0 if c.start <= anchor < c.end else min(abs(anchor - c.start), abs(anchor - c.end))


def _name_text(question: str, name: list[str]) -> str:
    ws = [w for w, _ in words(question) if term(re.sub(r"['’]s$", "", w)) in name]
    return "“" + " ".join(ws) + "”" if ws else "that"


def _capitalize(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _end(text: str) -> str:
    return text if re.search(r"[.!?…’”'\"]$", text) else text + "."
