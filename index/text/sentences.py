"""A parsed sentence as the answerer reads it: its tokens (offsets, lemma, part of speech, dependency and head) and
its named entities, stored per chunk as compact JSON. spaCy's own DocBin was measured against it (docs/architecture.md):
the same size, twelve times slower to read back, and every chunk the answerer reads is read back."""

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Token:
    start: int  # character offsets in the document
    end: int
    lemma: str
    pos: str  # universal part of speech: PROPN, NOUN, VERB, NUM…
    dep: str  # dependency relation to the head: nsubj, dobj, appos, poss, compound…
    head: int  # index of the head token within the sentence (itself for the root)
    ent: str = ""  # entity label when the token is inside a named entity (PERSON, NORP, GPE, MONEY…)


@dataclass(frozen=True)
class Entity:
    start: int
    end: int
    label: str


@dataclass
class ParsedSentence:
    start: int
    end: int
    tokens: list[Token] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)

    def text(self, document: str) -> str:
        return document[self.start : self.end]


def sentences_to_json(sentences: list[ParsedSentence]) -> str:
    """Compact JSON: offsets as numbers, one list per token, so a chunk's metadata stays small."""
    return json.dumps(
        [
            {
                "s": s.start,
                "e": s.end,
                "t": [[t.start, t.end, t.lemma, t.pos, t.dep, t.head, t.ent] for t in s.tokens],
                "n": [[e.start, e.end, e.label] for e in s.entities],
            }
            for s in sentences
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def sentences_from_json(text: str) -> list[ParsedSentence]:
    return [
        ParsedSentence(s["s"], s["e"], [Token(*t) for t in s["t"]], [Entity(*e) for e in s["n"]])
        for s in json.loads(text)
    ]
