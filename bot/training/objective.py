"""What the reader learns from and how its loss is counted, with nothing but torch and a tokenizer, so that a machine
with an accelerator and none of the bot's other packages can train it (bot.training.accelerated): a training
question is a `Group` of the windows the bot would read for it; `featurize` tokenizes them as the reader reads,
`collate` pads a batch, `loss_of` is the shared-normalization loss (Clark & Gardner 2018: one softmax over every
window's spans and the no-answer position) beside the yes/no head's. `save_groups` and `load_groups` carry the
groups between machines in one compressed file (each window's text stored once)."""

import json
import lzma
from dataclasses import dataclass, field
from pathlib import Path

import torch

from bot.reader.model import question_text

IGNORE = -100  # a label the loss skips (no span for a BoolQ row, no yes/no for a span row)


@dataclass(frozen=True)
class Window:
    text: str
    answers: tuple[tuple[int, int], ...] = ()  # character spans of the answer in this window


@dataclass(frozen=True)
class Group:
    """One question with the windows the bot would read for it; no window holds an answer when it cannot be
    answered from them. `yes_no` is set for a yes/no row (one window, the head on its first token)."""

    question: str
    history: str
    windows: tuple[Window, ...]
    yes_no: bool | None = None
    source: str = field(default="", compare=False)

    @property
    def answerable(self) -> bool:
        return any(w.answers for w in self.windows)


def save_groups(groups: list[Group], path: Path) -> None:
    """The groups as one xz-compressed JSON file, each distinct window text once (a SQuAD paragraph's sentences are
    read for many of its questions)."""
    texts: dict[str, int] = {}
    rows = [
        {
            "question": g.question,
            "history": g.history,
            "windows": [[texts.setdefault(w.text, len(texts)), [list(a) for a in w.answers]] for w in g.windows],
            "yes_no": g.yes_no,
            "source": g.source,
        }
        for g in groups
    ]
    with lzma.open(path, "wt", encoding="utf-8") as f:
        json.dump({"texts": list(texts), "groups": rows}, f)


def load_groups(path: Path) -> list[Group]:
    """The groups `save_groups` wrote, in the same order."""
    with lzma.open(path, "rt", encoding="utf-8") as f:
        saved = json.load(f)
    texts = saved["texts"]
    return [
        Group(
            row["question"],
            row["history"],
            tuple(Window(texts[t], tuple(tuple(a) for a in answers)) for t, answers in row["windows"]),
            row["yes_no"],
            row["source"],
        )
        for row in saved["groups"]
    ]


def featurize(tokenizer, groups: list[Group], max_tokens: int) -> list[dict]:
    """Each group's windows tokenized as the reader reads them (question, then window; cut to `max_tokens`), with
    the token positions where its answer starts and ends in each window (none where a window does not hold all of
    it)."""
    rows = []
    pairs = [(g, w) for g in groups for w in g.windows]
    for at in range(0, len(pairs), 1024):
        batch = pairs[at : at + 1024]
        enc = tokenizer(
            [question_text(tokenizer, g.question, g.history) for g, _ in batch],
            [w.text for _, w in batch],
            truncation="only_second",
            max_length=max_tokens,
            return_offsets_mapping=True,
        )
        for i, (_, window) in enumerate(batch):
            seq, offsets = enc.sequence_ids(i), enc["offset_mapping"][i]
            starts, ends = _answer_tokens(window, seq, offsets)
            rows.append(
                {
                    "input_ids": enc["input_ids"][i],
                    "token_type_ids": enc["token_type_ids"][i],
                    "context": [j for j, s in enumerate(seq) if s == 1],
                    "starts": starts,
                    "ends": ends,
                }
            )
    features, at = [], 0
    for g in groups:
        windows = rows[at : at + len(g.windows)]
        at += len(g.windows)
        features.append({"windows": windows, "yes_no": IGNORE if g.yes_no is None else int(g.yes_no)})
    return features


def _answer_tokens(window: Window, seq: list, offsets: list) -> tuple[list[int], list[int]]:
    """The tokens where the window's answers start and end (empty when none fits in the tokenized window)."""
    ctx = [i for i, s in enumerate(seq) if s == 1]
    starts, ends = [], []
    for a_start, a_end in window.answers:
        if not ctx or offsets[ctx[0]][0] > a_start or offsets[ctx[-1]][1] < a_end:
            continue
        starts.append(next(i for i in ctx if offsets[i][1] > a_start))
        ends.append(next(i for i in reversed(ctx) if offsets[i][0] < a_end))
    return starts, ends


def collate(batch: list[dict]) -> dict:
    """The batch's windows padded to the longest, and per window its group, context tokens and answer tokens."""
    windows = [w for g in batch for w in g["windows"]]
    width = max(len(w["input_ids"]) for w in windows)
    ids = torch.zeros(len(windows), width, dtype=torch.long)
    types, mask = torch.zeros_like(ids), torch.zeros_like(ids)
    context, starts, ends = (torch.zeros(len(windows), width, dtype=torch.bool) for _ in range(3))
    group = []
    for i, w in enumerate(windows):
        n = len(w["input_ids"])
        ids[i, :n], types[i, :n], mask[i, :n] = torch.tensor(w["input_ids"]), torch.tensor(w["token_type_ids"]), 1
        context[i, w["context"]], starts[i, w["starts"]], ends[i, w["ends"]] = True, True, True
    for g, item in enumerate(batch):
        group += [g] * len(item["windows"])
    return {
        "input_ids": ids,
        "token_type_ids": types,
        "attention_mask": mask,
        "context": context,
        "starts": starts,
        "ends": ends,
        "group": torch.tensor(group),
        "yes_no": torch.tensor([item["yes_no"] for item in batch]),
    }


def shared_loss(logits: torch.Tensor, context: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """One softmax over the no-answer position (the mean of the windows' first-token logits) and every context token
    of every window; minus the log of the probability of the gold positions (all places the answer sits, or no
    answer when none)."""
    null = logits[:, 0].mean().unsqueeze(0)
    scores = torch.cat([null, logits[context]])
    gold_scores = logits[gold] if gold.any() else null
    return torch.logsumexp(scores, 0) - torch.logsumexp(gold_scores, 0)


def loss_of(model, batch: dict, bf16: bool) -> torch.Tensor:
    """Per span question, the shared-normalization loss of start and end over all its windows; per yes/no row, the
    yes/no head's cross-entropy on its window's first token."""
    with torch.autocast(batch["input_ids"].device.type, dtype=torch.bfloat16, enabled=bf16):
        starts, ends, yes_no = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    losses = []
    for g, label in enumerate(batch["yes_no"].tolist()):
        rows = batch["group"] == g
        if label != IGNORE:
            first = int(rows.nonzero()[0])
            target = torch.tensor([label], device=yes_no.device)
            losses.append(torch.nn.functional.cross_entropy(yes_no[first : first + 1], target))
            continue
        context = batch["context"][rows]
        start = shared_loss(starts[rows], context, batch["starts"][rows])
        end = shared_loss(ends[rows], context, batch["ends"][rows])
        losses.append((start + end) / 2)
    return torch.stack(losses).mean()
