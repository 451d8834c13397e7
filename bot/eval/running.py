"""Running the evaluation: read question sets (`bot.eval.items`), index each set's documents into a fresh temporary
index, ask the bot every question (conversations turn by turn) and score the answers (`bot.eval.metrics`).

Each configuration (`retriever=dense,top_k=6`, `answerer=extractive`, …) becomes `Settings(**overrides)`, so the
environment still applies beneath it. Every (configuration, dataset) pair gets a fresh index in a temporary folder
(the user's index is never touched, chunking settings are honoured) and one `EventBot`, and every question goes
through `EventBot.ask(question, history)`.
"""

from __future__ import annotations

import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bot.answer.condense import exchange
from bot.eval.items import EvalItem, EvaluationError, dataset_corpus, load_dataset
from bot.eval.items import default_datasets as default_datasets  # what `eventbot eval` runs without --dataset
from bot.eval.metrics import ItemResult, score_item, summarize_by_kind
from bot.settings import Settings
from bot.types import Answer, Turn

if TYPE_CHECKING:
    from bot.event_bot import EventBot

log = logging.getLogger(__name__)

# -- configurations -------------------------------------------------------------------------------------------


@dataclass
class Config:
    label: str
    overrides: dict[str, str] = field(default_factory=dict)


MANAGED = {"index_dir", "chroma_url", "collection", "corpus"}  # eval chooses these itself


def parse_config(text: str) -> Config:
    """`retriever=dense,top_k=6` → Config; `answerer=extractive|llm` is shorthand for the LLM setting."""
    overrides: dict[str, str] = {}
    for pair in (p.strip() for p in text.split(",")):
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name or not value.strip():
            raise EvaluationError(f"--config {text!r}: expected NAME=VALUE[,NAME=VALUE…]")
        if name != "answerer" and name not in Settings.model_fields:
            raise EvaluationError(f"--config {text!r}: unknown setting {name!r}")
        if name in MANAGED:
            raise EvaluationError(f"--config {text!r}: {name} is chosen by eval itself (a temporary local index)")
        overrides[name] = value.strip()
    return Config(",".join(f"{k}={v}" for k, v in overrides.items()), overrides)


def parse_configs(texts: Sequence[str]) -> list[Config]:
    configs = [parse_config(t) for t in texts] or [Config("default")]
    seen: Counter[str] = Counter()
    for c in configs:  # two identical --config strings still get two columns
        seen[c.label] += 1
        if seen[c.label] > 1:
            c.label = f"{c.label} #{seen[c.label]}"
    return configs


def settings_for(config: Config) -> Settings:
    overrides: dict[str, Any] = dict(config.overrides)
    answerer = overrides.pop("answerer", None)
    if answerer == "extractive":
        overrides["llm"] = "none"
    elif answerer not in (None, "llm"):
        raise EvaluationError(f"--config {config.label!r}: answerer must be 'extractive' or 'llm'")
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise EvaluationError(f"--config {config.label!r}: {problem['loc'][0]}: {problem['msg']}") from exc
    if answerer == "llm" and settings.llm == "none":
        raise EvaluationError(
            f"--config {config.label!r}: answerer=llm needs an LLM configured in the environment "
            "(EVENTBOT_LLM=llamacpp|ollama|openai and EVENTBOT_LLM_MODEL)"
        )
    return settings


# -- running --------------------------------------------------------------------------------------------------


@dataclass
class ConfigRun:
    config: Config
    settings: dict[str, Any]
    index: dict[str, Any]
    results: list[ItemResult]
    metrics: dict[str, Any]


@dataclass
class DatasetRun:
    name: str
    path: Path
    corpus: list[Path]
    kinds: list[str]
    runs: list[ConfigRun] = field(default_factory=list)


@dataclass
class Evaluation:
    configs: list[Config]
    datasets: list[DatasetRun]

    def as_dict(self) -> dict[str, Any]:
        return {
            "configs": [asdict(c) for c in self.configs],
            "datasets": [
                {
                    "name": d.name,
                    "path": str(d.path),
                    "corpus": [str(p) for p in d.corpus],
                    "kinds": d.kinds,
                    "results": {
                        r.config.label: {
                            "settings": r.settings,
                            "index": r.index,
                            "metrics": r.metrics,
                            "items": [asdict(i) for i in r.results],
                        }
                        for r in d.runs
                    },
                }
                for d in self.datasets
            ],
        }


SHOWN_SETTINGS = ("retriever", "top_k", "chunk_size", "chunk_overlap", "llm", "llm_model")


def shown_settings(settings: Settings) -> dict[str, Any]:
    """The settings a reader of the results needs to tell configurations apart."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in settings.model_dump().items() if k in SHOWN_SETTINGS}


@contextmanager
def temporary_bot(settings: Settings, corpus: list[Path]) -> Iterator[tuple[dict, EventBot]]:
    """Index `corpus` into a fresh temporary folder and open a bot on it: the user's index is never touched, and the
    configuration's chunking settings are honoured. Yields (the indexing report, the bot)."""
    from bot.event_bot import EventBot
    from bot.indexing import build_index

    with tempfile.TemporaryDirectory(prefix="eventbot-eval-", ignore_cleanup_errors=True) as tmp:
        local = settings.model_copy(update={"index_dir": Path(tmp), "chroma_url": None, "collection": "eval"})
        report = build_index(local, corpus)
        yield report.as_dict(), EventBot(local)


def ask_or_refuse(bot: EventBot, question: str, history: Sequence[Turn] = ()) -> Answer:
    """The bot's answer; a question the UI would refuse counts as an abstention with the reason."""
    from bot.errors import QuestionError

    try:
        return bot.ask(question, list(history))
    except QuestionError as exc:
        return Answer(question=question, answer=str(exc), abstained=True, backend="refused")


def evaluate_items(settings: Settings, items: Sequence[EvalItem], corpus: list[Path]) -> tuple[dict, list[ItemResult]]:
    """Index `corpus` into a fresh temporary folder, open a bot on it and score every item."""
    with temporary_bot(settings, corpus) as (report, bot):
        results = []
        conversations: dict[str, list[Turn]] = {}
        for item in items:
            history = conversations.setdefault(item.conversation, []) if item.conversation else item.history
            answer = ask_or_refuse(bot, item.question, history)
            if item.conversation:
                item = item.model_copy(update={"history": list(history)})
                history += exchange(item.question, answer.answer, answer.abstained)
            results.append(score_item(item, answer))
        del bot
    return report, results


def run_evaluation(
    dataset_paths: Sequence[Path], configs: Sequence[Config], progress: Callable[[str], None] | None = None
) -> Evaluation:
    datasets = [(Path(p), load_dataset(Path(p))) for p in dataset_paths]  # all read before any work
    settings = [settings_for(c) for c in configs]
    names = [p.stem for p, _ in datasets]
    runs = [
        DatasetRun(
            name if names.count(name) == 1 else str(path),
            path,
            dataset_corpus(path, settings[0]),
            list(dict.fromkeys(i.kind for i in items)),
        )
        for name, (path, items) in zip(names, datasets, strict=True)
    ]
    for config, s in zip(configs, settings, strict=True):
        for run, (path, items) in zip(runs, datasets, strict=True):
            corpus = dataset_corpus(path, s)
            if progress:
                progress(f"{config.label}: {len(items)} questions of {run.name} on {', '.join(p.name for p in corpus)}")
            index, results = evaluate_items(s, items, corpus)
            run.runs.append(ConfigRun(config, shown_settings(s), index, results, summarize_by_kind(results)))
    return Evaluation(list(configs), runs)
