"""Questions as people type them: "who's ana figeroa" → "Who is Ana Figueroa?".

The documents' own names (spaCy's entities, stored at indexing) and words are the dictionary. A question's words
and word groups are matched against it case-insensitively, without accents and with typo tolerance (rapidfuzz),
and written back as the documents write them; contractions are expanded. The answerer downstream then sees a
question in the documents' spelling and casing, whatever the user typed."""

import logging
import unicodedata
from collections import Counter
from collections.abc import Iterable

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA
from spacy.matcher import PhraseMatcher
from spacy.util import filter_spans

from bot.answer.terms import without_possessive
from bot.lang import vocabulary
from bot.types import Span
from index.text.pipeline import nlp, parse
from index.text.sentences import ParsedSentence

log = logging.getLogger(__name__)

VOCABULARY = vocabulary()
STOP_WORDS = VOCABULARY.english_stop_words  # spaCy's, unchanged: the name finder's test of a common word
# Words that tell a name is a person's (bot/lang/en/people.toml, with the domains' additions)
PERSON_VERBS = VOCABULARY.person_verbs
PERSON_NOUNS = VOCABULARY.person_nouns
PERSON_OBJECT_VERBS = VOCABULARY.person_object_verbs
NAME_LABELS = VOCABULARY.name_labels
NUMERIC_LABELS = VOCABULARY.numeric_labels

NAME_MIN_SCORE = 85  # rapidfuzz ratio for a typed name: "glen" ~ "Glenn" (89), "sakamotto" ~ "Sakamoto" (94)
LONG_WORD_CHARS = 8  # other words are corrected by one edit, or two from this length on
WORD_PAIR_MIN_SCORE = 75  # each typed word of a name against the name's word: "burg" ~ "berg"
MIN_PARTICLE_USES = 2
MIN_FUZZY_CHARS = 4  # shorter words must match exactly (after case and accents)
MAX_NAME_WORDS = 4
# Contractions a chat question uses; the pipeline tokenizes them ("who" + "'s") but the answerer reads whole words
# (bot/lang/en/contractions.toml): the words each contracted verb follows.
CONTRACTED = {
    "is": frozenset(VOCABULARY.contracted_is),
    "did": frozenset(VOCABULARY.contracted_did),
    "are": frozenset(VOCABULARY.contracted_are),
}
VERB_OF = {"'s": "is", "s": "is", "'d": "did", "'re": "are"}  # the contracted forms spaCy splits off
# The forms of "is" written without an apostrophe that are contractions ("whats"): not "its".
WITHOUT_APOSTROPHE = VOCABULARY.contracted_without_apostrophe
# A typed question opening with one of these gets its question mark.
QUESTION_START = VOCABULARY.wh_words | VOCABULARY.question_auxiliaries
ROLE_OF = frozenset({"of", "for", "to"})  # "the coach of Figueroa" is not the one coach the documents name


def fold(text: str) -> str:
    """Lowercase, accents and possessive dropped, curly apostrophes straightened: the form names are compared in."""
    text = unicodedata.normalize("NFKD", text.replace("’", "'")).encode("ascii", "ignore").decode()
    return without_possessive(text.lower().strip()).removesuffix("'")


class Lexicon:
    """The names and words of the indexed documents, each in the spelling and case the documents use."""

    def __init__(self, sentences: Iterable[tuple[str, ParsedSentence]]):
        names: dict[str, Counter[str]] = {}
        words: dict[str, Counter[str]] = {}
        sentences_list = list(sentences)
        for text, parsed in sentences_list:
            for e in parsed.entities:
                if e.label in NAME_LABELS:
                    surface = without_possessive(text[e.start : e.end]).strip()
                    names.setdefault(fold(surface), Counter())[surface] += 1
                    for part in surface.split() if e.label == "PERSON" else []:  # "Kaori", "Sakamoto" too
                        if part[:1].isupper() and fold(part) not in STOP_WORDS:
                            names.setdefault(fold(part), Counter())[part] += 1
            for n, t in enumerate(parsed.tokens):
                word = text[t.start : t.end]
                if word.isalpha() and (n or word.islower()):  # a sentence's first word is capitalized anyway
                    words.setdefault(fold(word), Counter())[word] += 1
        self.names = {k: c.most_common(1)[0][0] for k, c in names.items() if k}
        self.people = _people(sentences_list)
        # the lower-case words inside people's names ("dos", "de la", "van der") may join two parts of one name
        self.particles = _particles(sentences_list)
        self._people_matcher: PhraseMatcher | None = None  # made when first used; not kept with the knowledge
        self.lemmas = {fold(t.lemma) for _, parsed in sentences_list for t in parsed.tokens}
        # a word the documents ever write in lower case stays lower case ("marathon" though "Porto Marathon")
        self.words = {k: next((w for w in c if w.islower()), c.most_common(1)[0][0]) for k, c in words.items() if k}
        self.roles = _roles(sentences_list, self)
        self._long_names = [k for k in self.names if len(k) >= MIN_FUZZY_CHARS]
        self._long_words = [k for k in self.words if len(k) >= MIN_FUZZY_CHARS]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_people_matcher": None}

    def people_in(self, text: str) -> list[Span]:
        """The people the documents name, where `text` names them (full names first: "Iñaki de la Fuente", then
        "De la Fuente", "Sakamoto"). Text in the documents' spelling: a linked question, a sentence, an answer.
        Names are matched as whole tokens (spaCy's PhraseMatcher), not inside a hyphenated word."""
        if not self.people:
            return []
        if self._people_matcher is None:
            self._people_matcher = PhraseMatcher(nlp().vocab)
            self._people_matcher.add("PERSON", list(nlp().tokenizer.pipe(sorted(self.people))))
        doc = nlp().make_doc(text)
        whole = [doc[start:end] for _, start, end in self._people_matcher(doc) if _whole_words(text, doc[start:end])]
        found: list[Span] = []
        for name in filter_spans(whole):
            if found and self._joined_by_particles(text, found[-1].end, name.start_char):  # "João Pedro dos Santos"
                found[-1] = Span(text[found[-1].start : name.end_char], found[-1].start, name.end_char)
            else:
                found.append(Span(name.text, name.start_char, name.end_char))
        return found

    def _joined_by_particles(self, text: str, end: int, start: int) -> bool:
        """Whether only one or two particles ("dos", "de la"), between spaces, part two names in `text`."""
        gap = text[end:start]
        words = gap.split()
        return gap[:1].isspace() and gap[-1:].isspace() and 0 < len(words) <= 2 and set(words) <= self.particles

    def link(self, question: str) -> str:
        """The question with its names and words spelled as the documents spell them, and "the director" named
        when the documents give that role to one person."""
        text = self._name_roles(expand_contractions(question.strip()))
        tokens = list(parse(text))
        out, i = [], 0
        while i < len(tokens):
            replaced = self._name_at(tokens, i)
            if replaced:
                surface, used = replaced
                end = tokens[i + used - 1]
                out.append((tokens[i].idx, end.idx + len(end.text), surface))
                i += used
                continue
            word = self._word(tokens[i].text, tokens[i].lemma_)
            if word:
                out.append((tokens[i].idx, tokens[i].idx + len(tokens[i].text), word))
            i += 1
        for start, end, surface in reversed(out):
            text = text[:start] + surface + text[end:]
        text = text[:1].upper() + text[1:]
        first = text.split(None, 1)[0].lower() if text.split() else ""
        if first in QUESTION_START and text[-1:] not in "?.!":
            text += "?"
        if text != question:
            log.info("question read as %r", text)
        return text

    def _name_roles(self, text: str) -> str:
        """ "what did the director decide" → "what did Ana Figueroa decide" (the one festival director the documents
        name); not "the coach of Figueroa", whose coach that is being the question."""
        if not self.roles:
            return text
        doc = nlp().make_doc(text)
        named = []  # (start, end, person)
        for t in doc:
            if t.lower_ != "the" or not t.whitespace_:
                continue
            for role in (doc[t.i + 1 : t.i + 3], doc[t.i + 1 : t.i + 2]):  # "the race director", "the director"
                last = role[-1] if len(role) else None
                if last is None or last.lower_ not in self.roles or not all(w.is_alpha for w in role):
                    continue
                after = doc[last.i + 1] if last.i + 1 < len(doc) else None
                if after is not None and (
                    (not last.whitespace_ and after.text[:1] in "'’-") or (last.whitespace_ and after.lower_ in ROLE_OF)
                ):
                    continue  # "the director's", "the director of the race"
                if len(role) == 2 and not role[0].whitespace_:
                    continue
                named.append((t.idx, last.idx + len(last), self.roles[last.lower_]))
                break
        for start, end, person in reversed(named):
            text = text[:start] + person + text[end:]
        return text

    def _name_at(self, tokens, i: int) -> tuple[str, int] | None:
        """The longest run of words from `i` that names something in the documents: (its surface, words used)."""
        for n in range(min(MAX_NAME_WORDS, len(tokens) - i), 0, -1):
            run = tokens[i : i + n]
            if not all(t.is_alpha or t.text in {"-", "'s", "’s"} for t in run) or run[-1].text in {"-", "'s", "’s"}:
                continue
            if all(t.lower_ in STOP_WORDS for t in run):
                continue
            if n == 1 and (self.words.get(fold(run[0].text)) or "A").islower():
                continue  # a common noun the documents also write in lower case: "marathon", not "Porto Marathon"
            typed = " ".join(t.text for t in run)
            key = fold(typed)
            surface = self.names.get(key)
            edges_open = run[0].lower_ not in STOP_WORDS and run[-1].lower_ not in STOP_WORDS
            if surface is None and len(key) >= MIN_FUZZY_CHARS and edges_open:
                best = process.extractOne(key, self._long_names, scorer=fuzz.ratio, score_cutoff=NAME_MIN_SCORE)
                # word for word: "de la torra" ~ "de la Torre", but "is van der meer" is not "Inès Van der Meer"
                if best and _word_for_word(key.split(), best[0].split()):
                    surface = self.names[best[0]]
            if surface and surface != typed:
                return surface, n
            if surface:
                return None  # already as the documents write it
        return None

    def _word(self, word: str, lemma: str = "") -> str | None:
        """A typo of a word the documents use ("olympcs"), or its capitalized form ("tiktok" → "TikTok")."""
        if not word.isalpha() or word.lower() in STOP_WORDS:
            return None
        key = fold(word)
        known = self.words.get(key)
        if known:
            return known if known[:1].isupper() and known != word else None
        if len(key) < MIN_FUZZY_CHARS + 1 or fold(lemma) in self.words or fold(lemma) in self.lemmas:
            return None  # "skates" is a form of "skate", not a typo of "skater"
        # one edit (two for long words), a swap of two letters counting as one: "dealy" → "delay", "olympcs"
        edits = 1 if len(key) < LONG_WORD_CHARS else 2
        best = process.extractOne(key, self._long_words, scorer=OSA.distance, score_cutoff=edits)
        return self.words[best[0]] if best else None


def _people(sentences: list[tuple[str, ParsedSentence]]) -> set[str]:
    """The names that are people, decided over all their mentions: spaCy's label is one vote, and being the
    subject of a verb only people do ("Solvang said", "Gebre finished fifth") or carrying an age ("Kiprop, 27,",
    "25-year-old Sakamoto") two more, since the small model often takes a foreign name for a place or a company.
    Votes go to the name's last word, so "Yonas Gebre" and "Gebre" are decided together."""
    votes: dict[str, Counter[str]] = {}
    surfaces: set[str] = set()
    # a word the documents also write in lower case mid-sentence is a common noun ("Porto Marathon", "his marathon")
    common = {
        text[t.start : t.end].lower()
        for text, parsed in sentences
        for n, t in enumerate(parsed.tokens)
        if n and text[t.start : t.end].islower()
    }
    for text, parsed in sentences:
        for start, end, label in _name_mentions(parsed):
            surface = without_possessive(text[start:end]).strip()
            if any(ch.isdigit() for ch in surface) or not surface[:1].isupper() or label in NUMERIC_LABELS:
                continue  # "Van der Berg 15,000 euros": the model ran a name and a sum together
            if surface.split()[-1].lower() in common:
                continue
            surfaces.add(surface)
            tally = votes.setdefault(surface.split()[-1], Counter())
            # a full name is where the model is most often right: "Tom Haldane" PERSON outweighs "Haldane" GPE;
            # a single word opening a sentence or a quotation is capitalized wherever it is ("“Dude, I know…")
            opening = start == parsed.start or text[start - 1 : start] in "‘“\"'"
            weight = 1.5 if label == "PERSON" and " " in surface else 0 if opening and " " not in surface else 1
            tally[label] += weight if label else 0
            if _acts_like_a_person(text, parsed, start, end):
                tally["PERSON"] += 2
    people = {
        surface
        for surface in surfaces
        if (tally := votes[surface.split()[-1]])["PERSON"]
        > max((n for k, n in tally.items() if k != "PERSON"), default=0)
    }
    others = surfaces - people
    particles = {part.lower() for name in people for part in name.split() if part.islower()}  # "de", "van"
    parts = {
        part
        for name in people
        for part in name.split()
        if part[:1].isupper() and len(part) > 1 and part.lower() not in STOP_WORDS | particles and part not in others
    }
    return people | parts


def _roles(sentences: list[tuple[str, ParsedSentence]], lexicon: "Lexicon") -> dict[str, str]:
    """Role nouns the documents give to exactly one person: "Chief arbiter Mehmet Öztürk", "The race director,
    Ana Figueiredo" → {"arbiter": "Mehmet Öztürk", "director": "Ana Figueiredo"}."""
    holders: dict[str, set[str]] = {}
    for text, parsed in sentences:
        for person in lexicon.people_in(text[parsed.start : parsed.end]):
            start, end = parsed.start + person.start, parsed.start + person.end
            inside = [n for n, t in enumerate(parsed.tokens) if start <= t.start and t.end <= end]
            if not inside:
                continue
            root = next((n for n in inside if parsed.tokens[n].head not in inside), inside[-1])
            related = [parsed.tokens[root].head] if parsed.tokens[root].dep == "appos" else []
            related += [n for n, t in enumerate(parsed.tokens) if t.head == root and t.dep == "compound"]
            for n in related:
                t = parsed.tokens[n]
                if n not in inside and t.pos == "NOUN" and t.lemma.lower() in PERSON_NOUNS:
                    holders.setdefault(t.lemma.lower(), set()).add(person.text)
    full = {role: max(people, key=len) for role, people in holders.items()}
    return {role: full[role] for role, people in holders.items() if all(p in full[role] for p in people)}


def _name_mentions(parsed: ParsedSentence) -> list[tuple[int, int, str]]:
    """Named entities (start, end, label), widened over proper nouns just before them ("Ana" + "Figueiredo"), and
    runs of proper nouns the model gave no entity ("" label)."""
    found: list[tuple[int, int, str]] = []
    run: list = []
    entities = {e.start: e for e in parsed.entities}
    for t in [*parsed.tokens, None]:
        if t is not None and t.pos == "PROPN" and not t.ent:
            run.append(t)
            continue
        entity = entities.get(t.start) if t is not None else None
        if run and entity is not None and t.start - run[-1].end <= 1:
            found.append((run[0].start, entity.end, entity.label))  # "Ana Figueiredo"
            entities.pop(t.start)
        elif run:
            found.append((run[0].start, run[-1].end, ""))
        run = []
    return found + [(e.start, e.end, e.label) for e in entities.values()]


def _acts_like_a_person(text: str, parsed: ParsedSentence, start: int, end: int) -> bool:
    inside = [n for n, t in enumerate(parsed.tokens) if start <= t.start and t.end <= end]
    if not inside:
        return False
    root = next((n for n in inside if parsed.tokens[n].head not in inside or parsed.tokens[n].head == n), inside[-1])
    t = parsed.tokens[root]
    head = parsed.tokens[t.head]
    if t.dep in {"nsubj", "nsubjpass"} and head.lemma.lower() in PERSON_VERBS:
        return True
    if t.dep == "pobj" and head.dep == "agent" and parsed.tokens[head.head].lemma.lower() in PERSON_VERBS:
        return True
    if t.dep == "dobj" and head.lemma.lower() in PERSON_OBJECT_VERBS:
        return True
    if t.dep in {"appos", "compound"} and head.lemma.lower() in PERSON_NOUNS:
        return True  # "race director Ana Figueiredo"
    children = [c for c in parsed.tokens if c.head == root and c is not t]
    return any(
        (c.dep == "appos" and (c.pos == "NUM" or c.lemma.lower() in PERSON_NOUNS))
        or (c.dep == "compound" and c.lemma.lower() in PERSON_NOUNS)
        or "year-old" in text[c.start : c.end]
        for c in children
    )


def _whole_words(text: str, span) -> bool:
    """A name is not part of a longer word or a hyphenated one ("Liu-Glenn")."""
    before, after = text[span.start_char - 1 : span.start_char], text[span.end_char : span.end_char + 1]
    return not any(c.isalnum() or c in "_-" for c in before + after)


def _particles(sentences: list[tuple[str, ParsedSentence]]) -> set[str]:
    """Short lower-case words the documents only ever write before a capitalized word, more than once: "dos",
    "de la", "van der" inside names ("João Pedro dos Santos", "Palacio de la Ría")."""
    inside: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    documents = {text: None for text, _ in sentences}
    for line in (line for text in documents for line in text.splitlines() if line.strip()):  # spaCy: 1M at most
        words = [t for t in nlp().make_doc(line) if not t.is_space]
        short = [t.is_alpha and t.is_lower and len(t) <= 3 for t in words]
        anywhere.update(t.text for t, is_short in zip(words, short, strict=True) if is_short)
        for i, t in enumerate(words):  # one or two short words, then a capitalized one
            if t.text[:1].isupper() and i and short[i - 1] and words[i - 1].whitespace_:
                run = [words[i - 1]] + ([words[i - 2]] if i > 1 and short[i - 2] and words[i - 2].whitespace_ else [])
                inside.update(w.text for w in run)
    return {w for w, n in inside.items() if n == anywhere[w] and n >= MIN_PARTICLE_USES and w not in STOP_WORDS}


def _word_for_word(typed: list[str], known: list[str]) -> bool:
    return len(typed) == len(known) and all(
        fuzz.ratio(a, b) >= WORD_PAIR_MIN_SCORE for a, b in zip(typed, known, strict=True)
    )


def expand_contractions(text: str) -> str:
    """ "who's" → "who is", "how'd" → "how did", "whats" → "what is", "how tall's he" → "how tall is he"."""
    doc = nlp().make_doc(text)
    pieces = []
    for t in doc:
        verb = VERB_OF.get(t.lower_.replace("’", "'"))
        before = doc[t.i - 1].lower_ if t.i and not doc[t.i - 1].whitespace_ else None
        ends = bool(t.whitespace_) or t.i + 1 == len(doc) or doc[t.i + 1].text.startswith("?")
        if verb is None or before is None:
            pieces.append(t.text_with_ws)
        elif (t.lower_ == "s" and before + "s" not in WITHOUT_APOSTROPHE) or (verb == "is" and not ends):
            pieces.append(t.text_with_ws)  # "its" is a word of its own
        elif before in CONTRACTED[verb] or (verb == "is" and t.i > 1 and doc[t.i - 2].lower_ == "how"):
            pieces.append(f" {verb}{t.whitespace_}")  # "how tall's he" too
        else:
            pieces.append(t.text_with_ws)
    return "".join(pieces)
