"""What the answerer knows of the indexed documents: their sentences, which words are names, who is quoted,
whom "the Briton" or "The 26-year-old" means. Rebuilt from the stored chunks, whose offsets place them in their
document."""

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from langchain_core.documents import Document

from bot.answer.candidates import country_of, person_names
from bot.answer.clauses import Mention
from bot.answer.language import STOPWORDS, term, terms_of, words
from bot.answer.linking import Lexicon
from bot.answer.parse_checks import EntityLabels
from bot.types import Passage, Sentence, Span
from index.store import StoreUnavailableError
from index.text import ParsedSentence, sentences_from_json

NAME_CONTEXT_CHARS = 600  # how far back a name counts as "being talked about" (about five sentences)


QUOTE_QUESTION = re.compile(r"\b(?:say|said|says|tell|told|describe|words|quote)\b", re.IGNORECASE)
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


@dataclass
class Knowledge:
    """What is known of all the indexed documents together: their names and words, how rare each term is, the label
    each entity mostly carries, who of each country is named, who is ever quoted, example questions. Learnt once
    from every chunk (at indexing, see bot.knowledge) so that answering a question reads only the chunks around its
    passages."""

    lexicon: Lexicon
    labels: EntityLabels
    df: Counter[str]
    n: int  # sentences in all
    proper_nouns: set[str]
    nationals: dict[str, list[frozenset[str]]]
    national_names: dict[str, list[str]]
    people: set[frozenset[str]]
    speaker_terms: set[str]
    sources: dict[str, tuple[str, str]]  # path -> (source, title)
    example_questions: list[str] = field(default_factory=list)
    # each document's chunks as (start, chunk id), by start: which chunks lie around a passage, found without asking
    # the store to filter its metadata (a scan: ~100 ms per question at 6,600 chunks)
    chunk_starts: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # the vector of each content word of the documents, embedded once when learning: near-synonyms are looked for
    # among these at ask time, and the model then embeds only the question's own words
    word_vectors: dict[str, np.ndarray] = field(default_factory=dict)


class Corpus:
    """What the answerer reads: the sentences of some stored chunks (every chunk, when learning; those around a
    question's passages, when answering), placed in their documents by the chunks' offsets, with what is known of
    all documents (`knowledge`, learnt from these chunks when not given)."""

    def __init__(self, chunks: list[Document], knowledge: Knowledge | None = None):
        texts: dict[str, list[str]] = {}
        self.sources: dict[str, str] = {}
        titles: dict[str, str] = {}
        for c in sorted(chunks, key=lambda c: (c.metadata["path"], int(c.metadata["start"]))):
            path, start = c.metadata["path"], int(c.metadata["start"])
            self.sources[path] = c.metadata["source"]
            titles[path] = c.metadata.get("title") or c.metadata["source"]
            buf = texts.setdefault(path, [])
            have = sum(map(len, buf))
            if start > have:
                buf.append("\n" * (start - have))  # a gap between chunks is whitespace we did not keep
            buf.append(c.page_content[max(0, have - start) :])
        self.texts = {path: "".join(parts) for path, parts in texts.items()}
        parsed: dict[str, dict[int, ParsedSentence]] = {}
        for c in chunks:  # indexing stored each chunk's sentences; overlapping chunks repeat some
            if "sentences" not in c.metadata:
                raise StoreUnavailableError("the index was built by an older version: run `eventbot index`")
            for ps in sentences_from_json(c.metadata["sentences"]):
                parsed.setdefault(c.metadata["path"], {})[ps.start] = ps
        self.sentences = {
            path: [
                Sentence(path, self.sources[path], Span(text[ps.start : ps.end], ps.start, ps.end), i, parsed=ps)
                for i, ps in enumerate(sorted(parsed.get(path, {}).values(), key=lambda ps: ps.start))
            ]
            for path, text in self.texts.items()
        }
        self._starts = {path: [s.span.start for s in sents] for path, sents in self.sentences.items()}
        # cite each sentence by the chunk that holds it whole and starts first (whichever chunks were read)
        for c in sorted(chunks, key=lambda c: int(c.metadata["start"])):
            for s in self._within(c.metadata["path"], int(c.metadata["start"]), len(c.page_content)):
                s.chunk_id = s.chunk_id or c.metadata["chunk_id"]
        learning = knowledge is None
        if knowledge is None:
            knowledge = self._learn({path: (self.sources[path], titles[path]) for path in self.texts})
            for c in chunks:
                knowledge.chunk_starts.setdefault(c.metadata["path"], []).append(
                    (int(c.metadata["start"]), c.metadata["chunk_id"])
                )
            for starts in knowledge.chunk_starts.values():
                starts.sort()
        self.knowledge = knowledge
        self.lexicon, self.labels = knowledge.lexicon, knowledge.labels
        self.df, self.n, self.proper_nouns = knowledge.df, knowledge.n, knowledge.proper_nouns
        self.nationals, self.national_names, self.people = (
            knowledge.nationals,
            knowledge.national_names,
            knowledge.people,
        )
        # who is quoted in each sentence, worked out once: answering asks it of many sentences per question
        self._speakers = {(s.path, s.index): self._find_speaker(s) for sents in self.sentences.values() for s in sents}
        if learning:  # "is X ever quoted?" in O(1), over all documents
            knowledge.speaker_terms = set().union(*self._speakers.values())
        self._speaker_terms = knowledge.speaker_terms

    @property
    def documents(self) -> int:
        """How many documents are indexed (all of them, not only those read)."""
        return len(self.knowledge.sources)

    def _learn(self, sources: dict[str, tuple[str, str]]) -> Knowledge:
        """What these (all the) chunks tell of the documents together."""
        everything = [(self.texts[s.path], s.parsed) for sents in self.sentences.values() for s in sents]
        self.lexicon = Lexicon(everything)
        self._count_terms()
        self.lexicon.proper = self.proper_nouns
        self._find_nationals()
        return Knowledge(
            self.lexicon,
            EntityLabels(everything),
            self.df,
            self.n,
            self.proper_nouns,
            self.nationals,
            self.national_names,
            self.people,
            set(),  # who is quoted: filled in once every sentence's speaker is known
            sources,
        )

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
            for p in person_names(s.text, self.lexicon):
                self.people.add(frozenset(term(w) for w, _ in words(p.text)))
                m = re.search(r"([^\W\d_]+)(?:['’]s\s+|\s+(?:[a-z]+\s+){0,2})$", s.text[: p.start])
                country = m and country_of(m.group(1))
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

        quoted = QUOTE_QUESTION.search(question)

        def name(m: re.Match) -> str:
            country = country_of(m.group(1))
            if country and self.national(country):
                return max(self.national_names[country], key=len)
            # "What did the American say…": of the Americans, the one who is quoted
            said = [n for n in self.national_names.get(country, []) if quoted and self._quoted(n)]
            if said and all(self._quoted(n) & self._quoted(said[0]) for n in said):
                return max(said, key=len)
            return m.group()

        return re.sub(rf"\b[Tt]he\s+(?:[a-z]+\s+)?([A-ZÀ-Þ][a-zß-ÿ]+)(?:\s+(?:{PERSON_NOUNS}))?\b", name, question)

    def _quoted(self, name: str) -> set[str]:
        """The terms of `name` if the documents quote that person, else nothing."""
        terms = terms_of(name)
        return terms if terms & self._speaker_terms else set()

    def mentions(self, text: str) -> list[Mention]:
        """The people a sentence refers to: by name, as "the Briton", or as "the 24-year-old" (unresolved)."""
        found = [Mention(p, frozenset(term(w) for w, _ in words(p.text))) for p in person_names(text, self.lexicon)]
        for m in re.finditer(r"\b[Tt]he\s+(?:(\d+-year-old)|([A-ZÀ-Þ][a-zß-ÿ]+))\b", text):
            country = country_of(m.group(2) or "")
            if m.group(1) or country:
                person = self.national(country) if country else frozenset()
                found.append(Mention(Span(m.group(), m.start(), m.end()), person))
        return sorted(found, key=lambda m: m.span.start)

    def idf(self, t: str) -> float:
        return math.log(1 + self.n / (1 + self.df.get(t, 0)))

    def _within(self, path: str, start: int, length: int) -> list[Sentence]:
        """The sentences of a document lying wholly in start..start+length (found by bisection: documents can be
        long, and this runs for every chunk at start-up and every passage of every question)."""
        sents, starts = self.sentences.get(path, []), self._starts.get(path, [])
        found = sents[bisect_left(starts, start) : bisect_right(starts, start + length)]
        return [s for s in found if s.span.end <= start + length]

    def sentences_in(self, passage: Passage) -> list[Sentence]:
        return [
            replace(s, chunk_id=passage.chunk_id) for s in self._within(passage.path, passage.start, len(passage.text))
        ]

    def read(self, passages: list[Passage], budget: int) -> list[Sentence]:
        """What the answerer may read for one question: the passages' sentences, then their neighbours, nearest
        first and best-ranked passage first, up to `budget` sentences in all. Bounded by the budget, not by the
        length of the documents the passages come from (a 350 KB document has about 2,000 sentences)."""
        chosen: dict[tuple[str, int], Sentence] = {}
        spans = []  # the first and last sentence index of each passage in its document, in rank order
        for p in passages:
            own = self.sentences_in(p)
            for s in own:
                chosen.setdefault((s.path, s.index), s)
            if own:
                spans.append((p.path, own[0].index, own[-1].index))
        longest = max((len(self.sentences[path]) for path, _, _ in spans), default=0)
        for distance in range(1, longest):
            for path, first, last in spans:
                for i in (first - distance, last + distance):
                    if len(chosen) >= budget:
                        return list(chosen.values())
                    if 0 <= i < len(self.sentences[path]) and (path, i) not in chosen:
                        chosen[(path, i)] = replace(self.sentences[path][i])
        return list(chosen.values())

    def window(self, s: Sentence) -> str:
        """The sentence and the one before it, which often holds the subject of "she", "he", "it"."""
        sents = self.sentences[s.path]
        return " ".join(x.text for x in sents[max(0, s.index - 1) : s.index + 1])

    def context(self, s: Sentence) -> str:
        """The text leading up to a sentence: where the people and things it refers to were last named."""
        return self.texts[s.path][max(0, s.span.start - NAME_CONTEXT_CHARS) : s.span.end]

    def speaker(self, s: Sentence) -> set[str]:
        """Who is quoted in the sentence: the terms of that person's name, or empty."""
        return self._speakers[(s.path, s.index)]

    def _find_speaker(self, s: Sentence) -> set[str]:
        """Who is quoted in the sentence's paragraph ("…," Gebre said; "The skater said, …"), or in the paragraphs
        before it when the quote runs on from them."""
        text = self.texts[s.path]
        start = text.rfind("\n", 0, s.span.start) + 1
        for _ in range(QUOTE_PARAGRAPHS):
            end = text.find("\n", start)
            paragraph = text[start : end if end >= 0 else len(text)]
            m = SPEECH.search(paragraph)
            if m and (m.group(1) or m.group(2)):
                return terms_of(m.group(1) or m.group(2))
            if m:  # "the Frenchman said": the one Frenchman; "The skater said": whom the text before is about
                described = re.match(r"[Tt]he\s+([\w-]+)", m.group())
                country = country_of(described.group(1)) if described else ""
                if country and self.national(country):
                    return set(self.national(country))
                return self._last_subject(s.path, start + m.start())
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

    def _last_subject(self, path: str, end: int) -> set[str]:
        """The first person named (outside quotation marks) in the last sentence before offset `end` of the
        document that names anyone, looking back at most NAME_CONTEXT_CHARS."""
        text = self.texts[path]
        before = [s for s in self.sentences[path] if end - NAME_CONTEXT_CHARS <= s.span.start < end]
        for sentence in reversed(before):
            said = re.sub(r"[“\"][^”\"]*[”\"]", " ", text[sentence.span.start : min(sentence.span.end, end)])
            named = [m for m in self.mentions(said) if m.person]
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
