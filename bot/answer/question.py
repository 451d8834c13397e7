"""What a question asks for: the expected answer type, the names it is about, and its key terms."""

import re
from dataclasses import dataclass, field
from enum import StrEnum

from bot.answer.language import (
    COUNTRIES,
    DEMONYMS,
    MEDALS,
    MONTHS,
    NAME_PARTICLES,
    NUMBER_WORDS,
    ORDINALS,
    ORG_WORDS,
    STOPWORDS,
    WEEKDAYS,
    content_terms,
    term,
    words,
)


class AnswerType(StrEnum):
    PERSON = "person"
    NUMBER = "number"
    AGE = "age"
    TIME = "time"
    PLACE = "place"
    NATIONALITY = "nationality"
    ORG = "organization"
    MEDAL = "medal"
    PLACING = "placing"
    QUOTE = "quote"
    NAME = "name"
    REASON = "reason"
    ANY = "any"


# First match wins; patterns look at the lower-cased question.
TYPE_PATTERNS: list[tuple[AnswerType, str]] = [
    (AnswerType.AGE, r"\bhow old\b|\bwhat(?:'s| is| was)? (?:\w+'s |her |his |their )?age\b|\bage\b"),
    (
        AnswerType.QUOTE,
        r"\bwhat (?:exactly |else )?did .* (?:say|tell|write|comment|post)\b|\bwhat (?:were|was) .*\bwords\b"
        r"|\bhow did .* (?:describe|put it|react|respond|explain|express|sum)\b|\binto words\b|\bquote\b|\bin (?:his|her|their) own words\b"
        r"|\bwhat .*\b(?:reaction|response)\b",
    ),
    (  # "Did Glenn finish on the podium?" is answered by where she finished; so is "What was her ranking?"
        AnswerType.PLACING,
        r"^(?!.*\b(?:expect|favou?r|tipped|predict|hop))(?:did|was|is|were|has|had)\b.*\b(?:podium|medal|finish\w*"
        r"|place[ds]?)\b|\b(?:ranking|ranked)\b",
    ),
    (
        AnswerType.NUMBER,
        r"\bhow (?:many|much|long|far|fast|big|high|tall|steep|deep|wide)\b|\bby how\b|\bwhat (?:score|number|margin|"
        r"amount|percentage|total|time did|time was|distance|temperature|prize)\b|\bhow (?:hot|cold|warm|heavy|tall)\b|\bwhat (?:was|is|were) (?:the|his|her|their) (?:\w+ )?(?:time|score|margin|total|distance|temperature|prize)\b|\bwhat (?:was|is|were) the (?:score|margin|number|total|amount|distance|temperature|prize)\b|\bwhich (?:score|number)\b"
        r"|\bwhat (?:was|is|were) \w+(?: \w+)?['’]s (?:\w+ ){0,3}(?:score|time|margin|total|price|fee|salary|prize)\b"
        r"|\b(?:what|how much) (?:was|is|were|did|does) (?:\w+ ){0,4}(?:cost|pay|paid|charge|earn)\b",
    ),
    (
        AnswerType.NAME,
        r"\bnick-?names?\b|\bwhat (?:are|is|were|was) (?:they|the \w+|\w+) (?:called|known as|nicknamed)\b",
    ),
    (AnswerType.TIME, r"^when\b|\b(?:what|which) (?:\w+ )?(?:day|date|year|month|time of)\b|\bon what\b"),
    (
        AnswerType.PLACING,
        r"\b(?:what|which) (?:place|position|rank|ranking|placing|spot)\b.*\b(?:finish|end|come|"
        r"place|rank|get|take|earn)|\bwhere did .* (?:finish|place|rank|end up|come|stand|sit|lie)\b|\bhow did .* (?:finish|place|"
        r"rank)\b|\bwhat (?:place|position) did\b",
    ),
    (AnswerType.MEDAL, r"\b(?:what|which) (?:medal|colou?r)\b|\bwhat kind of medal\b"),
    (
        AnswerType.NATIONALITY,
        r"\b(?:what|which) (?:country|nation|nationality)\b|^where (?:is|was|are|were|does|do|did) .* from\b|\bfrom which\b",
    ),
    (
        AnswerType.ORG,
        r"\b(?:what|which) (?:team|club|organi[sz]ation|company|brand|sponsor|federation|platform|"
        r"app|website|outlet|site)\b(?!-)|\b(?:skate|play|run|compete|race|ride)s? for\b",
    ),
    (
        AnswerType.PLACE,
        r"^where\b|\b(?:what|which) (?:city|town|venue|state|region|place|location|continent|street)\b",
    ),
    (
        AnswerType.PERSON,
        r"^who(?:m|se)?\b|\b(?:what|which) (?:\w+ ){0,2}(?:skater|athlete|person|woman|man|runner|rider|cyclist|"
        r"driver|swimmer|player|competitor|rival|coach|winner|champion|name|team-?mate|medalist|medallist)s?\b",
    ),
    (
        AnswerType.REASON,
        r"^why\b|\bwhat (?:caused|led|made|happened)\b|\bhow come\b|\bfor what reason\b"
        r"|\bwhat (?:went wrong|kept|stopped|prevented|cost)\b",
    ),
]

YES_NO_QUOTE = re.compile(
    r"\s*(?:did|does|do|has|have|had|was|is)\s.*\b(?:say|said|tell|told|admit|mention|think|feel|describe|explain)\b"
)
# Questions that try to give the bot orders instead of asking about the documents.
INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b.*\b(?:instruction|prompt|rule|previous|above|context|"
    r"guideline|everything)s?\b|\byou are now\b|\bact as\b|\bpretend\b|\b(?:reveal|print|show|repeat|output)\b.*"
    r"\b(?:system|prompt|instructions)\b|^\s*(?:system|assistant)\s*:|\bjailbreak\b|\bdeveloper mode\b"
    r"|\brespond (?:only )?with\b|\b(?:say|write|answer) (?:that|exactly)\s+\w|\btell me a (?:joke|story|poem)\b",
    re.IGNORECASE | re.DOTALL,
)

# Closed classes: a question naming one member is not answered by a sentence about another.
GENDERS = {term(w) for w in ("men", "women")}  # "man", "woman" once lemmatized
CLOSED_CLASS = MEDALS | ORDINALS | WEEKDAYS | MONTHS | set(NUMBER_WORDS) | set(COUNTRIES) | set(DEMONYMS)


@dataclass
class Question:
    text: str
    answer_type: AnswerType
    terms: list[str]  # content terms, comparable form
    names: list[list[str]] = field(default_factory=list)  # name groups in the question, each as terms
    closed: list[str] = field(default_factory=list)  # closed-class terms and numbers that must be matched
    surface: dict[str, str] = field(default_factory=dict)  # term → the word as written
    type_word: str | None = None  # the term naming what is asked for: "country" in "which country…"
    unit: str | None = None  # a pattern the numeric answer must match: "how many miles" → miles
    nouns: list[str] = field(default_factory=list)  # terms used as nouns ("the president", "many miles")
    describe: bool = False  # "Who is Amber Glenn?": a description of the person is the answer
    roles: list[str] = field(default_factory=list)  # "coach" in "Who is Gebre's coach?"
    topic: str = ""  # the question without its question words and names: what it is about
    relation: str | None = None  # the verb of "Who recorded…", "Who finished third?"
    genders: list[str] = field(default_factory=list)  # "men's", "women's": which of two events is meant
    margin: bool = False  # "By how much…", "how far behind…": a gap between two values is the answer
    ordered: list[tuple[str, str]] = field(default_factory=list)  # "his first marathon" → (first, marathon)
    earlier: bool = False  # "at the previous Olympics": about an earlier time than the event
    count: int = 1  # "Which two skaters…": how many answers are asked for
    reaction: bool = False  # "What did Glenn do when she noticed the camera?": what happened next answers it
    someone_else: bool = False  # "the man who helped Haldane": asks about someone described, not the one named
    addressee: bool = False  # "What did she say to him?": words said to someone in particular
    injection: bool = False
    subject_nouns: list[str] = field(default_factory=list)  # "delay" in "How long did the rain delay last?" (parse)
    asked_role: str | None = None  # "agent" for "Who consoled her?", "patient" for "Who did she console?" (parse)


def answer_type(question: str) -> AnswerType:
    """Read from the first question word on: in "What did Glenn do when…", "when" is not what is asked."""
    q = question.lower().replace("’", "'")
    if YES_NO_QUOTE.match(q):  # "Did Solvang say when he knew…": what he said answers it
        return AnswerType.QUOTE
    # "When Glenn noticed the camera, what did she do?": the question is the clause after the comma
    after_clause = re.search(
        r"^(?:when|while|after|before|once|if)\b[^,]*,\s*(?=(?:who|what|which|where|why|how)\b)", q
    )
    if after_clause:
        q = q[after_clause.end() :]
    first = re.search(r"\b(?:who|whom|whose|what|which|when|where|why|how)\b", q)
    q = q[first.start() :] if first else q
    for kind, pattern in TYPE_PATTERNS:
        if re.search(pattern, q):
            return kind
    return AnswerType.ANY


def analyse(question: str, proper_nouns: set[str]) -> Question:
    """Read the question against the corpus's names (`proper_nouns`: lower-case words the corpus capitalizes)."""
    tokens = words(question)
    names: list[list[str]] = []
    current: list[str] = []
    for i, (w, pos) in enumerate(tokens):
        base = re.sub(r"['’]s$", "", w)
        lower = base.lower()
        # a capitalized word the documents never use is a name they lack ("France"), unless it follows an
        # article or adjective like a common noun does ("the last Games")
        after_article = bool(
            re.search(r"\b(?:the|a|an|this|these|that|those|last|next|previous)\s+$", question[:pos], re.IGNORECASE)
        )
        is_name = (lower in proper_nouns and not (base.islower() and lower in ORG_WORDS)) or (
            i > 0 and base[:1].isupper() and lower not in _COMMON_CAPS and not after_article
        )
        if is_name and lower not in CLOSED_CLASS:
            current.append(term(base))
            if base != w:  # a possessive ends the name: "Japan's Kaori"
                names.append(current)
                current = []
            continue
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if current and w in NAME_PARTICLES and nxt[:1].isupper():  # "the Col de Sarrat"
            continue
        if current:
            names.append(current)
            current = []
    if current:
        names.append(current)
    ordered = [
        (m.group(1).lower(), term(m.group(2)))
        for m in ORDERED.finditer(question)
        if m.group(2).lower() not in STOP_NOUNS
    ]
    closed = [
        term(w)
        for w, _ in tokens
        if (w.lower() in CLOSED_CLASS and w.lower() not in {o for o, _ in ordered})
        or re.fullmatch(r"\d+(?:[.,:]\d+)*", w)
    ]
    for country in COUNTRIES:  # multi-word countries: "South Korea"
        if " " in country and country in question.lower():
            closed.append(country)
    kind = answer_type(question)
    count = _count(question)
    if count > 1:  # "which two": how many answers, not a number the answer must contain
        closed = [c for c in closed if NUMBER_WORDS.get(c) != count]
    return Question(
        text=question,
        answer_type=kind,
        terms=[
            t
            for t in content_terms(LIGHT_PHRASES.sub(" ", question))
            if not (kind is AnswerType.QUOTE and t in QUOTE_VERBS) and not (count > 1 and NUMBER_WORDS.get(t) == count)
        ],
        names=names,
        closed=closed,
        injection=bool(INJECTION.search(question)),
        surface={term(w): w for w, _ in tokens},
        type_word=term("nickname")
        if kind is AnswerType.NAME and "nickname" in question.lower()
        else _type_word(question),
        unit=_unit(question),
        nouns=[
            term(w)
            for m in NOUN_AFTER.finditer(question)
            for w in m.groups()
            if w and w not in STOP_NOUNS and not w.endswith("ly")  # "comments originally": an adverb
        ],
        describe=bool(DESCRIBE.fullmatch(question)),
        topic=_topic(question, names),
        genders=[t for t in {term(w) for w, _ in tokens} if t in GENDERS],
        margin=bool(MARGIN.search(question)),
        ordered=ordered,
        earlier=bool(EARLIER.search(question)),
        count=count,
        reaction=bool(
            re.search(r"\bwhat did\b.*\bdo\b", question, re.I)
            and re.search(r"\b(?:when|once|after|as soon as|as)\b", question, re.I)
        ),
        someone_else=bool(
            re.search(
                r"\b(?:the|a)\s+(?:\w+\s+)?(?:man|woman|person|one|guy|rider|runner|skater|athlete|competitor)\s+who\b",
                question,
                re.I,
            )
        ),
        addressee=bool(re.search(r"\b(?:say|said|tell|told|shout|shouted|yell|yelled)\s+to\s+\w", question, re.I)),
        relation=_relation(question, proper_nouns),
        roles=[term(w) for m in NOUN_AFTER.finditer(question) for w in m.groups() if w and w not in STOP_NOUNS]
        if ROLE.match(question)
        else [],
    )


# "his first marathon", "the second best score": an ordinal that picks one of several things
ORDERED = re.compile(rf"\b((?i:{'|'.join(ORDINALS)}))\s+([a-z]\w+)")
# "the last climb" is "the final climb"; "the first stage" may be "the opening stage"
ORDER_WORDS = {"last": {"last", "final"}, "first": {"first", "opening"}}
EARLIER = re.compile(
    r"\b(?i:previous|prior|former|previously|ever)\b|\b(?i:before)\s*\?|\b(?i:last)\s+[A-Z]|\b(?i:the|an?|his|her|their|its)\s+(?i:earlier|past)\s+[a-z]"
)
EARLIER_WORDS = {"previous", "prior", "earlier", "former", "past", "last", "ago", "before", "once"}
# "end up with", "set off from": verbs that carry no meaning of their own
LIGHT_PHRASES = re.compile(r"\b(?:end(?:ed|s)? up|set(?:s)? off|c[ao]me(?:s)? out|go(?:es)? on|went on)\b", re.I)
MARGIN = re.compile(
    r"\b(?:by how|margin|gap|difference|separat\w*|between|ahead|behind|clear|faster|slower|later|earlier|more than|less than)\b",
    re.I,
)
# "Who is Amber Glenn?": the question is only a name, so a description of that person answers it.
DESCRIBE = re.compile(r"\s*(?i:who)\s+(?i:is|was|are|were)\s+[A-ZÀ-Þ][\w'’-]*(?:\s+[A-ZÀ-Þ][\w'’-]*)*\s*\??\s*")
# "Who is Gebre's coach?", "Who was the runner-up…?": a role the answer must be said to hold.
ROLE = re.compile(r"\s*who\s+(?:is|was|are|were)\s+(?:the\s|\w+['’]s\s)", re.IGNORECASE)
# A word after a determiner, a possessive or a quantity is a noun: "the president", "Gebre's coach".
NOUN_AFTER = re.compile(
    r"(?:\b(?:the|a|an|his|her|its|their|my|your|our|many|much)|'s|’s)\s+([a-z]\w+)\b(?:\s+([a-z]\w+)\b)?"
    r"|\b(?:[Ww]hat|[Ww]hich)\s+([a-z]\w+)\s+(?:did|does|do|is|was|are|were|has|had)\b"
)
STOP_NOUNS = STOPWORDS | {"did", "does", "do", "is", "was", "are", "were", "has", "had", "be", "been"}
STOP_NOUNS |= {"guy", "man", "woman", "person", "people", "someone", "somebody", "one"}  # say no more than "who"
UNITS = {
    "money": r"[$€£]|\b(?:euros?|dollars?|pounds?|yen|francs?|cents?)\b",
    "time": r"\b(?:hours?|minutes?|seconds?|days?|weeks?|months?|years?)\b|\d+:\d+",
    "distance": r"\b(?:metres?|meters?|kilometres?|kilometers?|km|miles?|yards?|feet|foot|m)\b",
    "temperature": r"°|\bdegrees?\b",
}


def _count(question: str) -> int:
    m = re.search(
        r"\b(?:which|what|who (?:were|are) the|the)\s+(?:other\s+)?(two|three|four|five|both)\b", question, re.I
    )
    return 1 if not m else 2 if m.group(1).lower() == "both" else NUMBER_WORDS[m.group(1).lower()]


def _unit(question: str) -> str | None:
    """What a numeric answer must be measured in, when the question says so."""
    q = question.lower()
    if re.search(r"\bhow much\b.*\b(?:money|cash|prize|pay|paid|earn|cost|worth|get)\b|\bprize money\b", q):
        return UNITS["money"]
    if re.search(r"\bhow (?:hot|cold|warm)\b|\btemperature\b", q):
        return UNITS["temperature"]
    if re.search(r"\bhow (?:high|tall|deep)\b|\baltitude\b|\belevation\b", q):
        return r"\b(?:metres?|meters?|feet|ft|m)\b"
    if re.search(r"\bhow (?:far|wide)\b(?!\s+(?:behind|ahead|back|clear|off))|\bdistance\b", q):
        return UNITS["distance"]
    if re.search(r"\bhow long\b|\bwhat (?:was|is) (?:the|his|her|their|\w+'s) (?:\w+ )?time\b", q.replace("’", "'")):
        return UNITS["time"]
    m = re.search(r"\bhow many (\w+)", q)
    if m and m.group(1) in {"people", "persons", "spectators", "fans", "supporters", "visitors"}:
        return r"\b(?:people|persons|spectators|fans|supporters|visitors|crowd|attendance)\b"
    if m and m.group(1) not in {"times", "of"}:
        word = re.escape(m.group(1).rstrip("s"))
        return rf"\b{word}"
    return None


QUOTE_VERBS = {
    term(w)
    for w in (
        "say",
        "said",
        "describe",
        "described",
        "comment",
        "react",
        "respond",
        "tell",
        "told",
        "put",
        "words",
        "quote",
        "explain",
        "write",
        "wrote",
        "post",
        "reaction",
        "response",
    )
}


def _topic(question: str, names: list[list[str]]) -> str:
    name_terms = {t for name in names for t in name}
    kept = [
        w
        for w, _ in words(question)
        if term(re.sub(r"['’]s$", "", w)) not in name_terms
        and term(w) not in QUOTE_VERBS
        and w.lower() not in {"what", "did", "does", "do", "how", "about"}
    ]
    return " ".join(kept) or question


def _relation(question: str, proper_nouns: set[str]) -> str | None:
    """The verb a who-question asks about: "Who won…" → win, "Who was recording…" → record."""
    m = re.match(
        r"\s*who\s+(?:(?:is|was|were|are|has|had|did|does|will|would|could|then|also)\s+)?([a-z]\w+)\b",
        question,
        re.IGNORECASE,
    )
    if not m or m.group(1).lower() in STOP_NOUNS or m.group(1).lower() in proper_nouns:
        # "Which skaters…, who comforted her", "the riders who went down with him": the verb of the who-clause
        m = re.search(r"\w\s+who\s+(?:(?:had|has|have|was|were)\s+)?([a-z]\w+)\b", question)
        if not m or m.group(1).lower() in STOP_NOUNS:
            return None
    return term(m.group(1))


AUXILIARIES = {"is", "was", "are", "were", "did", "does", "do", "has", "had", "can", "could", "will", "would", "the"}


def _type_word(question: str) -> str | None:
    """ "Which country did…", "what music does…", "how hot…": the word that names the kind of answer wanted."""
    how = re.search(r"\bhow\s+(hot|cold|warm|far|long|old|tall|heavy|fast|big)\b", question, re.IGNORECASE)
    if how:
        return term(how.group(1))
    m = re.search(
        r"\b(?:what|which)\s+(\w+)\s+(?:did|does|do|is|was|are|were|has|had|will|can|could)\b", question, re.IGNORECASE
    )
    if not m or m.group(1).lower() in AUXILIARIES or m.group(1).lower().endswith("ly") or m.group(1).lower() == "else":
        return None  # "What exactly did…", "What else did…": no kind of answer named
    return term(m.group(1))


# Capitalized words in a question that are not names of anything in particular.
_COMMON_CAPS = {
    "i",
    "what",
    "who",
    "when",
    "where",
    "why",
    "how",
    "which",
    "did",
    "does",
    "is",
    "was",
    "the",
    "system",
    "assistant",
    "user",
    "ok",
    "okay",
    "please",
}
