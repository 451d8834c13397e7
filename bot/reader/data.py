"""Training and calibration examples for the span reader: SQuAD questions (by the article split in
`../shared/squad/split.json`) and the project's own development sets (news of events), as (question, context,
answer start, answer text) with no answer for the unanswerable ones."""

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

SQUAD_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "squad"
DEV_SETS_DIR = Path(__file__).resolve().parents[2] / "data" / "eval"
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "data" / "event-article.txt"
SPAN_KINDS = {"factoid", "paraphrased", "fragment", "quote"}  # dev-set kinds whose answer is a phrase of the text


@dataclass(frozen=True)
class Example:
    question: str
    context: str
    answer_start: int | None  # None: the context does not answer the question
    answer: str
    article: str  # the SQuAD article title, or the dev set's name: folds are made by article


def squad_split(squad_dir: Path = SQUAD_DIR) -> dict[str, list[str]]:
    return json.loads((squad_dir / "split.json").read_text())


def held_out_articles(squad_dir: Path = SQUAD_DIR) -> list[str]:
    """A fifth of the v2.0 train articles, kept out of the reader's training: thresholds, the answerability
    classifier and the model card's figures are measured on them."""
    return sorted(squad_split(squad_dir)["train_from_v2.0"])[::5]


def squad_articles(titles: list[str], squad_dir: Path = SQUAD_DIR) -> list[dict]:
    """The SQuAD articles with these titles, from v2.0 where it has them (unanswerable questions too), else v1.1."""
    wanted, found = set(titles), {}
    for name in ("dev-v2.0.json", "dev-v1.1.json"):
        for article in json.loads((squad_dir / name).read_text())["data"]:
            if article["title"] in wanted and article["title"] not in found:
                found[article["title"]] = article
    missing = wanted - set(found)
    if missing:
        raise ValueError(f"not in the SQuAD files: {sorted(missing)}")
    return [found[t] for t in titles]


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
