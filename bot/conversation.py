"""Follow-up questions without an LLM: a question that leans on earlier turns becomes one that stands alone.

Read with the spaCy pipeline, against the previous question made standalone the same way (so a chain of
follow-ups keeps its subject) and the previous answer:
- pronouns ("how old is she", "her short program") become the person last talked about;
- "that", "it", "this" become the thing the previous question was about ("when was that" → "when was the short
  program");
- fragments ("and glenn?", "and the free skate?", "what about gold?") take the place of the person, value or
  thing of the previous question;
- bare follow-ups ("why?", "how come?", "what went wrong?") ask about what the previous answer said
  ("who got silver" → "Sakamoto" → "Why did Sakamoto get silver?")."""

import re

from bot.answer.language import COUNTRIES, DEMONYMS, MEDALS, MONTHS, NUMBER_WORDS, ORDINALS, WEEKDAYS
from bot.types import Turn
from index.text import parse

# Closed classes: a fragment naming one member ("what about gold?") swaps the member the question named.
CLOSED_CLASS = MEDALS | ORDINALS | WEEKDAYS | MONTHS | set(NUMBER_WORDS) | set(COUNTRIES) | set(DEMONYMS)
PERSON_PRONOUNS = {"she", "he", "her", "him", "his", "hers"}
THING_PRONOUNS = {"that", "it", "this"}
FOLLOW_UP_LEAD = re.compile(
    r"^\s*(?:(?:ok|okay|right|well|so)\b[\s,]*)?(?:and what about|and how about|what about|how about|and|but|also|so|then)\b"
    r"[\s,]*",
    re.IGNORECASE,
)
BARE_WHY = re.compile(r"^\s*(?:and\s+)?(?:why|why not|how come|how so|for what reason)\s*\??\s*$", re.IGNORECASE)
QUESTION_WORDS = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how"}
SHORT_ANSWER_WORDS = 6  # a phrase answer ("Sakamoto [1].") can stand in for the question's wh-word
MAX_TURNS_BACK = 4  # how many earlier questions are made standalone to read a follow-up
CITATION_MARKERS = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def condense_question(question: str, history: list[Turn], people) -> str:
    """`people(text)` lists the person names in a text, in order. Without history the question is returned as
    it is."""
    statement, _, asked = question.rpartition(". ")
    if statement and asked.rstrip().endswith("?"):
        # "Sakamoto was second after the short program. Where did she end up?": the statement is context
        history = [*history, Turn(role="user", content=statement + ".")]
        question = asked
    if not any(t.role == "user" for t in history):
        return question
    previous, answer = _previous(history, people)
    person = _last_person(history, people)
    doc = parse(question)
    names_in_question = people(question)

    if BARE_WHY.match(question):
        return _why(previous, answer) or question
    lead = FOLLOW_UP_LEAD.match(question)
    rest = question[lead.end() :] if lead else question
    if lead and not _opens_question(rest):
        # a fragment: "And Glenn?", "and the free skate?", "what about gold?" → the previous question, changed
        fragment = rest.strip(" ?.!")
        if person and not people(fragment):  # "what about her age?" → "Teixeira's age"
            fragment = _replace_pronoun(parse(fragment), person)
        return _swap_into(previous, fragment, people) or _capitalize(f"What about {fragment}?")
    resolved = rest
    if person and person not in names_in_question:
        resolved = _replace_pronoun(parse(resolved), person)
    resolved = _replace_thing(parse(resolved), previous, people)
    if lead and not names_in_question and resolved == rest:
        names = people(previous)
        if names:  # "And who stepped in later?" after a question about Sakamoto
            return f"{_capitalize(resolved.rstrip(' ?'))} ({', '.join(names)})?"
    if resolved == question and not names_in_question and person and len(doc) <= 4 and _opens_question(question):
        # "what went wrong?" after a question about Sakamoto: about her still
        return f"{_capitalize(question.rstrip(' ?'))} for {person}?"
    return _capitalize(resolved)


def _previous(history: list[Turn], people) -> tuple[str, str]:
    """The last question, made standalone against the turns before it, and the answer it got."""
    turns = history[-2 * MAX_TURNS_BACK :]
    last = max(i for i, t in enumerate(turns) if t.role == "user")
    answer = next((t.content for t in turns[last + 1 :] if t.role == "assistant"), "")
    earlier = turns[:last]
    question = turns[last].content
    standalone = condense_question(question, earlier, people) if earlier else question
    return standalone, answer


def _last_person(history: list[Turn], people) -> str | None:
    """The person most recently named: the last answer first, then the question before it, and so on."""
    for turn in reversed(history):
        names = people(turn.content)
        if names:
            return names[0]
    return None


def _replace_pronoun(doc, person: str) -> str:
    """The first third-person pronoun becomes the person ("her short program" → "Glenn's short program"); later
    ones may mean someone else ("what did she say to him?"). spaCy tells possessive "her" (PRP$) from object."""
    for t in doc:
        if t.lower_ in PERSON_PRONOUNS:
            name = f"{person}'s" if t.tag_ == "PRP$" else person
            return doc[: t.i].text_with_ws + name + t.whitespace_ + doc[t.i + 1 :].text_with_ws
    return doc.text


def _replace_thing(doc, previous: str, people) -> str:
    """ "when was that" → "when was the short program": a pronoun standing for a thing (not a determiner, "that
    race") becomes the thing the previous question was about."""
    thing = _topic(previous, people)
    for t in doc:
        if t.lower_ in THING_PRONOUNS and t.dep_ != "det" and t.pos_ == "PRON" and thing:
            return doc[: t.i].text_with_ws + thing + t.whitespace_ + doc[t.i + 1 :].text_with_ws
    return doc.text


def _topic(question: str, people) -> str:
    """The last noun phrase of a question that is neither a question word, a pronoun nor a person: "the short
    program" in "Where was Sakamoto after the short program?"; after a possessive only what is owned ("Glenn's
    short program" → "short program")."""
    chunks = [
        c
        for c in parse(question).noun_chunks
        if c.root.pos_ in {"NOUN", "PROPN"} and c.root.lower_ not in QUESTION_WORDS and not people(c.text)
    ] or [
        c[i + 1 :]
        for c in parse(question).noun_chunks
        for i, t in enumerate(c)
        if (t.dep_ == "poss" or t.tag_ == "POS") and i + 1 < len(c) and c.root.pos_ == "NOUN"
    ]
    return chunks[-1].text if chunks else ""


def _swap_into(question: str, fragment: str, people) -> str | None:
    """Put the fragment where its like stood in the previous question: a person for a person ("and Glenn?"), a
    medal or placing for one ("what about gold?"), else a noun phrase for the question's topic ("and the free
    skate?")."""
    new_people, old_people = people(fragment), people(question)
    if new_people and fragment.strip() == new_people[0]:
        return question.replace(old_people[0], new_people[0], 1) if old_people else None
    fragment_words = fragment.split()
    closed = [w for w in fragment_words if w.lower() in CLOSED_CLASS]
    old_closed = [m for m in re.finditer(r"[\w-]+", question) if m.group().lower() in CLOSED_CLASS]
    if closed and old_closed and len(fragment_words) == len(closed):
        m = old_closed[0]
        return question[: m.start()] + closed[0] + question[m.end() :]
    topic = _topic(question, people)
    if topic and fragment and not _opens_question(fragment):
        if not re.match(r"(?i)(?:the|a|an|this|that|his|her|their)\b", topic):
            fragment = re.sub(r"(?i)^(?:the|a|an)\s+", "", fragment)  # "Glenn's short program" → "Glenn's free skate"
        return question.replace(topic, fragment, 1)
    return None


def _why(previous: str, answer: str) -> str | None:
    """ "why?" after "Who got silver?" answered "Sakamoto [1]." → "Why did Sakamoto get silver?"."""
    doc = parse(previous.rstrip(" ?"))
    phrase = re.sub(r"\s*\[\d+\]", "", answer).strip(" .")
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    wh = next((t for t in doc if t.lower_ in QUESTION_WORDS), None)
    short = phrase and len(phrase.split()) <= SHORT_ANSWER_WORDS and "doesn't say" not in phrase
    if wh is not None and wh.dep_ in {"nsubj", "nsubjpass"} and short:
        rest = doc[root.i + 1 :].text
        if root.lemma_ == "be":
            return f"Why {root.text} {phrase} {rest}?".replace("  ", " ")
        return f"Why did {phrase} {root.lemma_} {rest}?".replace("  ", " ")
    if wh is not None and wh.i == 0 and wh.lower_ == "how" and len(doc) > 1 and doc[1].pos_ in {"ADJ", "ADV"}:
        return None  # "How old is she?" has no why
    if wh is not None and wh.i == 0:
        return f"Why {doc[1:].text}?"  # "How did Glenn's short program go?" → "Why did Glenn's short program go?"
    return f"Why {previous[:1].lower()}{previous[1:].rstrip(' ?')}?"


def _opens_question(text: str) -> bool:
    first = text.split(None, 1)[0].lower() if text.split() else ""
    return first in QUESTION_WORDS or first in {"is", "was", "are", "were", "did", "does", "do", "has", "had", "can"}


def _capitalize(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:]


def previous_turn(history: list[Turn]) -> str:
    """The conversation's last question and the answer it got ([n] markers dropped), as the reader reads them before
    a follow-up; "" without history."""
    users = [i for i, t in enumerate(history) if t.role == "user"]
    if not users:
        return ""
    answer = next((t.content for t in history[users[-1] + 1 :] if t.role == "assistant"), "")
    return f"{history[users[-1]].content} {CITATION_MARKERS.sub('', answer)}".strip()
