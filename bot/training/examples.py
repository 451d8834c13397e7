"""Training and calibration examples for the reader: SQuAD questions (the 87,599 of SQuAD 1.1 train, and the dev
articles by the split in `../shared/squad/split.json`), the project's own development sets (news of events) and
BoolQ's yes/no questions and the questions typed as users type them (`data/train/`), as (question, context, answer
start, answer text), with no answer for the unanswerable ones. Follow-ups are made from SQuAD's paragraphs (a later
question on the same paragraph whose subject became a pronoun, read after the earlier question and its answer)."""

import gzip
import json
import random
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from bot.eval.datasets import (
    BOOLQ_DIR,
    DEV_SETS_DIR,
    SQUAD_DIR,
    held_out_articles,
    squad_articles,
    squad_split,
)


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


USER_QUESTIONS_DIR = DEV_SETS_DIR.parent / "train"  # data/train/<batch>/<document>.txt beside <document>.jsonl


def user_question_examples(folder: Path = USER_QUESTIONS_DIR) -> list[Example]:
    """Questions typed as users type them, written by people who read only the documents (never a set the project
    measures on): each over its whole document, the answer at its first occurrence inside the evidence sentence. A
    yes/no question is also a row for the yes/no head (its evidence sentence); a conversation's later turn is read
    after the turn before (question and first answer)."""
    examples = []
    for questions in sorted(folder.glob("*/*.jsonl")):
        document = questions.with_suffix(".txt").read_text()
        name = f"{questions.parent.name}/{questions.stem}"
        for line in questions.read_text().splitlines():
            item = json.loads(line)
            history = ""
            for turn in item.get("turns", [item]):
                examples += _user_examples(turn, document, name, history)
                history = f"{turn['question']} {turn['answers'][0]}" if turn.get("answers") else turn["question"]
    return examples


def _user_examples(item: dict, document: str, name: str, history: str) -> list[Example]:
    question = item["question"]
    if not item.get("answerable"):
        return [Example(question, document, None, "", name, history)]
    at = document.find(item.get("evidence") or "\0")
    answer = item["answers"][0] if item.get("answers") else ""
    inside = item["evidence"].find(answer) if at >= 0 and answer else -1
    made = []
    if inside >= 0:
        made.append(Example(question, document, at + inside, answer, name, history))
    if item.get("yes_no") in ("yes", "no") and at >= 0:
        made.append(Example(question, item["evidence"], None, "", name, history, yes_no=item["yes_no"] == "yes"))
    return made
