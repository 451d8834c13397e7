"""Evaluation items: the question sets `eventbot eval` scores, read from JSON Lines files, and the documents each set
is answered from. Both the scoring (`bot.eval.metrics`) and the running (`bot.eval.running`) build on this module.

A dataset is a JSON Lines file, one item a line:
`{"id", "question", "answers": [accepted strings], "answerable": bool, "evidence": "verbatim span", "kind",
"history": [{"role", "content"}]?}`; a question answered in several sentences (an overview, a list, why or how) gives
instead `"key_points"` (short strings a good answer names, alternatives parted by " | ") and `"min_points"` (how many
it must name); or a conversation: `{"id", "kind": "conversation", "turns": [{"question",
"answers", "answerable", "evidence", "kind"?}, ...]}`, whose turns are asked in order, each with the history of the
earlier turns and the bot's own answers to them (as a user's chat would be). A dataset `X.jsonl` is answered from
the documents in the sibling folder `X/` when it exists, else from the default corpus (`Settings().corpus`).

Every item must be labelled: `answerable` true or false, and when true its `answers` (or `yes_no`). An item that is
not (`"answerable": null`, as `eventbot feedback export` writes them) stops the loading with its line, rather than
being scored against nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from bot.settings import DEFAULT_CORPUS, Settings
from bot.types import Turn
from index.errors import InputError

DEFAULT_DATASETS_DIR = DEFAULT_CORPUS / "eval"


class EvaluationError(InputError, ValueError):
    """Something the user got wrong: a missing or malformed dataset, an unknown configuration name."""


class EvalItem(BaseModel):
    id: str
    question: str
    answers: list[str] = []
    answerable: bool
    evidence: str = ""
    kind: str
    yes_no: bool | None = None  # a yes/no question's answer: the reply must open with the right "Yes" or "No"
    key_points: list[str] = []  # what a good answer of several sentences names ("Alysa Liu | Liu": alternatives)
    min_points: int = 0  # how many of the key points it must name
    history: list[Turn] = []
    conversation: str | None = None  # the conversation this turn belongs to; its history is the bot's own answers


class ConversationTurn(BaseModel):
    question: str
    answers: list[str] = []
    answerable: bool
    evidence: str = ""
    kind: str | None = None
    yes_no: bool | None = None


class Conversation(BaseModel):
    """Turns asked in order through the same chain, each with the earlier turns and the bot's answers as history."""

    id: str
    kind: str = "conversation"
    turns: list[ConversationTurn]

    def items(self) -> list[EvalItem]:
        return [
            EvalItem(
                id=f"{self.id}.{n}",
                kind=turn.kind or ("turn 1" if n == 1 else "follow-up turn"),
                conversation=self.id,
                **turn.model_dump(exclude={"kind"}),
            )
            for n, turn in enumerate(self.turns, 1)
        ]


def default_datasets() -> list[Path]:
    return sorted(DEFAULT_DATASETS_DIR.glob("*.jsonl"))


def load_dataset(path: Path) -> list[EvalItem]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot read the dataset ({exc.strerror or exc})") from exc
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            check_labelled(raw, f"{path}:{number}")
            if isinstance(raw, dict) and "turns" in raw:
                items.extend(Conversation.model_validate(raw).items())
            else:
                items.append(EvalItem.model_validate(raw))
        except json.JSONDecodeError as exc:
            raise EvaluationError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            raise EvaluationError(f"{path}:{number}: {where + ': ' if where else ''}{problem['msg']}") from exc
    if not items:
        raise EvaluationError(f"{path}: the dataset has no items")
    return items


def check_labelled(raw: object, where: str) -> None:
    """EvaluationError when an item (or a conversation's turn) is not labelled yet: `answerable` missing or null,
    or true with none of `answers`, `yes_no` and `key_points`. Other faults are left to the item's model."""
    if not isinstance(raw, dict):
        return
    turns = raw.get("turns") if "turns" in raw else [raw]
    for item in turns if isinstance(turns, list) else []:
        if not isinstance(item, dict):
            continue
        answerable = item.get("answerable")
        labels = item.get("answers") or item.get("key_points") or item.get("yes_no") is not None
        if answerable is None or (answerable is True and not labels):
            raise EvaluationError(
                f'{where}: not labelled yet: set "answerable" (true or false) and, when true, "answers"'
            )
        points = item.get("key_points") or []
        if not isinstance(item.get("min_points", 0), int) or not 0 <= item.get("min_points", 0) <= len(points):
            raise EvaluationError(f'{where}: "min_points" must be a whole number from 0 to the key points\' count')


def dataset_corpus(path: Path, settings: Settings) -> list[Path]:
    """The documents a dataset is answered from: the sibling folder named like it, else the default corpus."""
    folder = path.with_suffix("")
    return [folder] if folder.is_dir() else list(settings.corpus)
