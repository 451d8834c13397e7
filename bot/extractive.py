"""The default answerer: no LLM. Picks the sentence(s) that answer, a precise phrase when the question asks
for one, or abstains when the passages do not support an answer. Every claim cites a verbatim sentence."""

import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from bot.clauses import Mention, clauses, owner
from bot.language import (
    COUNTRIES,
    DEMONYM_NOUNS,
    DEMONYMS,
    MEDALS,
    MONTHS,
    NUMBER_WORDS,
    ORDINALS,
    ORG_WORDS,
    STOPWORDS,
    WEEKDAYS,
    Span,
    name_groups,
    split_sentences,
    term,
    words,
)
from bot.paraphrase import rewordings, speaks_otherwise
from bot.question import EARLIER_WORDS, GENDERS, ORDER_WORDS, UNITS, AnswerType, Question, analyse
from bot.retrieval import Passage

log = logging.getLogger(__name__)

# Weights of a sentence's score: meaning (cosine) and the share of the question's terms it contains.
DENSE_WEIGHT, COVERAGE_WEIGHT, TYPE_BONUS = 0.5, 0.5, 0.1
MIN_COVERAGE = 0.5  # below this share of key terms the sentence must be very close in meaning...
MIN_COVERAGE_TYPED = 0.34  # ...lower when a phrase of the asked-for type is there and the names match
MIN_COVERAGE_QUOTE = 0.15  # ...and for a quotation by the person asked about (what it is about is paraphrased)
MIN_DENSE_ALONE = 0.62  # ...at least this cosine; measured on the eval sets, see README "Answer quality"
SECOND_SENTENCE_RATIO = 0.9
NEXT_SENTENCE_RATIO = 0.8
CAUSE_BONUS = 0.15  # a why-question prefers a sentence that gives a cause
CAUSAL = re.compile(
    r"\b(?:because|caused?|causing|due to|led to|leading to|since|so that|as a result|after|mistakes?|errors?"
    r"|reason|realized|realised|thanks to|owing to|therefore)\b",
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
NAME_CONTEXT_CHARS = 600  # how far back a name counts as "being talked about" (about five sentences)
UNREALIZED_PENALTY = 0.15
SPEAKER_BONUS = 0.15  # a quote question prefers the asked person's own words
# "in a good position to win", "was expected to finish": the event after "to" may not have happened.
UNREALIZED = re.compile(
    r"\b(?:here|there|position|hop\w*|expect\w*|favou?rite\w*|chance|bid|aim\w*|tr(?:y|ied|ying)|want\w*|poised|likely"
    r"|attempt\w*|fail\w*|set|going|hopes)\s+to\s+(?:\w+\s+){0,3}\w+|(?:\w+\s+){0,2}favou?rites?\b",
    re.IGNORECASE,
)


@dataclass
class Sentence:
    """A sentence of a document, located by its offsets in the document's text."""

    path: str
    source: str
    span: Span  # offsets within the document
    index: int  # position among the document's sentences
    chunk_id: str = ""  # the retrieved passage it was found in
    dense: float = 0.0
    coverage: float = 0.0
    score: float = 0.0
    candidates: list[Span] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.span.text


@dataclass
class Draft:
    """What an answerer decided, before it is turned into the answer object."""

    text: str  # answer text with [n] markers
    abstained: bool
    quotes: list[Sentence]  # quotes[n-1] is what [n] cites
    reason: str = ""


QUOTE_PARAGRAPHS = 4  # how many paragraphs back a running quotation is followed to find who said it
SPEECH = re.compile(
    r"[”\"’',]\s*([A-ZÀ-Þ][\w'-]*(?:\s+[A-ZÀ-Þ][\w'-]*)*)\s+(?:said|says|told|added|wrote)\b"
    r"|\b(?:said|says|added)\s+([A-ZÀ-Þ][\w'-]*(?:\s+[A-ZÀ-Þ][\w'-]*)*)"
    r"|\b(?:[Tt]he\s+[\w-]+|[Hh]e|[Ss]he)\s+(?:\w+ly\s+)?(?:said|says|told|added|wrote)\b"
)


PERSON_NOUNS = (
    "star|skater|rider|runner|athlete|man|woman|competitor|champion|player|driver|cyclist|swimmer|guy|girl|boy"
)
OPENING_REFERENCE = re.compile(
    rf"(?:[Hh]e|[Ss]he|[Tt]he\s+(?:\d+-year-old|(?:[a-z]+\s+)?(?:{PERSON_NOUNS}|winner|leader|veteran|teenager)))\b(?!['’])"
)


class Corpus:
    """What the answerer knows of all indexed documents: their sentences, which words are names, how rare
    each term is. Rebuilt from the stored chunks, whose offsets place them in their document."""

    def __init__(self, chunks: list[Document]):
        texts: dict[str, list[str]] = {}
        self.sources: dict[str, str] = {}
        for c in sorted(chunks, key=lambda c: (c.metadata["path"], int(c.metadata["start"]))):
            path, start = c.metadata["path"], int(c.metadata["start"])
            self.sources[path] = c.metadata["source"]
            buf = texts.setdefault(path, [])
            have = sum(map(len, buf))
            if start > have:
                buf.append("\n" * (start - have))  # a gap between chunks is whitespace we did not keep
            buf.append(c.page_content[max(0, have - start) :])
        self.texts = {path: "".join(parts) for path, parts in texts.items()}
        self.sentences = {
            path: [Sentence(path, self.sources[path], span, i) for i, span in enumerate(split_sentences(text))]
            for path, text in self.texts.items()
        }
        for c in chunks:  # cite each sentence by the first chunk that holds it whole
            start = int(c.metadata["start"])
            for s in self.sentences[c.metadata["path"]]:
                if not s.chunk_id and start <= s.span.start and s.span.end <= start + len(c.page_content):
                    s.chunk_id = c.metadata["chunk_id"]
        self.documents = len(self.texts)
        self._count_terms()
        self._find_nationals()

    def _count_terms(self) -> None:
        df: Counter[str] = Counter()
        capitalized, lowercase, initial = Counter(), Counter(), []
        all_sentences = [s.text for sents in self.sentences.values() for s in sents]
        for sent in all_sentences:
            toks = words(sent)
            df.update({term(w) for w, _ in toks})
            for i, (w, pos) in enumerate(toks):
                base = re.sub(r"['’]s$", "", w)
                after_quote = pos > 0 and sent[pos - 1] in "‘“\"'"
                if base[:1].isupper():
                    if i == 0 or after_quote:
                        nxt = toks[i + 1] if i + 1 < len(toks) else ("", 0)
                        adjacent = nxt[0] and not sent[pos + len(w) : nxt[1]].strip()
                        initial.append((base, nxt[0] if adjacent else ""))
                    else:
                        capitalized[base.lower()] += 1
                elif base[:1].islower():
                    lowercase[base.lower()] += 1
        proper = {w for w in capitalized if w not in lowercase and w.replace("’", "'") not in STOPWORDS}
        for first, nxt in initial:  # "Amber Glenn goes…", "Team USA figure…" (not "Afterwards, Glenn")
            if re.sub(r"['’]s$", "", nxt).lower() in proper and first.lower() not in STOPWORDS:
                proper.add(first.lower())
        self.proper_nouns = proper
        self.n = max(len(all_sentences), 1)
        self.df = df

    def _find_nationals(self) -> None:
        """Whom each country's word is used for: "Japan's Kaori Sakamoto", "American competitor Amber Glenn"."""
        self.nationals: dict[str, list[frozenset[str]]] = {}
        self.national_names: dict[str, list[str]] = {}
        self.people: set[frozenset[str]] = set()
        for s in (s for sents in self.sentences.values() for s in sents):
            for p in person_names(s.text, self.proper_nouns):
                self.people.add(frozenset(term(w) for w, _ in words(p.text)))
                m = re.search(r"([^\W\d_]+)(?:['’]s\s+|\s+(?:[a-z]+\s+){0,2})$", s.text[: p.start])
                country = m and _country(m.group(1))
                if country:
                    self.nationals.setdefault(country, []).append(frozenset(term(w) for w, _ in words(p.text)))
                    self.national_names.setdefault(country, []).append(p.text)

    def full_name(self, name: list[str]) -> list[str]:
        """ "Kaori" → Kaori Sakamoto, "Amber" → Amber Glenn: the one person the documents name with these words."""
        matches = [p for p in self.people if set(name) & p]
        if matches and all(a & b for a in matches for b in matches):
            return sorted(set(name).union(*matches))
        return name

    def national(self, country: str) -> frozenset[str]:
        """The one person of that country the documents name ("the Briton"), or empty when there are several."""
        people = self.nationals.get(country, [])
        if people and all(a & b for a in people for b in people):
            return frozenset().union(*people)
        return frozenset()

    def named_by_nationality(self, question: str) -> str:
        """ "What did the Colombian say…?" → "What did Julián Arbeláez say…?", when the documents name one person
        of that country (not for "the American" when two Americans are named)."""

        def name(m: re.Match) -> str:
            country = _country(m.group(1))
            if not country or not self.national(country):
                return m.group()
            return max(self.national_names[country], key=len)

        return re.sub(rf"\b[Tt]he\s+(?:[a-z]+\s+)?([A-ZÀ-Þ][a-zß-ÿ]+)(?:\s+(?:{PERSON_NOUNS}))?\b", name, question)

    def mentions(self, text: str) -> list[Mention]:
        """The people a sentence refers to: by name, as "the Briton", or as "the 24-year-old" (unresolved)."""
        found = [
            Mention(p, frozenset(term(w) for w, _ in words(p.text))) for p in person_names(text, self.proper_nouns)
        ]
        for m in re.finditer(r"\b[Tt]he\s+(?:(\d+-year-old)|([A-ZÀ-Þ][a-zß-ÿ]+))\b", text):
            country = _country(m.group(2) or "")
            if m.group(1) or country:
                person = self.national(country) if country else frozenset()
                found.append(Mention(Span(m.group(), m.start(), m.end()), person))
        return sorted(found, key=lambda m: m.span.start)

    def idf(self, t: str) -> float:
        return math.log(1 + self.n / (1 + self.df.get(t, 0)))

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        end = passage.start + len(passage.text)
        return [
            replace(s, chunk_id=passage.chunk_id)
            for s in self.sentences.get(passage.path, [])
            if s.span.start >= passage.start and s.span.end <= end
        ]

    def window(self, s: Sentence) -> str:
        """The sentence and the one before it, which often holds the subject of "she", "he", "it"."""
        sents = self.sentences[s.path]
        return " ".join(x.text for x in sents[max(0, s.index - 1) : s.index + 1])

    def context(self, s: Sentence) -> str:
        """The text leading up to a sentence: where the people and things it refers to were last named."""
        return self.texts[s.path][max(0, s.span.start - NAME_CONTEXT_CHARS) : s.span.end]

    def speaker(self, s: Sentence) -> set[str]:
        """Who is quoted in the sentence's paragraph ("…," Gebre said; "The skater said, …"), or in the paragraphs
        before it when the quote runs on from them: the terms of that name, or empty."""
        text = self.texts[s.path]
        start = text.rfind("\n", 0, s.span.start) + 1
        for _ in range(QUOTE_PARAGRAPHS):
            end = text.find("\n", start)
            paragraph = text[start : end if end >= 0 else len(text)]
            m = SPEECH.search(paragraph)
            if m and (m.group(1) or m.group(2)):
                return {term(w) for w, _ in words(m.group(1) or m.group(2))}
            if (
                m
            ):  # "the Frenchman said": the one Frenchman; "The skater said", "She added": whom the text before is about
                described = re.match(r"[Tt]he\s+([\w-]+)", m.group())
                country = _country(described.group(1)) if described else ""
                if country and self.national(country):
                    return set(self.national(country))
                return self._last_subject(text[max(0, start - NAME_CONTEXT_CHARS) : start + m.start()])
            if paragraph[:1] not in "‘“'\"" or start == 0:  # not a quotation running on from before
                return set()
            start = text.rfind("\n", 0, len(text[:start].rstrip("\n"))) + 1
        return set()

    def referent(self, s: Sentence) -> set[str]:
        """Whom a sentence opening with "He", "She" or a description ("The 26-year-old", "The winner") is about:
        the speaker of the quotation before it, or the first person named in the closest sentence naming one."""
        if not OPENING_REFERENCE.match(s.text):
            return set()
        for before in reversed(self.sentences[s.path][max(0, s.index - 3) : s.index]):
            said_by = self.speaker(before) if self.in_quotation(before) else set()
            named = [m.person for m in self.mentions(before.text) if m.person]
            if said_by or named:
                return said_by or set(named[0])
        return set()

    def _last_subject(self, text: str) -> set[str]:
        """The first person named in the last sentence of `text` that names anyone (outside quotation marks)."""
        text = re.sub(r"[“\"][^”\"]*[”\"]", " ", text)
        for sentence in reversed(split_sentences(text)):
            named = [m for m in self.mentions(sentence.text) if m.person]
            if named:
                return set(named[0].person)
        return set()

    def in_quotation(self, s: Sentence) -> bool:
        """The sentence is, or holds, someone's quoted words (not a word in scare quotes: "criticizes ‘meddling’")."""
        if re.search(r"[“\"‘]\s*\S+(?:\s+\S+){2}|\bsaid\b|\bsays\b|\btold\b", s.text):
            return True
        text = self.texts[s.path]
        paragraph_start = text.rfind("\n", 0, s.span.start) + 1
        return text[paragraph_start : paragraph_start + 1] in "‘“'\""


class ExtractiveAnswerer:
    """Sentence selection by meaning + key-term coverage, typed phrase extraction, principled abstention."""

    def __init__(self, embedder: Embeddings, chunks: list[Document]):
        self.embedder = embedder
        self.corpus = Corpus(chunks)
        self._vectors: dict[str, np.ndarray] = {}

    def __call__(self, question: str, passages: list[Passage]) -> Draft:
        question = self.corpus.named_by_nationality(question)
        known = lambda t: t in self.corpus.df  # noqa: E731
        # "runner-up" where the article says "silver": ask in its words too, first when the question's are foreign
        asked = analyse(question, self.corpus.proper_nouns)
        tries = [(r, asked) for r in rewordings(question, known)]
        foreign = speaks_otherwise(question, known) and asked.answer_type is not AnswerType.QUOTE  # quotes paraphrase
        # (foreign words would only be matched by loose near-synonyms: "runner-up" ~ "second in the race two years ago")
        tries = tries if foreign else [(question, None), *tries]
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
        if asked:  # reworded: still the kind of answer first asked for
            q.answer_type = asked.answer_type
            if asked.answer_type not in PHRASE_TYPES:  # a reason need not name the medal its rewording brought in
                q.closed = asked.closed
        if q.injection:
            return self._abstain("it only answers questions about the documents, and follows no instructions")
        if not q.terms or not passages:
            return self._abstain()
        missing = self._names_missing_everywhere(q, passages)
        if missing:
            return self._abstain(f"it never mentions {missing}")

        supported = [s for s in self._score(question, q, self._sentences(passages)) if self._supports(q, s)]
        if not supported:  # the passages missed it: read the rest of the documents they came from
            whole = self._sentences(passages, whole_documents=True)
            supported = [s for s in self._score(question, q, whole) if self._supports(q, s)]
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
            return Draft(f"{_capitalize(phrase)} [1].", False, [best])
        quotes = [best] + self._second_sentence(q, best, supported[1:])
        text = " ".join(f"{_end(s.text)} [{i}]" for i, s in enumerate(quotes, 1))
        return Draft(text, False, quotes)

    # -- scoring ---------------------------------------------------------------------------------------------

    def _sentences(self, passages: list[Passage], whole_documents: bool = False) -> list[Sentence]:
        seen: set[tuple[str, int]] = set()
        sentences = []
        for p in passages:
            found = self.corpus.sentences_in(p)
            if whole_documents:
                found += [replace(s) for s in self.corpus.sentences[p.path]]
            for s in found:
                if (s.path, s.index) not in seen:  # overlapping chunks repeat sentences
                    seen.add((s.path, s.index))
                    sentences.append(s)
        return sentences

    def _score(self, question: str, q: Question, sentences: list[Sentence]) -> list[Sentence]:
        if not sentences:
            return []
        # a quote question is matched on what the quote is about, not on "X said"
        qvec = np.asarray(self.embedder.embed_query(q.topic if q.answer_type is AnswerType.QUOTE else question))
        for s, vec in zip(sentences, self._embed([s.text for s in sentences]), strict=True):
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

    def _embed(self, texts: list[str]) -> list[np.ndarray]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            for t, v in zip(todo, self.embedder.embed_documents(todo), strict=True):
                self._vectors[t] = np.asarray(v)
        return [self._vectors[t] for t in texts]

    def _coverage(self, q: Question, s: Sentence) -> float:
        """IDF-weighted share of the question's terms the sentence holds. A name counts once: fully when any of
        its words is in the sentence or the one before ("she", "he"), half when named a few sentences back. A
        word only in the sentence before gets half credit; a word the text lacks gets partial credit for a
        near-synonym in the sentence ("prize" ~ "medal")."""
        own_words = [w for w, _ in words(s.text)]
        own = {term(w) for w in own_words}
        window = {term(w) for w, _ in words(self.corpus.window(s))} | self.corpus.speaker(s)
        context = {term(w) for w, _ in words(self.corpus.context(s))}
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
        content = [re.sub(r"['’]s$", "", w) for w in sentence_words if w.lower().replace("’", "'") not in STOPWORDS]
        if not content:
            return 0.0
        vectors = self._embed([word, *content])
        best = max(float(vectors[0] @ v) for v in vectors[1:])
        return SYNONYM_CREDIT * best if best >= SYNONYM_MIN else 0.0

    def _supports(self, q: Question, s: Sentence) -> bool:
        """Hard checks: the names the question is about were named near the sentence, every closed-class term
        it names (a medal, a placing, a weekday, a number) is in the sentence's window, and an answer of the
        expected type is there."""
        # who is being talked about: the names of the last few sentences, the speaker of a quotation, and the
        # event itself ("the Olympics", "the marathon"), which a whole document is about
        speaker = self.corpus.speaker(s) | self.corpus.referent(s)  # who says it, or whom "The 26-year-old" means
        context_terms = {term(w) for w, _ in words(self.corpus.context(s))} | speaker
        people = [name for name in q.names if not set(name) <= EVENT_NAME_TERMS]
        named = [bool(set(name) & context_terms) for name in people]
        # a quote question needs its speaker nearby; what the quote is about may be a "him" or "her"
        if people and not (any(named) if q.answer_type is AnswerType.QUOTE else all(named)):
            return False
        if q.names and q.answer_type is not AnswerType.PERSON and self._about_someone_else(q, s):
            return False
        if q.answer_type in PHRASE_TYPES - {AnswerType.PERSON}:
            # a value (an age, a time, a sum) belongs to someone named in the sentence or the one before
            window_terms = {term(w) for w, _ in words(self.corpus.window(s))} | speaker
            if any(not set(name) & window_terms for name in people):
                return False
        # what a sentence only hoped for ("in a position to win gold") does not count, except for why-questions,
        # which ask about exactly that contrast ("Why did she win silver instead of gold?")
        window_text = self.corpus.window(s)
        window = (
            {term(w) for w, _ in words(window_text)}
            if q.answer_type is AnswerType.REASON
            else (_realized_terms(q, window_text))
        )
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
            {term(w) for w, _ in words(p.text)}
            for p in person_names(s.text, self.corpus.proper_nouns)
            if not re.match(r"['’]s\b", s.text[p.end :])  # "pulled Haldane's arm" is not about Haldane
        ]
        asked = [set(name) for name in q.names]
        if PRONOUN.search(s.text) and any(a & {term(w) for w, _ in words(self.corpus.window(s))} for a in asked):
            return False  # "…caused him to finish 1.91 points behind Liu": "him" is who was just named
        return bool(people) and not any(p & a for p in people for a in asked)

    def _names_missing_everywhere(self, q: Question, passages: list[Passage]) -> str:
        """A name the documents never use (not only the retrieved passages): "it never mentions France"."""
        found = {term(w) for text in self.corpus.texts.values() for w, _ in words(text)}
        for name in q.names:
            if not set(name) & found:
                return _name_text(q.text, name)
        return ""

    # -- phrases ---------------------------------------------------------------------------------------------

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
            for c in finder(s.text, self.corpus.proper_nouns)
            if not {term(w) for w, _ in words(c.text)} <= q_terms  # the question's own words are no answer
            and not (q.answer_type is AnswerType.PERSON and {term(w) for w, _ in words(c.text)} & name_terms)
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
            if agents and not (
                q.relation in RESULT_VERBS and set(q.closed) & EXACT_CLOSED
            ):  # placings: below  # "Who won the stage?": who won it, not who else the sentence names
                found = [
                    c
                    for c in found
                    if c.text[:1].islower()  # "a cameraman"
                    or any({term(w) for w, _ in words(c.text)} & a for a in agents)
                ]
        if q.type_word == "date":
            found = [c for c in found if re.search(r"\d", c.text)]  # "What date…": "12 June", not "Sunday"
        anchored = _anchored(q, s.text, found, mentions)
        if anchored:  # "won in 2 hours, 8 minutes…" answers the winning time; "…who was second in 2:09:28" does not
            found = anchored
        nationality = self._asked_nationality(q)
        if nationality:  # "Which American skaters…": people the documents call American
            people = self.corpus.nationals[_country(q.surface.get(nationality, nationality))]
            found = [c for c in found if any({term(w) for w, _ in words(c.text)} & p for p in people)]
        if q.answer_type is AnswerType.PERSON and q.closed:  # "Who finished fourth?": whose fourth place it is
            holders = [
                owner(s.text, pos, mentions) for w, pos in words(s.text) if term(w) in set(q.closed) & EXACT_CLOSED
            ]
            known = [h.person for h in holders if h and h.person]
            if known:
                found = [c for c in found if any({term(w) for w, _ in words(c.text)} & h for h in known)]
        return found

    def _does(self, q: Question, text: str) -> bool:
        """The sentence says someone does what the question asks about: the verb itself, or a verb close in meaning
        ("filmed" ~ "recording"; a noun like "video" does not count)."""
        verb = q.surface.get(q.relation or "", q.relation or "")
        tokens = [w for w, _ in words(text)]
        return q.relation in {term(w) for w in tokens} or bool(
            self._synonym_credit(verb, [w for w in tokens if re.search(r"(?:ed|ing)$", w)])
        )

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
            country = _country(q.surface.get(c, c))
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
                terms = {term(w) for w, _ in words(c.text)}
                if any(terms & {term(w) for w, _ in words(n)} for n, _ in names):
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
        best_terms = {term(w) for w, _ in words(best.text)}
        for s in rest[:3]:
            new_terms = {term(w) for w, _ in words(s.text)} - best_terms
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


# -- candidate finders: spans of a sentence that could be the answer of a given type -------------------------


def _word_spans(text: str, predicate) -> list[Span]:
    return [Span(w, pos, pos + len(w)) for w, pos in words(text) if predicate(w)]


def person_names(text: str, proper: set[str]) -> list[Span]:
    out = []
    places = _locations(text, proper)
    for g in name_groups(text, proper):
        if any(p.start < g.end and g.start < p.end for p in places):  # "won in Porto": a place, not a person
            continue
        if re.search(r"\bthe\s+$", text[: g.start]) and not _country(g.text.split()[0]):
            continue  # "the Col de Sarrat", "the Tour des Cimes": a thing, not a person ("the Dane Mads…" is)
        parts = [p.lower() for p in re.findall(r"[^\W\d_][\w.-]*", g.text)]
        if " " not in g.text and re.search(r"\w-\w", g.text):
            continue  # "Cordillera-Ruta", "Ardent-Velo": one hyphenated name is a team or a place, not a person
        if TEAM_AFTER.match(text, g.end) or {"celsius", "fahrenheit"} & set(parts):
            continue  # "his Nordlys Cycling team-mates", "7 degrees Celsius"
        if any(p in ORG_WORDS or _country(p) or p in WEEKDAYS or p in MONTHS for p in parts):
            # "American Alysa Liu", "the Dane Mads Kjeldsen": drop a leading nationality, keep the person
            if _country(parts[0]) and len(parts) > 1 and not any(p in ORG_WORDS for p in parts):
                first = g.text.split()[0]
                rest = g.text[len(first) :].lstrip()
                out.append(Span(rest, g.end - len(rest), g.end))
            continue
        out.append(g)
    return out


TEAM_AFTER = re.compile(r"\s+(?:team|squad|club|outfit|team-?mates?|teammates?)\b", re.IGNORECASE)


def _orgs(text: str, proper: set[str]) -> list[Span]:
    """Teams, clubs, outlets: names with an organization word ("Team USA"), in capitals ("NBC"), before "team"
    ("his Nordlys Cycling team-mates"), one hyphenated name ("Cordillera-Ruta"), a website ("Olympics.com")."""
    sites = [Span(m.group(), m.start(), m.end()) for m in WEBSITE.finditer(text)]
    return sites + [
        g
        for g in name_groups(text, proper)
        if any(p.lower() in ORG_WORDS for p in g.text.split())
        or re.fullmatch(r"[A-Z]{2,}", g.text)
        or TEAM_AFTER.match(text, g.end)
        or (" " not in g.text and re.search(r"\w-\w", g.text))
        if not any(s.start <= g.start < s.end for s in sites)
    ]


def _nationalities(text: str, proper: set[str]) -> list[Span]:
    """Countries and nationality words: "Japan's Kaori Sakamoto", "American Alysa Liu"."""
    out = [g for g in name_groups(text, proper) if g.text.lower() in COUNTRIES or g.text.lower() in DEMONYMS]
    for g in name_groups(text, proper):
        first = g.text.split()[0]
        if " " in g.text and first.lower() in DEMONYMS:
            out.append(Span(first, g.start, g.start + len(first)))
    return _dedupe(out)


PLACE_AFTER = re.compile(
    r"\b(?:in|at|on|near|from|to|into|outside)\s+((?:the\s+)?[A-ZÀ-Þ][\w'-]*(?:\s+(?:(?:de|da|do|dos|das|del|la|le|of|the|y|von|van)\s+)?[A-ZÀ-Þ][\w'-]*)*)"
)


def _locations(text: str, proper: set[str]) -> list[Span]:
    """Names after a place preposition: "in Porto", "on Avenida dos Aliados"."""
    out = []
    for m in PLACE_AFTER.finditer(text):
        g = re.sub(r"^the\s+", "", m.group(1))
        if g.split()[0].lower() not in WEEKDAYS | MONTHS | STOPWORDS and g.split()[0].lower() in proper:
            start = m.end(1) - len(g)
            out.append(Span(g, start, start + len(g)))
    return out


def _places(text: str, proper: set[str]) -> list[Span]:
    """Locations, countries, and where things are published: "under a TikTok video", "(via Olympics.com)"."""
    online = [g for g in name_groups(text, proper) if g.text.lower() in PLATFORMS] + [
        Span(m.group(), m.start(), m.end()) for m in WEBSITE.finditer(text)
    ]
    return _dedupe(_locations(text, proper) + _nationalities(text, proper) + online)


PLATFORMS = {"tiktok", "instagram", "twitter", "youtube", "facebook", "snapchat", "threads", "weibo", "reddit"}
WEBSITE = re.compile(r"\b[\w-]+\.(?:com|org|net|tv|co\.uk|fr|de|jp|es|it)\b")


NUMBER = r"(?:\d+(?:[.,:]\d+)*|" + "|".join(NUMBER_WORDS) + r")"


def _numbers(text: str, proper: set[str]) -> list[Span]:
    """A number with the unit after it: "1.91 points", "2 hours, 8 minutes and 41 seconds", "$50,000"."""
    out = []
    unit = r"(?:\s*(?:%|°C|°F|[a-z]+(?:-[a-z]+)*)(?:\s+(?:Celsius|Fahrenheit))?)?"
    clock = r"(?:hours?|minutes?|seconds?)"  # "2 hours, 8 minutes and 41 seconds" is one quantity
    compound = rf"\b{NUMBER}\s+{clock}(?:(?:,|\s+and)?\s+{NUMBER}\s+{clock}\b)+"
    pattern = rf"{compound}|[$€£]?\b{NUMBER}\b{unit}"
    for m in re.finditer(pattern, text, re.IGNORECASE):
        span = m.group().strip()
        last = span.split()[-1].lower() if span.split() else ""
        if last in STOPWORDS:  # "two of" → "two"
            span = span.rsplit(None, 1)[0]
        if re.match(r"-year-old", text[m.start() + len(span) :]):
            continue  # an age is no score or count
        if span.lower() in {"a", "one"}:
            continue
        out.append(Span(span, m.start(), m.start() + len(span)))
    return out


def _ages(text: str, proper: set[str]) -> list[Span]:
    pattern = r"\b\d{1,3}-year-old\b|\baged \d{1,3}\b|(?<=, )\d{1,3}(?=, )|\b\d{1,3} years old\b"
    return [Span(m.group(), m.start(), m.end()) for m in re.finditer(pattern, text)]


def _times(text: str, proper: set[str]) -> list[Span]:
    days = "|".join(WEEKDAYS | MONTHS)
    weekdays, months = "|".join(WEEKDAYS), "|".join(MONTHS)
    pattern = (
        rf"\b(?:(?:{weekdays}),?\s+)?\d{{1,2}}\s+(?:{months})(?:\s+\d{{4}})?\b|\b(?:(?:{days})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?)\b|\b(?:19|20)\d{{2}}\b|"
        rf"\b{NUMBER}\s+(?:days|weeks|months|years|hours)\s+(?:ago|earlier|later)\b|"
        r"\b(?:yesterday|today|tonight|tomorrow|last (?:night|week|year))\b"
    )
    return [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(pattern, text, re.IGNORECASE)
        if m.group().lower() not in {"may", "march"} or m.group()[0].isupper()
    ]


def _medals(text: str, proper: set[str]) -> list[Span]:
    return [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(r"\b(?:gold|silver|bronze)(?: medal)?\b", text, re.IGNORECASE)
    ]


def _placings(text: str, proper: set[str]) -> list[Span]:
    """Ordinals ("fifth", "2nd") and medals, which are placings too ("ended up with silver")."""
    ordinal = "|".join(ORDINALS - {"last"})
    ordinals = [
        Span(m.group(), m.start(), m.end())
        for m in re.finditer(rf"\b(?:{ordinal}|\d+(?:st|nd|rd|th))\b", text, re.IGNORECASE)
        if not re.search(rf"\b{NUMBER}\s+$", text[: m.start()], re.IGNORECASE)  # "one second behind" is a time
    ]
    return sorted(ordinals + _medals(text, proper), key=lambda c: c.start)


QUOTED_NAME = re.compile(r"[‘“'\"]((?:[A-ZÀ-Þ][\w'’-]*)(?:\s+[A-ZÀ-Þ][\w'’-]*){0,3})[’”'\"]")


def _nicknames(text: str, proper: set[str]) -> list[Span]:
    """What something is called: a capitalized name in quotation marks ("the American ‘Blade Angels’")."""
    return [Span(m.group(1), m.start(1), m.end(1)) for m in QUOTED_NAME.finditer(text)]


CANDIDATE_FINDERS = {
    AnswerType.NAME: _nicknames,
    AnswerType.PERSON: person_names,
    AnswerType.ORG: _orgs,
    AnswerType.PLACE: _places,
    AnswerType.NATIONALITY: _nationalities,
    AnswerType.NUMBER: _numbers,
    AnswerType.AGE: _ages,
    AnswerType.TIME: _times,
    AnswerType.MEDAL: _medals,
    AnswerType.PLACING: _placings,
}
PHRASE_TYPES = set(CANDIDATE_FINDERS)


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


def _country(word: str) -> str:
    w = word.lower()
    return w if w in COUNTRIES else DEMONYMS.get(w) or DEMONYM_NOUNS.get(w.removesuffix("s")) or ""


def _gap(c: Span, anchor: int) -> int:
    return 0 if c.start <= anchor < c.end else min(abs(anchor - c.start), abs(anchor - c.end))


def _dedupe(spans: list[Span]) -> list[Span]:
    seen, out = set(), []
    for s in spans:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out


def _name_text(question: str, name: list[str]) -> str:
    ws = [w for w, _ in words(question) if term(re.sub(r"['’]s$", "", w)) in name]
    return "“" + " ".join(ws) + "”" if ws else "that"


def _capitalize(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _end(text: str) -> str:
    return text if re.search(r"[.!?…’”'\"]$", text) else text + "."
