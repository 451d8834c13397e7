"""Where the evaluation and training data live, and SQuAD's split by article: the 87,599 questions of SQuAD 1.1
train are for training; the dev sets are split by article into train and test (`../shared/squad/split.json`), and a
fifth of the v2.0 train articles is held out of the reader's training for its calibration and model card."""

import json
from pathlib import Path

SQUAD_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "squad"
BOOLQ_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "boolq"
DEV_SETS_DIR = Path(__file__).resolve().parents[2] / "data" / "eval"
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "data" / "event-article.txt"


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
