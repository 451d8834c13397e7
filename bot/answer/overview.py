"""What an overview ("what is this about?", "summarize it", "what are these documents about?") reads and says: each
document's summary, its key sentences chosen once at indexing (bot.answer.summary), quoted. Measured against the
LLM's overviews written from the documents, the quoted key sentences were right more often and never named what the
documents lack, so an overview is answered with them, with or without an LLM.

An overview of one document ("what is the regatta report about?", "summarize it") is answered with the key sentences
of the document retrieved for it; with several documents indexed, an overview of them all ("what are these files
about?": the form `collection`, bot.answer.forms) is answered with the first key sentence of each document.

The other long forms (a list, why or how, …) are the LLM's to write; where none of its sentences holds, the sentences
closest to the question, quoted, are the answer (`quoted_closest`): on the 114 questions of the overview rounds, 59
were right where 51 were, and 26 answered but not right where 19 were; where one holds, the closest sentences it
does not cite follow it (`with_closest`): 92 of the 164 overview-round questions right where 87 were
(docs/architecture.md).

A list of the people a document names ("which people are mentioned?", "who's quoted and what are their jobs?") is
answered with the sentences that first name each of them in full, quoted (`quoted_people`): the small LLM names one or
two of them, and the sentence that introduces a person is the one that says who they are."""

from collections.abc import Callable

from bot.answer.corpus import Corpus
from bot.answer.forms import OVERVIEWS
from bot.answer.summary import Summary
from bot.lang import vocabulary
from bot.types import Draft, Passage, Question, Sentence
from index.text.pipeline import parse

REPLIES = vocabulary().replies
PEOPLE_NOUNS = vocabulary().people_nouns  # "which people are mentioned?" asks for the people a document names
PERSON_NOUNS = vocabulary().person_nouns  # "which skaters are mentioned?" too
ASKING = frozenset({"which", "what"})  # the words before such a noun
PEOPLE_FORMS = frozenset({"list", "role"})  # "who was on the team and what did each of them do?" reads as roles
QUOTED_SENTENCES = 4  # a long answer quoted where the LLM's does not hold: as many sentences as the LLM may write
PEOPLE_SENTENCES = 6  # a list of the people named quotes this many sentences at most (the documents of the overview
# rounds name five to eight people each)
FEW_SENTENCES = 2  # a long answer of fewer sentences that hold is followed by the closest ones it does not cite
MAX_DOCUMENTS = 8  # an overview of every document quotes this many documents' first key sentence at most
Summaries = Callable[[], dict[str, Summary]]  # the documents' summaries by path, as the bot knows them now


def summary_passages(asked: Question, passages: list[Passage], summaries: dict[str, Summary]) -> list[Passage]:
    """An overview question's passages: the key sentences of each document retrieved (best first), for an overview
    of every document the first key sentence of the others too (up to MAX_DOCUMENTS in all), then the passages
    retrieved. A question asking for the people named: the sentences introducing them in the best document's, then
    the passages retrieved. Another question's passages are those retrieved."""
    form = asked.form
    if asks_for_people(asked) and passages and passages[0].path in summaries:
        return [*summaries[passages[0].path].people[:PEOPLE_SENTENCES], *passages]
    if form not in OVERVIEWS:
        return passages
    retrieved = list(dict.fromkeys(p.path for p in passages))
    room = MAX_DOCUMENTS - len(retrieved) if form == "collection" else 0
    others = [path for path in summaries if path not in retrieved][: max(0, room)]
    key = [p for path in retrieved if path in summaries for p in summaries[path].sentences]
    firsts = [summaries[path].sentences[0] for path in others if summaries[path].sentences]
    return key + firsts + passages


def quoted_overview(form: str, passages: list[Passage], corpus: Corpus, summaries: dict[str, Summary]) -> Draft | None:
    """The overview of the document asked about (that of the best passage): its key sentences, quoted and cited; or,
    for an overview of every document (`form` "collection") when several are indexed, the first key sentence of each
    document read. None when there are no key sentences to quote."""
    if not passages:
        return None
    best = passages[0].path
    if form == "collection" and corpus.documents > 1:
        paths = list(dict.fromkeys(p.path for p in passages))[:MAX_DOCUMENTS]
        quoted = [_sentences(corpus, summaries[path].sentences[:1]) for path in paths if path in summaries]
        return _quoted([s for sentences in quoted for s in sentences], "overview_each")
    summary = summaries.get(best)
    key = _sentences(corpus, summary.sentences) if summary else []
    return _quoted(key, "overview_one" if corpus.documents == 1 else "overview_many")


def quoted_closest(closest: list[Sentence], documents: int) -> Draft | None:
    """A long answer made of the sentences closest to the question (bot.answer.read.SentenceReader.closest), quoted
    and cited in the documents' order. None when there are none."""
    return _quoted(closest, "quoted_one" if documents == 1 else "quoted_many", "the closest sentences, quoted")


def with_closest(held: Draft, quoted: Draft, documents: int, n: int) -> Draft:
    """A long answer of few sentences (`held`: the LLM's that hold) and then the closest sentences (`quoted`) it does
    not already cite, quoted and cited, up to `n` cited sentences in all."""

    def cited(s: Sentence) -> bool:
        return any(q.path == s.path and q.span.start <= s.span.start and s.span.end <= q.span.end for q in held.quotes)

    more = [s for s in quoted.quotes if not cited(s)][: max(0, n - len(held.quotes))]
    if not more:
        return held
    also = REPLIES["also_one" if documents == 1 else "also_many"]
    reason = f"{held.reason}; then the closest sentences it does not cite, quoted"
    quoted_more = _marked(more, first=len(held.quotes) + 1)
    return Draft(f"{held.text} {also}{quoted_more}", False, [*held.quotes, *more], reason=reason)


def asks_for_people(asked: Question) -> bool:
    """Whether a question asks for the people the documents name: a list or each one's part asked with a noun for
    people ("which people are mentioned?", "who are the ppl named in this") or "which" and a noun for what a person
    is or does ("which skaters are mentioned?": bot/lang/en/people.toml), or each one's part asked with "who" ("who
    was on the team and what did each of them do?"); naming nobody itself ("what part did Glenn play?" asks for one
    person's). A "who" read as a list is as often one person ("who put in the planning application")."""
    if asked.form not in PEOPLE_FORMS or asked.names:
        return False
    return (asked.form == "role" and asked.kind == "who") or _names_people(asked.text)


def _names_people(question: str) -> bool:
    tokens = list(parse(question))
    after_wh = {t.lemma_.lower() for t, prior in zip(tokens[1:], tokens, strict=False) if prior.lower_ in ASKING}
    return any(t.lower_ in PEOPLE_NOUNS for t in tokens) or not after_wh.isdisjoint(PERSON_NOUNS)


def quoted_people(passages: list[Passage], corpus: Corpus, summaries: dict[str, Summary], n: int) -> Draft | None:
    """The people the document asked about (that of the best passage) names, each quoted where the document first
    names them in full (chosen at indexing: `Summary.people`), up to `n` sentences that name the most of them, in the
    document's order. None when it names nobody."""
    summary = summaries.get(passages[0].path) if passages else None
    if summary is None or not summary.people:
        return None
    chosen = sorted(_sentences(corpus, summary.people[:n]), key=lambda s: s.span.start)
    return _quoted(chosen, "quoted_one" if corpus.documents == 1 else "quoted_many", "the people the document names")


def _sentences(corpus: Corpus, passages: tuple[Passage, ...]) -> list[Sentence]:
    return [s for p in passages for s in corpus.sentences_in(p)]


def _quoted(
    sentences: list[Sentence], intro: str, reason: str = "the documents' key sentences, quoted"
) -> Draft | None:
    if not sentences:
        return None
    return Draft(f"{REPLIES[intro]}{_marked(sentences)}", False, sentences, reason=reason)


def _marked(sentences: list[Sentence], first: int = 1) -> str:
    """The sentences quoted verbatim, each with its marker: “…” [first] “…” [first + 1] …"""
    return " ".join(f"“{s.text.strip()}” [{n}]" for n, s in enumerate(sentences, first))
