"""Follow-up questions without an LLM: a question that leans on earlier turns becomes one that stands alone.

Read with the spaCy pipeline, against the previous question made standalone the same way (so a chain of
follow-ups keeps its subject) and the previous answer:
- pronouns ("how tall is he", "his first coach") become the person last talked about;
- "that", "it", "this" become the thing the previous question was about ("where did that happen" → "where did the
  final happen");
- fragments ("and moretti?", "and the final?", "what about friday?") take the place of the person, value or
  thing of the previous question;
- bare follow-ups ("why not", "how so", "what happened next") ask about what the previous answer said
  ("who was fourth" → "Moretti" → "Why was Moretti fourth?").

The words these readings turn on (pronouns, leads, closed classes) are data: bot/lang/."""

from typing import Literal

from pydantic import Field
from spacy.tokens import Doc

from bot.answer.cite import without_markers
from bot.answer.reply import is_decline
from bot.lang import vocabulary
from bot.types import Turn
from index.text.pipeline import parse

VOCABULARY = vocabulary()
# Closed classes: a fragment naming one member ("what about friday?") swaps the member the question named. English
# ones and the domains' (bot/lang/domains/).
CLOSED_CLASS = frozenset().union(
    *VOCABULARY.closed_classes.values(),
    VOCABULARY.ordinals,
    VOCABULARY.weekdays,
    VOCABULARY.months,
    VOCABULARY.number_words,
    VOCABULARY.countries,
    VOCABULARY.demonyms,
)
PERSON_PRONOUNS = VOCABULARY.person_pronouns
THING_PRONOUNS = VOCABULARY.thing_pronouns
WH_WORDS = VOCABULARY.wh_words
# Phrases, as their words: a follow-up's leads ("and what about"), the interjections before one ("ok"), bare whys
LEADS = [lead.split() for lead in VOCABULARY.follow_up_leads]  # in order: a longer lead before its start
INTERJECTIONS = frozenset(VOCABULARY.follow_up_interjections)
BARE_WHY = frozenset(VOCABULARY.bare_why)
SHORT_ANSWER_WORDS = 6  # a phrase answer ("Moretti [1].") can stand in for the question's wh-word
MAX_TURNS_BACK = 4  # how many earlier questions are made standalone to read a follow-up


class BotTurn(Turn):
    """A turn the bot said, kept as data where it is recorded (the CLI's and the chat's conversations, evaluation):
    the reply, its words without the [n] markers (which number its citations, nothing a follow-up reads), and
    whether it declined (a decline or an unsure reply: nothing a follow-up can build on). A client's history is text
    (`Turn`): the same two are read from its words."""

    role: Literal["assistant"] = "assistant"
    plain: str = Field(exclude=True)  # written out, it is a turn like any other: {"role", "content"}
    declined: bool = Field(exclude=True)

    @classmethod
    def of(cls, reply: str, abstained: bool) -> "BotTurn":
        """The turn for a reply the bot gave (an Answer's `answer` and `abstained`, or a Draft's text and flag)."""
        return cls(content=reply, plain=without_markers(reply), declined=abstained)


def exchange(question: str, reply: str, abstained: bool) -> list[Turn]:
    """The two turns a question and the bot's reply add to a conversation."""
    return [Turn(role="user", content=question), BotTurn.of(reply, abstained)]


def said(turn: Turn) -> tuple[str, bool]:
    """What an assistant turn said, without [n] markers, and whether it declined."""
    if isinstance(turn, BotTurn):
        return turn.plain, turn.declined
    return without_markers(turn.content), is_decline(turn.content)


def condense_question(question: str, history: list[Turn], people) -> str:
    """`people(text)` lists the person names in a text, in order. Without history the question is returned as
    it is."""
    statement, _, asked = question.rpartition(". ")
    if statement and asked.rstrip().endswith("?"):
        # "Moretti led at halfway. Where did he finish?": the statement is context
        history = [*history, Turn(role="user", content=statement + ".")]
        question = asked
    if not any(t.role == "user" for t in history):
        return question
    previous, answer = _previous(history, people)
    mentions = _mentions(history, previous)
    person = _last_person(mentions, people)
    doc = parse(question)
    names_in_question = people(question)

    if is_bare_why(doc):
        return _why(previous, answer) or question
    lead = _lead_end(doc)
    rest = question[lead:] if lead else question
    if lead and not _opens_question(rest):
        # a fragment: "And Moretti?", "and the final?", "what about friday?" → the previous question, changed
        fragment = rest.strip(" ?.!")
        if not people(fragment):  # "what about his coach?" → "Moretti's coach"
            fragment = _replace_pronoun(parse(fragment), mentions, people)
        return _swap_into(previous, fragment, people) or _capitalize(f"What about {fragment}?")
    resolved = _replace_pronoun(parse(rest), mentions, people)
    resolved = _replace_thing(parse(resolved), previous, people)
    if lead and not names_in_question and resolved == rest:
        names = people(previous)
        if names:  # "And who came next?" after a question about Moretti
            return f"{_capitalize(resolved.rstrip(' ?'))} ({', '.join(names)})?"
    if resolved == question and not names_in_question and person and len(doc) <= 4 and _opens_question(question):
        # "what happened next?" after a question about Moretti: about him still
        return f"{_capitalize(question.rstrip(' ?'))} for {person}?"
    return _capitalize(resolved)


def is_bare_why(doc: Doc) -> bool:
    """A question that is only a why ("why not?", "and how come?"): it asks why the previous answer holds."""
    words = [t.lower_ for t in doc if not t.is_space]
    words = words[1:] if words[:1] == ["and"] else words
    words = words[:-1] if words[-1:] == ["?"] else words
    return " ".join(words) in BARE_WHY


def _lead_end(doc: Doc) -> int:
    """Where a follow-up's words start after its lead ("ok, and what about the final?" → "the final?"), or 0 when it
    opens with none. The lead's own words are the vocabulary's; commas after it go with it."""
    words = [t.lower_ for t in doc]
    starts = [1, 0] if words[:1] and words[0] in INTERJECTIONS else [0]
    for start in starts:  # "so what about" after the interjection "so"; "so where" with the lead "so"
        start += words[start : start + 1] == [","]
        lead = next((lead for lead in LEADS if words[start : start + len(lead)] == lead), None)
        if lead is not None:
            end = start + len(lead)
            while end < len(doc) and doc[end].text == ",":
                end += 1
            return doc[end].idx if end < len(doc) else len(doc.text)
    return 0


def _previous(history: list[Turn], people) -> tuple[str, tuple[str, bool]]:
    """The last question, made standalone against the turns before it, and the answer it got (`said`)."""
    turns = history[-2 * MAX_TURNS_BACK :]
    last = max(i for i, t in enumerate(turns) if t.role == "user")
    answer = next((said(t) for t in turns[last + 1 :] if t.role == "assistant"), ("", False))
    earlier = turns[:last]
    question = turns[last].content
    standalone = condense_question(question, earlier, people) if earlier else question
    return standalone, answer


def _mentions(history: list[Turn], previous: str) -> list[str]:
    """What a pronoun looks back over, most recent first: the last answer, the last question made standalone
    (`previous`), then the turns before. A reply that declined or was unsure comes after the question it answered:
    the sentence it quotes is only the closest the documents came, and may be about someone else."""
    last = max(i for i, t in enumerate(history) if t.role == "user")
    replies = [said(t) for t in history[last + 1 :] if t.role == "assistant"]
    answered = [text for text, declined in replies if not declined]
    unsure = [text for text, declined in replies if declined]
    return [*answered, previous, *unsure, *(t.content for t in reversed(history[:last]))]


def _last_person(mentions: list[str], people, besides: list[str] = ()) -> str | None:
    """The person most recently named in `mentions` (most recent first), other than `besides`."""
    for text in mentions:
        names = [n for n in people(text) if not any(_same_person(n, b) for b in besides)]
        if names:
            return names[0]
    return None


def _same_person(name: str, other: str) -> bool:
    """ "Kaori Sakamoto" and "Sakamoto" name the same person: the same last word (the surname)."""
    return name.lower().split()[-1:] == other.lower().split()[-1:]


def _replace_pronoun(doc: Doc, mentions: list[str], people) -> str:
    """The first third-person pronoun becomes the person it stands for ("her first race" → "Figueroa's first
    race"); later ones may mean someone else ("what did she give him?"). After a name the question gives, a subject
    or possessive pronoun is that person ("did Sakamoto say she was nervous"); an object pronoun there ("what did
    Liu say to her"), or any before it ("how far behind her was Sakamoto"), is someone else: the person last named
    but not one the question names. spaCy tells possessive "her" (PRP$) from object."""
    for t in doc:
        if t.lower_ in PERSON_PRONOUNS:
            named = people(doc.text)
            is_object = t.tag_ == "PRP" and t.dep_ in {"dobj", "pobj", "dative", "conj"}
            if not is_object and any(0 <= doc.text.find(n) < t.idx for n in named):
                return doc.text
            person = _last_person(mentions, people, besides=named)
            if person is None:
                return doc.text
            name = f"{person}'s" if t.tag_ == "PRP$" else person
            return doc[: t.i].text_with_ws + name + t.whitespace_ + doc[t.i + 1 :].text_with_ws
    return doc.text


def _replace_thing(doc, previous: str, people) -> str:
    """ "where did that happen" → "where did the final happen": a pronoun standing for a thing (not a determiner,
    "that race") becomes the thing the previous question was about."""
    thing = _topic(previous, people)
    for t in doc:
        does_it = t.head.lemma_ == "do" and t.dep_ == "dobj"  # "why did she do that": an act, not a thing
        if t.lower_ in THING_PRONOUNS and t.dep_ != "det" and t.pos_ == "PRON" and thing and not does_it:
            return doc[: t.i].text_with_ws + thing + t.whitespace_ + doc[t.i + 1 :].text_with_ws
    return doc.text


def _topic(question: str, people) -> str:
    """The last noun phrase of a question that is neither a question word, a pronoun nor a person: "the final" in
    "Where was Moretti after the final?"; after a possessive only what is owned ("Figueroa's first race" → "first
    race")."""
    chunks = [
        c
        for c in parse(question).noun_chunks
        if c.root.pos_ in {"NOUN", "PROPN"} and not any(t.lower_ in WH_WORDS for t in c) and not people(c.text)
    ] or [
        c[i + 1 :]
        for c in parse(question).noun_chunks
        for i, t in enumerate(c)
        if (t.dep_ == "poss" or t.tag_ == "POS") and i + 1 < len(c) and c.root.pos_ == "NOUN"
    ]
    return chunks[-1].text if chunks else ""


def _swap_into(question: str, fragment: str, people) -> str | None:
    """Put the fragment where its like stood in the previous question: a person for a person ("and Moretti?"), a
    member of a closed class for one ("what about friday?", "and the third?"), else a noun phrase for the question's
    topic ("and the final?")."""
    new_people, old_people = people(fragment), people(question)
    if new_people and fragment.strip() == new_people[0]:
        # "what did she do for Sakamoto?" "and Glenn?": the fragment stands for the person the pronoun left open
        first_name = min((question.find(n) for n in old_people), default=len(question))
        pronoun = next((t for t in parse(question) if t.lower_ in PERSON_PRONOUNS and t.tag_ == "PRP"), None)
        if pronoun is not None and pronoun.idx < first_name:
            return question[: pronoun.idx] + new_people[0] + question[pronoun.idx + len(pronoun) :]
        return question.replace(old_people[0], new_people[0], 1) if old_people else None
    fragment_words = fragment.split()
    closed = [w for w in fragment_words if w.lower() in CLOSED_CLASS]
    old_closed = [t for t in parse(question) if t.lower_ in CLOSED_CLASS]
    if closed and old_closed and len(fragment_words) == len(closed):
        t = old_closed[0]
        return question[: t.idx] + closed[0] + question[t.idx + len(t) :]
    topic = _topic(question, people)
    if topic and fragment and not _opens_question(fragment):
        article, _, noun = fragment.partition(" ")
        opens_with_determiner = topic.split()[0].lower() in VOCABULARY.topic_determiners
        if noun.strip() and article.lower() in VOCABULARY.articles and not opens_with_determiner:
            fragment = noun.lstrip()  # "Figueroa's first race" → "Figueroa's last race"
        return question.replace(topic, fragment, 1)
    return None


def _why(previous: str, answer: tuple[str, bool]) -> str | None:
    """A bare why after "Who was fourth?" answered "Moretti [1]." → "Why was Moretti fourth?"."""
    doc = parse(previous.rstrip(" ?"))
    plain, declined = answer
    phrase = plain.strip(" .")
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    wh = next((t for t in doc if t.lower_ in WH_WORDS), None)
    short = phrase and len(phrase.split()) <= SHORT_ANSWER_WORDS and not declined
    if wh is not None and wh.dep_ in {"nsubj", "nsubjpass"} and short:
        rest = doc[root.i + 1 :].text
        if root.lemma_ == "be":
            return f"Why {root.text} {phrase} {rest}?".replace("  ", " ")
        return f"Why did {phrase} {root.lemma_} {rest}?".replace("  ", " ")
    if wh is not None and wh.i == 0 and wh.lower_ == "how" and len(doc) > 1 and doc[1].pos_ in {"ADJ", "ADV"}:
        return None  # "How tall is he?" has no why
    if wh is not None and wh.i == 0:
        return f"Why {doc[1:].text}?"  # "How did Figueroa's first race go?" → "Why did Figueroa's first race go?"
    return f"Why {previous[:1].lower()}{previous[1:].rstrip(' ?')}?"


def _opens_question(text: str) -> bool:
    first = text.split(None, 1)[0].lower() if text.split() else ""
    return first in WH_WORDS or first in VOCABULARY.follow_up_auxiliaries


def _capitalize(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:]


def recent_turns(history: list[Turn], n: int) -> list[Turn]:
    """The last `n` questions of `history` with the answers they got ([] for n = 0)."""
    users = [i for i, t in enumerate(history) if t.role == "user"]
    return history[users[-min(n, len(users))] :] if n and users else []


def previous_turn(history: list[Turn]) -> str:
    """The conversation's last question and the answer it got ([n] markers dropped), as the reader reads them before
    a follow-up; "" without history."""
    users = [i for i, t in enumerate(history) if t.role == "user"]
    if not users:
        return ""
    answer = next((said(t)[0] for t in history[users[-1] + 1 :] if t.role == "assistant"), "")
    return f"{history[users[-1]].content} {answer}".strip()
