"""Training and calibration examples for the reader: SQuAD questions (the 87,599 of SQuAD 1.1 train, and the dev
articles by the split in `../shared/squad/split.json`), the project's own development sets (news of events) and
BoolQ's yes/no questions, as (question, context, answer start, answer text), with no answer for the unanswerable
ones. Two kinds are made from SQuAD's paragraphs: negatives shaped like what retrieval brings (a question with
another paragraph of its own article) and follow-ups (a later question on the same paragraph whose subject became a
pronoun, read after the earlier question and its answer)."""

import gzip
import json
import random
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from bot.eval.datasets import (
    BOOLQ_DIR,
    DEFAULT_CORPUS,
    DEV_SETS_DIR,
    SQUAD_DIR,
    held_out_articles,
    squad_articles,
    squad_split,
)

SPAN_KINDS = {"factoid", "paraphrased", "fragment", "quote"}  # dev-set kinds whose answer is a phrase of the text


@dataclass(frozen=True)
class Example:
    question: str
    context: str
    answer_start: int | None  # None: the context does not answer the question
    answer: str
    article: str  # the SQuAD article title, or the dev set's name: folds are made by article
    history: str = ""  # the previous turn (its question and answer), read before the question
    yes_no: bool | None = None  # a yes/no question's answer (BoolQ); None for span questions


def squad_examples(titles: list[str], squad_dir: Path = SQUAD_DIR) -> list[Example]:
    examples = []
    for article in squad_articles(titles, squad_dir):
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = [] if qa.get("is_impossible") else qa["answers"]
                first = answers[0] if answers else None
                examples.append(
                    Example(
                        qa["question"].strip(),
                        paragraph["context"],
                        first["answer_start"] if first else None,
                        first["text"] if first else "",
                        article["title"],
                    )
                )
    return examples


def train_titles(squad_dir: Path = SQUAD_DIR) -> list[str]:
    split = squad_split(squad_dir)
    held = set(held_out_articles(squad_dir))
    return [t for t in split["train_from_v2.0"] + split["train_from_v1.1"] if t not in held]


def dev_set_examples(folder: Path = DEV_SETS_DIR, seed: int = 0) -> list[Example]:
    """The development sets' single questions as reader examples: an answerable phrase question becomes the
    paragraph holding its evidence with the first accepted answer found there; an unanswerable one is paired with a
    paragraph of its document (the whole document does not answer it, so no paragraph does)."""
    rng = random.Random(seed)
    examples = []
    for path in sorted(folder.glob("*.jsonl")):
        docs = path.with_suffix("")
        files = sorted(docs.glob("*.txt")) if docs.is_dir() else [DEFAULT_CORPUS]
        paragraphs = [p.strip() for f in files for p in re.split(r"\n\s*\n", f.read_text()) if len(p.strip()) > 80]
        for line in path.read_text().splitlines():
            item = json.loads(line)
            if "turns" in item or not paragraphs:
                continue
            if not item["answerable"]:
                examples.append(Example(item["question"], rng.choice(paragraphs), None, "", path.stem))
                continue
            if item.get("kind") not in SPAN_KINDS or not item.get("evidence"):
                continue
            example = _answerable(item, paragraphs, path.stem)
            if example:
                examples.append(example)
    return examples


def _answerable(item: dict, paragraphs: list[str], name: str) -> Example | None:
    for paragraph in paragraphs:
        at = paragraph.find(item["evidence"])
        if at < 0:
            continue
        for answer in item["answers"]:
            hit = re.search(rf"\b{re.escape(answer)}\b", item["evidence"], re.IGNORECASE)
            if hit:
                start = at + hit.start()
                return Example(item["question"], paragraph, start, paragraph[start : at + hit.end()], name)
    return None


def squad_train_examples(squad_dir: Path = SQUAD_DIR) -> list[list[list[Example]]]:
    """All of SQuAD 1.1 train (no article of it is in the dev files), as articles → paragraphs → questions."""
    with gzip.open(squad_dir / "train-v1.1.json.gz", "rt") as f:
        data = json.load(f)["data"]
    return [
        [
            [
                Example(
                    qa["question"].strip(),
                    p["context"],
                    qa["answers"][0]["answer_start"],
                    qa["answers"][0]["text"],
                    article["title"],
                )
                for qa in p["qas"]
            ]
            for p in article["paragraphs"]
        ]
        for article in data
    ]


def by_paragraph(examples: list[Example]) -> list[list[list[Example]]]:
    """Flat examples (in file order) grouped as articles → paragraphs → questions."""
    articles: dict[str, dict[str, list[Example]]] = {}
    for ex in examples:
        articles.setdefault(ex.article, {}).setdefault(ex.context, []).append(ex)
    return [list(paragraphs.values()) for paragraphs in articles.values()]


def retrieval_negatives(articles: list[list[list[Example]]], share: float, rng: random.Random) -> list[Example]:
    """For `share` of the answerable questions, another paragraph of the same article: a passage retrieval could
    bring, which does not hold the answer (checked: the answer's text is not in it)."""
    negatives = []
    for paragraphs in articles:
        if len(paragraphs) < 2:
            continue
        for i, questions in enumerate(paragraphs):
            for ex in questions:
                if ex.answer_start is None or rng.random() >= share:
                    continue
                other = paragraphs[rng.choice([j for j in range(len(paragraphs)) if j != i])][0].context
                if ex.answer.lower() not in other.lower():
                    negatives.append(replace(ex, context=other, answer_start=None, answer=""))
    return negatives


PRONOUN_FOR = {"who": "they", "whom": "them", "whose": "their"}
CAPITALISED_RUN = re.compile(r"(?<!^)(?:\b[A-Z][\w'’.-]*(?:\s+(?:of|the|de|and|for)\s+|\s+)?)+")


def follow_ups(articles: list[list[list[Example]]], share: float, rng: random.Random) -> list[Example]:
    """Consecutive questions on one paragraph as a conversation: the later question is read after the earlier one and
    its answer. Where the later question names (a capitalised run of words) what the earlier turn named, that name
    becomes "it" (or "they" when it was the answer to a who-question): "how close was it" after "who won?"."""
    made = []
    for paragraphs in articles:
        for questions in paragraphs:
            for before, ex in zip(questions, questions[1:], strict=False):
                if ex.answer_start is None or before.answer_start is None or rng.random() >= share:
                    continue
                history = f"{before.question} {before.answer}"
                question = ex.question
                for match in CAPITALISED_RUN.finditer(ex.question):
                    name = match.group().strip()
                    if len(name) > 2 and name in history and name not in ex.answer:
                        who = before.question.split()[0].lower() in PRONOUN_FOR and name in before.answer
                        pronoun = "they" if who else "it"
                        question = re.sub(rf"\b(?:[Tt]he\s+)?{re.escape(name)}", pronoun, ex.question, count=1)
                        break
                made.append(replace(ex, question=question, history=history))
    return made


def boolq_title_held_out(title: str) -> bool:
    """A fifth of BoolQ's titles (by a stable hash) are held out of training, for the yes/no figures."""
    return zlib.crc32(title.encode()) % 5 == 0


def boolq_examples(held_out: bool, boolq_dir: Path = BOOLQ_DIR) -> list[Example]:
    """BoolQ's yes/no questions (held-out titles or the others) over their Wikipedia passages."""
    with gzip.open(boolq_dir / "dev.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    return [
        Example(r["question"].strip() + "?", r["passage"], None, "", r["title"], yes_no=bool(r["answer"]))
        for r in rows
        if boolq_title_held_out(r["title"]) == held_out
    ]
