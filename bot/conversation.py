"""Follow-up questions without an LLM: resolve "she", "his", "And Glenn?", "what about gold?" against the
people and terms of the previous turns, giving a question that stands on its own for retrieval."""

import re

from bot.answer.language import STOPWORDS, words
from bot.answer.question import CLOSED_CLASS
from bot.types import Turn

SUBJECT_PRONOUNS = {"she", "he", "they"}
OBJECT_PRONOUNS = {"her", "him", "them"}
POSSESSIVES = {"his", "her", "their", "hers", "theirs"}
FOLLOW_UP_LEAD = re.compile(
    r"^\s*(?:(?:ok|okay|right|well|so)\b[\s,]*)?(?:and what about|and how about|what about|how about|and|but|also|so|then)\b"
    r"[\s,]*",
    re.IGNORECASE,
)
WH = re.compile(
    r"^\s*(?:who|whom|whose|what|which|when|where|why|how|is|was|did|does|do|has|had|can|could)\b", re.IGNORECASE
)


def condense_question(question: str, history: list[Turn], people) -> str:
    """`people(text)` lists the person names in a text, in order. Without history the question is returned
    as it is; with it, pronouns become the person last talked about and fragments borrow the previous
    question's frame."""
    statement, _, asked = question.rpartition(". ")
    if statement and asked.rstrip().endswith("?"):
        # "Sakamoto was second after the short program. Where did she end up?": the statement is context
        history = [*history, Turn(role="user", content=statement + ".")]
        question = asked
    if not history:
        return question
    previous = [t.content for t in history if t.role == "user"]
    last_question = previous[-1] if previous else ""
    person = _last_person(history, people)
    names_in_question = people(question)

    lead = FOLLOW_UP_LEAD.match(question)
    rest = question[lead.end() :] if lead else question
    resolved = _replace_pronouns(rest, person) if person and person not in names_in_question else rest
    resolved = _replace_it(resolved, last_question)

    if lead and not WH.match(rest) and last_question:
        # a fragment: "And Glenn?", "what about gold?" → the previous question with the new subject
        swapped = _swap_into(last_question, resolved.strip(" ?.!"), people)
        return swapped or _capitalize(question if resolved == rest else f"What about {resolved.strip()}")
    if lead and not names_in_question and resolved == rest:
        names = people(last_question)
        if names:  # "And who stepped in later?" after a question about Sakamoto
            return f"{_capitalize(resolved.rstrip(' ?'))} ({', '.join(names)})?"
    return _capitalize(resolved)


def _last_person(history: list[Turn], people) -> str | None:
    """The person most recently named: the last answer first, then the question before it, and so on."""
    for turn in reversed(history):
        names = people(turn.content)
        if names:
            return names[0]
    return None


def _replace_pronouns(text: str, person: str) -> str:
    """Replace the first third-person pronoun by the person's name ("her short program" → "Glenn's short
    program"); later pronouns may mean someone else ("what did she say to him?")."""
    for w, pos in words(text):
        lower = w.lower()
        if lower in SUBJECT_PRONOUNS or lower in OBJECT_PRONOUNS or lower in POSSESSIVES:
            following = text[pos + len(w) :].lstrip()
            possessive = lower in POSSESSIVES - {"her"} or (
                lower == "her" and bool(re.match(r"[a-z]", following)) and not _is_verbish(following)
            )
            name = f"{person}'s" if possessive else person
            return text[:pos] + name + text[pos + len(w) :]
    return text


def _replace_it(text: str, previous: str) -> str:
    """ "And who had it before him?" after "Who's wearing the yellow jersey now?" → "who had the yellow jersey…"."""
    thing = _last_thing(previous)
    m = re.search(r"\bit\b(?!['’])", text)
    return text[: m.start()] + thing + text[m.end() :] if thing and m else text


def _last_thing(question: str) -> str:
    """The last "the …" noun phrase of a question: "the yellow jersey"."""
    found = ""
    for m in re.finditer(r"\bthe\s+", question):
        phrase = []
        for w in question[m.end() :].split():
            word = w.strip("?.,!")
            if not word.islower() or word in STOPWORDS or word in {"now", "today", "then", "again"} or len(phrase) == 3:
                break
            phrase.append(word)
            if word != w:
                break
        if phrase:
            found = "the " + " ".join(phrase)
    return found


def _is_verbish(text: str) -> bool:
    """After "her": a function word ("to", "after", "did") or a verb means "her" is an object, not a possessive."""
    first = text.split(None, 1)[0].lower().strip("?.,!") if text.split() else ""
    return first in STOPWORDS or first in {
        "to",
        "after",
        "when",
        "at",
        "in",
        "on",
        "from",
        "with",
        "for",
        "about",
        "that",
        "and",
        "win",
        "won",
        "finish",
        "finished",
        "beat",
        "before",
    }


def _swap_into(question: str, fragment: str, people) -> str | None:
    """When the fragment is just a person or a closed-class word (a medal, a placing), put it where the old
    one stood in the previous question; otherwise the fragment is a new topic (None)."""
    new_people, old_people = people(fragment), people(question)
    if new_people and old_people and fragment.strip() == new_people[0]:
        return question.replace(old_people[0], new_people[0], 1)
    frag_closed = [w for w, _ in words(fragment) if w.lower() in CLOSED_CLASS]
    old_closed = [(w, pos) for w, pos in words(question) if w.lower() in CLOSED_CLASS]
    if frag_closed and old_closed and len(words(fragment)) == len(frag_closed):
        w, pos = old_closed[0]
        return question[:pos] + frag_closed[0] + question[pos + len(w) :]
    return None


def _capitalize(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:]
