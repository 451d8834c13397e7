"""Evaluation scripts: run hand-written question sets through the same chain the UI uses and score the answers.

A dataset is a JSON Lines file, one item a line:
`{"id", "question", "answers": [accepted strings], "answerable": bool, "evidence": "verbatim span", "kind",
"history": [{"role", "content"}]?}`, or a conversation: `{"id", "kind": "conversation", "turns": [{"question",
"answers", "answerable", "evidence", "kind"?}, ...]}`, whose turns are asked in order, each with the history of the
earlier turns and the bot's own answers to them (as a user's chat would be). A dataset `X.jsonl` is answered from
the documents in the sibling folder `X/` when it exists, else from the default corpus (`Settings().corpus`).

Each configuration (`retriever=dense,top_k=6`, `answerer=extractive`, …) becomes `Settings(**overrides)`, so the
environment still applies beneath it. Every (configuration, dataset) pair gets a fresh index in a temporary folder
(the user's index is never touched, chunking settings are honoured) and one `EventBot`, and every question goes
through `EventBot.ask(question, history)`.

Metrics, per kind and overall; no LLM judge. Text is compared after `normalize` (lowercase, curly quotes and
apostrophes made straight, whitespace collapsed) with the answer's `[n]` markers removed.

- accuracy: an answerable item is correct when the answer did not abstain and contains one of the accepted strings
  (as whole words); an unanswerable item is correct when the answer abstained.
- wrong rate: the share of all items answered (not abstained) but not correct: the confident wrong answers,
  which are worse than an abstention.
- exact match / F1: SQuAD v1.1 style (lowercase, punctuation and articles dropped, token-bag F1), best over the
  accepted strings, on answerable items; an abstention scores 0. Unicode punctuation counts as punctuation too.
- abstention precision / recall: positive = abstained, truth = not answerable.
- citation precision: over answerable items that were answered, the share whose cited quotes contain the
  evidence (one quote, or the quotes joined, contains the whole evidence). When the evidence spans several
  sentences it is enough that the quotes overlap it: some evidence sentence lies inside a cited quote, or some cited
  quote of at least four words lies inside the evidence. An answer without citations counts as wrong.
- groundedness, over every answered item (answerable or not): `grounded_tokens` is the mean share of the answer's
  SQuAD tokens that occur in its cited quotes; `grounded_names` is the share of answers whose every number and every
  capitalized name occurs (as a whole word, case-insensitively) in the cited quotes. A capitalized word that opens a
  sentence is only taken for a name when it is not a common function word ("The", "She", "According", …).
- retrieval hit@k / MRR, over answerable items with evidence: a context hits when it contains the evidence or one of
  its sentences (of at least four words); hit@k is the share with a hit among the returned contexts (k = top_k),
  MRR the mean of 1/rank of the first hit (0 without one).
- latency p50 / p95 of `timings_ms["total"]`, and the mean answer length in words.
"""

from __future__ import annotations

import json
import logging
import re
import string
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ValidationError

from bot.settings import DEFAULT_CORPUS, Settings
from bot.types import Answer, Turn

if TYPE_CHECKING:
    from bot.service import EventBot

log = logging.getLogger(__name__)

DEFAULT_DATASETS_DIR = DEFAULT_CORPUS / "eval"
MIN_SENTENCE_WORDS = 4  # shorter evidence fragments ("Oh no.") would match unrelated text


class EvaluationError(ValueError):
    """Something the user got wrong: a missing or malformed dataset, an unknown configuration name."""


# -- datasets -------------------------------------------------------------------------------------------------


class EvalItem(BaseModel):
    id: str
    question: str
    answers: list[str] = []
    answerable: bool
    evidence: str = ""
    kind: str
    history: list[Turn] = []
    conversation: str | None = None  # the conversation this turn belongs to; its history is the bot's own answers


class ConversationTurn(BaseModel):
    question: str
    answers: list[str] = []
    answerable: bool
    evidence: str = ""
    kind: str | None = None


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


def dataset_corpus(path: Path, settings: Settings) -> list[Path]:
    """The documents a dataset is answered from: the sibling folder named like it, else the default corpus."""
    folder = path.with_suffix("")
    return [folder] if folder.is_dir() else list(settings.corpus)


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


# -- text -----------------------------------------------------------------------------------------------------

QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "“": '"', "”": '"', "„": '"', "″": '"'})
MARKERS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")
SENTENCE_BREAK = re.compile(r"\s*\n\s*|(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]])\s+")
ARTICLES = re.compile(r"\b(a|an|the)\b")
NUMBER = re.compile(r"(?<![^\W\d_])\d+(?:[.,:]\d+)*")  # not the 7 of "Rd7": a number is not part of a word
WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
SENTENCE_OPENERS = {
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "he",
    "she",
    "they",
    "we",
    "you",
    "i",
    "his",
    "her",
    "their",
    "our",
    "my",
    "your",
    "there",
    "here",
    "in",
    "on",
    "at",
    "of",
    "for",
    "from",
    "to",
    "by",
    "with",
    "after",
    "before",
    "during",
    "when",
    "while",
    "where",
    "who",
    "what",
    "which",
    "why",
    "how",
    "yes",
    "no",
    "and",
    "but",
    "or",
    "so",
    "then",
    "also",
    "however",
    "instead",
    "according",
    "as",
    "if",
    "not",
    "only",
    "both",
    "all",
    "some",
    "one",
}


def strip_markers(text: str) -> str:
    return MARKERS.sub("", text)


def normalize(text: str) -> str:
    """Lowercase, curly quotes and apostrophes made straight, whitespace collapsed."""
    return " ".join(text.translate(QUOTES).lower().split())


def squad_tokens(text: str) -> list[str]:
    """SQuAD v1.1 answer normalization, split into tokens."""
    text = "".join(
        ch
        for ch in text.lower()  # punctuation dropped, not spaced: "25-year-old" → "25yearold"
        if ch not in string.punctuation and not unicodedata.category(ch).startswith("P")
    )
    return ARTICLES.sub(" ", text).split()


def sentences(text: str) -> list[str]:
    """The sentences of a span worth matching on their own (at least four words); the whole span when none is."""
    parts = [p for p in SENTENCE_BREAK.split(text.strip()) if len(p.split()) >= MIN_SENTENCE_WORDS]
    return parts or [text.strip()]


def _contains_word(haystack: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


# -- metrics on one answer ------------------------------------------------------------------------------------


def is_correct(answer: Answer, answers: Sequence[str], answerable: bool) -> bool:
    if not answerable:
        return answer.abstained
    if answer.abstained:
        return False
    text = normalize(strip_markers(answer.answer))
    return any(_contains_word(text, normalize(a)) for a in answers if a.strip())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    got = squad_tokens(strip_markers(prediction))
    return float(any(got == squad_tokens(a) for a in answers))


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    got = squad_tokens(strip_markers(prediction))
    best = 0.0
    for a in answers:
        gold = squad_tokens(a)
        common = sum((Counter(got) & Counter(gold)).values())
        if common:
            precision, recall = common / len(got), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def citation_supports(evidence: str, quotes: Sequence[str]) -> bool:
    """Do the cited quotes contain the evidence (or, for multi-sentence evidence, overlap it)?"""
    if not quotes or not evidence.strip():
        return False
    ev = normalize(evidence)
    qs = [normalize(q) for q in quotes]
    if any(ev in q for q in qs) or ev in " ".join(qs):
        return True
    parts = sentences(evidence)
    if len(parts) < 2:
        return False
    return any(normalize(p) in q for p in parts for q in qs) or any(
        q in ev for q in qs if len(q.split()) >= MIN_SENTENCE_WORDS
    )


def grounded_token_share(answer_text: str, quotes: Sequence[str]) -> float:
    tokens = squad_tokens(strip_markers(answer_text))
    if not tokens:
        return 1.0
    quoted = set(squad_tokens(" ".join(quotes)))
    return sum(t in quoted for t in tokens) / len(tokens)


def numbers_and_names(text: str) -> list[str]:
    """The numbers and capitalized names an answer asserts (possessive 's dropped)."""
    text = strip_markers(text).translate(QUOTES)
    found = NUMBER.findall(text)
    for m in WORD.finditer(text):
        word = m.group()
        if not word[0].isupper():
            continue
        before = text[: m.start()].rstrip(" \"'(")
        opens_sentence = not before or before[-1] in ".!?:;\n"
        if opens_sentence and word.lower() in SENTENCE_OPENERS:
            continue
        found.append(re.sub(r"'s$", "", word))
    return found


def ungrounded_names(answer_text: str, quotes: Sequence[str]) -> list[str]:
    """Numbers and names in the answer that no cited quote contains."""
    quoted = normalize(" ".join(quotes))
    return [n for n in numbers_and_names(answer_text) if not _contains_word(quoted, n.lower())]


def evidence_rank(evidence: str, contexts: Sequence[str]) -> int | None:
    """1-based rank of the first context holding the evidence or one of its sentences; None when none does."""
    if not evidence.strip():
        return None
    targets = {normalize(evidence), *(normalize(s) for s in sentences(evidence))}
    for rank, text in enumerate(contexts, 1):
        ctx = normalize(text)
        if any(t in ctx for t in targets):
            return rank
    return None


@dataclass
class ItemResult:
    id: str
    kind: str
    question: str
    answerable: bool
    expected: list[str]
    answer: str
    abstained: bool
    correct: bool
    exact_match: float | None  # answerable items only
    f1: float | None
    citation_ok: bool | None  # answered answerable items only
    grounded_tokens: float | None  # answered items only
    grounded_names: bool | None
    ungrounded: list[str]
    evidence_rank: int | None
    retrieval_scored: bool  # answerable with evidence
    latency_ms: float | None
    words: int
    backend: str
    history: list[dict] = field(default_factory=list)


def score_item(item: EvalItem, answer: Answer) -> ItemResult:
    quotes = [c.quote for c in answer.citations]
    answered = not answer.abstained
    text = strip_markers(answer.answer)
    missing = ungrounded_names(answer.answer, quotes) if answered else []
    return ItemResult(
        id=item.id,
        kind=item.kind,
        question=item.question,
        answerable=item.answerable,
        expected=item.answers,
        answer=answer.answer,
        abstained=answer.abstained,
        correct=is_correct(answer, item.answers, item.answerable),
        exact_match=(exact_match(text, item.answers) if answered else 0.0) if item.answerable else None,
        f1=(token_f1(text, item.answers) if answered else 0.0) if item.answerable else None,
        citation_ok=citation_supports(item.evidence, quotes) if item.answerable and answered else None,
        grounded_tokens=grounded_token_share(answer.answer, quotes) if answered else None,
        grounded_names=not missing if answered else None,
        ungrounded=missing,
        evidence_rank=evidence_rank(item.evidence, [c.text for c in answer.contexts]),
        retrieval_scored=item.answerable and bool(item.evidence.strip()),
        latency_ms=answer.timings_ms.get("total"),
        words=len(text.split()),
        backend=answer.backend,
        history=[t.model_dump() for t in item.history],
    )


# -- metrics over many answers --------------------------------------------------------------------------------


def _mean(values: Iterable[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def abstention_precision_recall(results: Sequence[ItemResult]) -> tuple[float | None, float | None]:
    """Positive = abstained, truth = not answerable. None where the ratio is undefined (nothing to divide by)."""
    tp = sum(r.abstained and not r.answerable for r in results)
    abstained = sum(r.abstained for r in results)
    unanswerable = sum(not r.answerable for r in results)
    return (tp / abstained if abstained else None), (tp / unanswerable if unanswerable else None)


def summarize(results: Sequence[ItemResult]) -> dict[str, Any]:
    precision, recall = abstention_precision_recall(results)
    scored = [r for r in results if r.retrieval_scored]
    latencies = [r.latency_ms for r in results if r.latency_ms is not None]
    return {
        "n": len(results),
        "accuracy": _mean(r.correct for r in results),
        "wrong_rate": _mean(not r.abstained and not r.correct for r in results),
        "exact_match": _mean(r.exact_match for r in results),
        "f1": _mean(r.f1 for r in results),
        "abstention_precision": precision,
        "abstention_recall": recall,
        "citation_precision": _mean(r.citation_ok for r in results),
        "grounded_tokens": _mean(r.grounded_tokens for r in results),
        "grounded_names": _mean(r.grounded_names for r in results),
        "hit_at_k": _mean(r.evidence_rank is not None for r in scored),
        "mrr": _mean(1 / r.evidence_rank if r.evidence_rank else 0.0 for r in scored),
        "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
        "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
        "answer_words": _mean(r.words for r in results if not r.abstained),
    }


def summarize_by_kind(results: Sequence[ItemResult]) -> dict[str, Any]:
    kinds = list(dict.fromkeys(r.kind for r in results))  # in the dataset's order
    return {"overall": summarize(results), "kinds": {k: summarize([r for r in results if r.kind == k]) for k in kinds}}


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
    from bot.service import EventBot, build_index

    with tempfile.TemporaryDirectory(prefix="eventbot-eval-", ignore_cleanup_errors=True) as tmp:
        local = settings.model_copy(update={"index_dir": Path(tmp), "chroma_url": None, "collection": "eval"})
        report = build_index(local, corpus)
        yield report.as_dict(), EventBot(local)


def ask_or_refuse(bot: EventBot, question: str, history: Sequence[Turn] = ()) -> Answer:
    """The bot's answer; a question the UI would refuse counts as an abstention with the reason."""
    from bot.service import QuestionError

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
                history += [Turn(role="user", content=item.question), Turn(role="assistant", content=answer.answer)]
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


# -- tables, report, chart ------------------------------------------------------------------------------------

SECONDARY = [
    ("abstention precision", "abstention_precision", "{:.2f}"),
    ("abstention recall", "abstention_recall", "{:.2f}"),
    ("citation precision", "citation_precision", "{:.2f}"),
    ("grounded tokens", "grounded_tokens", "{:.2f}"),
    ("grounded names", "grounded_names", "{:.2f}"),
    ("hit@k", "hit_at_k", "{:.2f}"),
    ("MRR", "mrr", "{:.2f}"),
    ("latency p50 ms", "latency_p50_ms", "{:.1f}"),
    ("latency p95 ms", "latency_p95_ms", "{:.1f}"),
    ("answer words", "answer_words", "{:.1f}"),
]


def _fmt(value: float | None, pattern: str = "{:.2f}") -> str:
    return "—" if value is None else pattern.format(value)


def kind_table(dataset: DatasetRun) -> tuple[list[str], list[list[str]]]:
    """Rows = kinds + overall; columns = accuracy, wrong rate, EM, F1 for each configuration side by side."""
    several = len(dataset.runs) > 1
    headers = ["kind", "n"]
    for i, _ in enumerate(dataset.runs, 1):
        suffix = f" #{i}" if several else ""  # the legend (config_legend) names #1, #2, …
        headers += [f"accuracy{suffix}", f"wrong{suffix}", f"EM{suffix}", f"F1{suffix}"]
    rows = []
    for kind in [*dataset.kinds, "overall"]:
        first = dataset.runs[0].metrics
        n = (first["overall"] if kind == "overall" else first["kinds"][kind])["n"]
        row = [kind, str(n)]
        for run in dataset.runs:
            m = run.metrics["overall"] if kind == "overall" else run.metrics["kinds"][kind]
            row += [_fmt(m["accuracy"]), _fmt(m["wrong_rate"]), _fmt(m["exact_match"]), _fmt(m["f1"])]
        rows.append(row)
    return headers, rows


def config_legend(evaluation: Evaluation) -> str | None:
    """`#1 retriever=dense · #2 retriever=hybrid` when several configurations share the tables."""
    if len(evaluation.configs) < 2:
        return None
    return " · ".join(f"#{i} {c.label}" for i, c in enumerate(evaluation.configs, 1))


def metric_table(dataset: DatasetRun) -> tuple[list[str], list[list[str]]]:
    """Rows = the overall secondary metrics; one column per configuration."""
    k = {r.settings.get("top_k") for r in dataset.runs}
    several = len(dataset.runs) > 1
    headers = [
        "metric",
        *(f"#{i} {r.config.label}" if several else r.config.label for i, r in enumerate(dataset.runs, 1)),
    ]
    rows = []
    for title, key, pattern in SECONDARY:
        if key == "hit_at_k" and len(k) == 1:
            title = f"hit@{k.pop()}"
        rows.append([title, *(_fmt(r.metrics["overall"][key], pattern) for r in dataset.runs)])
    return headers, rows


def rich_tables(evaluation: Evaluation) -> list:
    from rich.table import Table

    tables = []
    legend = config_legend(evaluation)
    for d in evaluation.datasets:
        for title, (headers, rows), caption in (
            (f"{d.name}: answers by kind", kind_table(d), legend),
            (f"{d.name}: overall", metric_table(d), None),
        ):
            table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
            for i, h in enumerate(headers):
                table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
            for row in rows:
                table.add_row(*row, style="bold" if row[0] == "overall" else None)
            tables.append(table)
    return tables


def _markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_report(evaluation: Evaluation, chart_name: str | None) -> str:
    out = ["# eventbot evaluation", ""]
    out += ["Configurations: " + ", ".join(f"#{i} `{c.label}`" for i, c in enumerate(evaluation.configs, 1)), ""]
    if chart_name:
        out += [f"![Accuracy by kind per configuration]({chart_name})", ""]
    for d in evaluation.datasets:
        out += [f"## {d.name}", "", f"{d.path} — corpus: {', '.join(p.name for p in d.corpus)}", ""]
        out += [_markdown_table(*kind_table(d)), "", _markdown_table(*metric_table(d)), ""]
        for run in d.runs:
            failed = [r for r in run.results if not r.correct]
            out += [f"### Failing items — `{run.config.label}` ({len(failed)} of {len(run.results)})", ""]
            for r in failed:
                expected = " / ".join(r.expected) if r.answerable else "an abstention"
                after = f" (after: “{_one_line(r.history[-2]['content'])}”)" if len(r.history) >= 2 else ""
                got = ("abstained: " if r.abstained else "WRONG: ") + _one_line(r.answer)
                out += [
                    f"- `{r.id}` ({r.kind}) **{_one_line(r.question)}**{after}",
                    f"  - expected: {_one_line(expected)}",
                    f"  - got: {got}",
                ]
            out.append("")
    return "\n".join(out)


def accuracy_chart(evaluation: Evaluation, path: Path) -> None:
    """A PNG of accuracy by kind, one group of bars per kind and one bar per configuration, a panel per dataset."""
    from matplotlib.figure import Figure  # no pyplot: renders with the Agg canvas, no GUI, no global state

    datasets = evaluation.datasets
    fig = Figure(
        figsize=(max(7.0, 1.1 * max(len(d.kinds) + 1 for d in datasets)), 3.6 * len(datasets)), layout="constrained"
    )
    axes = fig.subplots(len(datasets), 1, squeeze=False)[:, 0]
    for ax, d in zip(axes, datasets, strict=True):
        kinds = [*d.kinds, "overall"]
        width = 0.8 / len(d.runs)
        for i, run in enumerate(d.runs):
            values = [
                (run.metrics["overall"] if k == "overall" else run.metrics["kinds"][k])["accuracy"] or 0.0
                for k in kinds
            ]
            xs = np.arange(len(kinds)) + (i - (len(d.runs) - 1) / 2) * width
            bars = ax.bar(xs, values, width, label=run.config.label)
            ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        ax.set_xticks(np.arange(len(kinds)), kinds, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("accuracy")
        ax.set_title(d.name, loc="left")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.savefig(path, dpi=110)


def write_report(evaluation: Evaluation, path: Path) -> Path:
    """Write the Markdown report at `path` and its chart next to it (same name, .png); return the chart's path."""
    chart = path.with_suffix(".png")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        accuracy_chart(evaluation, chart)
        path.write_text(markdown_report(evaluation, chart.name), encoding="utf-8")
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot write the report ({exc.strerror or exc})") from exc
    return chart


def to_json(evaluation: Evaluation) -> str:
    return json.dumps(evaluation.as_dict(), ensure_ascii=False)
