"""Checks that a phrase answers the question, read from the parse indexing stored (spaCy entities and dependencies).

Each check is small and named; they only ever remove a candidate. Named-entity labels are decided over all of an
entity's mentions in the documents (the model errs on single mentions), and a label only vetoes when it contradicts
what was asked: a missing label proves nothing."""

from collections import Counter

from bot.answer.question import AnswerType
from index.text import ParsedSentence, Token
from index.text.parse import Entity

# Labels a phrase of each asked type can never carry ("where was it played?" is not answered by a date).
NUMBERS = {"DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "PERCENT", "QUANTITY"}
# Labels a phrase of each asked type can never carry ("where was it played?" is not answered by a date). Only
# kinds the model rarely confuses: it often takes a foreign name for a place or an organization, and back.
CONFLICTING = {
    AnswerType.PERSON: NUMBERS | {"EVENT", "NORP", "WORK_OF_ART", "LAW", "LANGUAGE"},
    AnswerType.PLACE: NUMBERS,
    AnswerType.NATIONALITY: NUMBERS,
    AnswerType.ORG: NUMBERS,
    AnswerType.TIME: {"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "MONEY", "PERCENT", "ORDINAL"},
    AnswerType.NUMBER: {"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "EVENT"},
}
SUBJECT_DEPS = {"nsubj", "csubj", "expl"}
PATIENT_DEPS = {"dobj", "nsubjpass", "dative", "attr", "oprd"}
SHARES_HEAD_ROLE = {"appos", "conj"}


class EntityLabels:
    """The label each entity text carries in most of its mentions across the documents."""

    def __init__(self, sentences: list[tuple[str, ParsedSentence]]):
        votes: dict[str, Counter[str]] = {}
        for text, parsed in sentences:
            for e in parsed.entities:
                votes.setdefault(_key(text[e.start : e.end]), Counter())[e.label] += 1
        self.labels = {k: c.most_common(1)[0][0] for k, c in votes.items()}

    def label(self, document: str, parsed: ParsedSentence, start: int, end: int) -> str | None:
        """The label of the entity the phrase at document offsets start..end lies in (by the entity's majority over
        all its mentions), or None. A name entity holding a number is not trusted: the model sometimes runs a
        name and the sum after it together ("Van der Berg 15,000 euros" as one PERSON)."""
        for e in parsed.entities:
            if min(end, e.end) > max(start, e.start) and self._well_formed(parsed, e):
                return self.labels.get(_key(document[e.start : e.end]), e.label)
        return None

    def inside_longer(self, parsed: ParsedSentence, start: int, end: int) -> bool:
        """The phrase is only part of a longer (well-formed) name: "French" in "the French Open"."""
        return any(
            e.start <= start and end <= e.end and (e.end - e.start) > (end - start) and self._well_formed(parsed, e)
            for e in parsed.entities
        )

    @staticmethod
    def _well_formed(parsed: ParsedSentence, e: Entity) -> bool:
        inside = [t for t in parsed.tokens if e.start <= t.start and t.end <= e.end]
        return e.label in NUMBERS or not any(t.pos == "NUM" for t in inside)


def type_agrees(asked: AnswerType, label: str | None) -> bool:
    return label is None or label not in CONFLICTING.get(asked, set())


def nominal(parsed: ParsedSentence, start: int, end: int, label: str | None) -> bool:
    """A person, place or team is named by a noun, not by an adjective of nationality ("Spanish", "American")."""
    found = tokens_in(parsed, start, end)
    # ("Avenida dos Aliados" is sometimes labelled NORP too: only a one-word NORP is taken for a nationality)
    return not found or not (
        label == "NORP" and (len(found) == 1 or parsed.tokens[_phrase_head(parsed.tokens, found)].pos == "ADJ")
    )


def tokens_in(parsed: ParsedSentence, start: int, end: int) -> list[int]:
    return [n for n, t in enumerate(parsed.tokens) if t.start < end and start < t.end]


def role(parsed: ParsedSentence, start: int, end: int) -> str:
    """The grammatical role of the phrase at start..end: "agent" (who does it: a subject, or "by X" of a passive),
    "patient" (whom it is done to), "person's" (a possessor or modifier of a person: "Belgium's Anaïs"), "modifier"
    (of anything else: "a TikTok video") or "oblique" (after another preposition: "behind Liu", "against Liu")."""
    found = tokens_in(parsed, start, end)
    if not found:
        return "oblique"
    head = _phrase_head(parsed.tokens, found)
    t = parsed.tokens[head]
    for _ in range(len(parsed.tokens)):  # "Liu and Glenn", "his compatriot Peter Wanjiru": the role of what it joins
        if any(x.head == head and x.dep == "relcl" for x in parsed.tokens):
            return "agent"  # "…Peter Wanjiru, who was second": the subject of its own relative clause
        if t.dep not in SHARES_HEAD_ROLE or t.head == head:
            break
        head = t.head
        t = parsed.tokens[head]
    if t.dep in SUBJECT_DEPS:
        return "agent"
    if t.dep in PATIENT_DEPS:
        return "patient"
    if t.dep in {"poss", "compound", "amod", "nmod"}:
        return "person's" if parsed.tokens[t.head].ent == "PERSON" else "modifier"
    if t.dep == "pobj":
        preposition = parsed.tokens[t.head]
        if preposition.lemma == "of" and parsed.tokens[preposition.head].ent == "PERSON":
            return "person's"  # "Zoë van den Heuvel of the Netherlands"
        return "agent" if preposition.dep == "agent" or preposition.lemma == "by" else "oblique"
    return "other"


LESSER_RESULTS = {
    "silver",
    "bronze",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "runner-up",
}


RANKING_WORDS = {"good", "well", "best", "fast", "high", "low", "bad", "worst"}
RESULT_NOUNS = {"medal", "place", "position", "spot", "prize", "podium"}


def ordinal_of_a_thing(parsed: ParsedSentence, start: int, end: int) -> bool:
    """An ordinal that counts things, not a result: "the fifth stage", "the third classical game" (but "finished
    fifth", "fifth place", "third best score")."""
    found = tokens_in(parsed, start, end)
    if len(found) != 1:
        return False
    t = parsed.tokens[found[0]]
    head = parsed.tokens[t.head]
    counted = t.dep in {"amod", "nummod", "compound"} and head.pos == "NOUN" and head.lemma.lower() not in RESULT_NOUNS
    # "the second best score" ranks, like "the second place": a superlative beside the ordinal makes it a ranking
    ranked = any(c.head in {found[0], t.head} and c.lemma.lower() in RANKING_WORDS for c in parsed.tokens)
    return counted and not ranked


def won_less(document: str, parsed: ParsedSentence, start: int, end: int) -> bool:
    """The person at start..end is said to win silver or finish second in the sentence: not who won ("Sakamoto was
    the favourite but made mistakes in his free skate to win silver" does not say she won the free skate)."""
    found = tokens_in(parsed, start, end)
    if not found:
        return False
    root = _phrase_head(parsed.tokens, found)
    if parsed.tokens[root].dep not in SUBJECT_DEPS:
        return False
    clause = subtree(parsed.tokens, parsed.tokens[root].head)
    for n in clause:
        t = parsed.tokens[n]
        if t.lemma in {"win", "finish", "take", "claim", "come", "end"}:
            objects = [m for m, c in enumerate(parsed.tokens) if c.head == n and c.dep not in SUBJECT_DEPS and m != n]
            for o in objects:  # "to win silver", "finished second", "to win the silver medal" (not "the fifth stage")
                said = {
                    document[parsed.tokens[m].start : parsed.tokens[m].end].lower() for m in subtree(parsed.tokens, o)
                }
                result = parsed.tokens[o].lemma.lower() in RESULT_NOUNS or said <= LESSER_RESULTS | {"the", "a"}
                if result and said & LESSER_RESULTS:
                    return True
    return False


def subtree(tokens: list[Token], root: int) -> set[int]:
    """The indexes of a token and of every token that hangs from it."""
    inside = {root}
    for _ in range(len(tokens)):
        grown = inside | {n for n, t in enumerate(tokens) if t.head in inside and n != t.head}
        if grown == inside:
            break
        inside = grown
    return inside


def asked_role(question_doc) -> str | None:
    """What a who-question asks for: the doer ("Who consoled Sakamoto?"), the one it was done to ("Who did Glenn
    protect?", "Who was consoled?"), or nothing in particular ("Who is the race director?")."""
    for t in question_doc:
        if t.lower_ in {"who", "whom"} and t.head.lemma_ != "be":
            if t.dep_ in SUBJECT_DEPS:
                return "agent"
            if t.dep_ in {"dobj", "nsubjpass", "pobj"}:
                return "patient"
    return None


def role_agrees(asked: AnswerType, wanted: str | None, found: str) -> bool:
    """A doer or a done-to is not named after "behind" or "against"; a place or a team is not the possessor of a
    person ("Belgium's Anaïs" says where she is from, not where it happened)."""
    if asked is AnswerType.PERSON:
        return not (wanted and found == "oblique")
    return asked is not AnswerType.PLACE or found != "person's"  # "Arbeláez of Cordillera-Ruta" is his team


def _phrase_head(tokens: list[Token], found: list[int]) -> int:
    """The token of the phrase whose head lies outside it."""
    inside = set(found)
    for n in found:
        if tokens[n].head not in inside or tokens[n].head == n:
            return n
    return found[-1]


def _key(text: str) -> str:
    return text.lower().replace("’", "'").removesuffix("'s").strip()
