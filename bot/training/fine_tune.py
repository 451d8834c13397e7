"""`eventbot train-reader`: fine-tunes the installed MiniLM into the reader (SQuAD 2.0 recipe: the first token stands
for "no answer"; a yes/no head on the same token learns BoolQ; AdamW with linear warm-up and decay; word embeddings
frozen). Made for runs of hours on a CPU: windows of 160 tokens (the reader reads a sentence with its neighbours),
bf16 autocast (the CPU's matrix units), a checkpoint at most every few minutes in an ignored folder and `--resume`,
a progress bar with ETA. Deterministic for a seed. Never reads the SQuAD test articles."""

import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from bot.reader.model import FROZEN, WEIGHTS_FILE, load_base, question_text, trained_state
from bot.training.examples import (
    SQUAD_DIR,
    Example,
    boolq_examples,
    by_paragraph,
    dev_set_examples,
    follow_ups,
    retrieval_negatives,
    squad_examples,
    squad_train_examples,
    train_titles,
)
from index.errors import InputError

log = logging.getLogger(__name__)

CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / ".eventbot" / "training"  # ignored by git
IGNORE = -100  # a label the loss skips (no span for a BoolQ row, no yes/no for a span row)


class CheckpointError(InputError, RuntimeError):
    """A checkpoint is in the way (or missing) for what was asked."""


@dataclass
class TrainConfig:
    epochs: float = 1.0
    limit: int | None = None  # at most this many questions (a quick run)
    seed: int = 13
    batch_size: int = 16
    lr: float = 1e-4
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_tokens: int = 160
    stride: int = 64  # tokens shared by consecutive windows of a long context
    squad_train: bool = True  # SQuAD 1.1 train (87,599 questions) beside the dev articles' train part
    negative_share: float = 0.25  # this share of answerable questions also read against another paragraph
    follow_up_share: float = 0.15  # this share of consecutive question pairs also read as a conversation
    boolq_repeats: int = 3  # BoolQ's yes/no questions are few (2,600 for training); they count three times
    dev_set_repeats: int = 2  # the project's own news questions are few; they count twice
    bf16: bool = True  # torch.autocast on the CPU's bf16 units (1.5x faster steps here)
    checkpoint_minutes: float = 8.0


def training_examples(config: TrainConfig, squad_dir: Path = SQUAD_DIR) -> list[Example]:
    """Every training question, shuffled by the seed: SQuAD (1.1 train and the dev articles' train part, never a
    held-out or test article), negatives and follow-ups made from them, BoolQ's training titles, the dev sets."""
    rng = random.Random(config.seed)
    articles = by_paragraph(squad_examples(train_titles(squad_dir), squad_dir))
    if config.squad_train:
        articles += squad_train_examples(squad_dir)
    examples = [ex for paragraphs in articles for questions in paragraphs for ex in questions]
    examples += retrieval_negatives(articles, config.negative_share, rng)
    examples += follow_ups(articles, config.follow_up_share, rng)
    examples += boolq_examples(held_out=False) * config.boolq_repeats
    examples += dev_set_examples(seed=config.seed) * config.dev_set_repeats
    rng.shuffle(examples)
    return examples[: config.limit] if config.limit else examples


def featurize(tokenizer, examples: list[Example], max_tokens: int, stride: int, seed: int = 0) -> list[dict]:
    """One window of question + context per example, tokenized in batches: for an answer, one of the windows that
    hold it (chosen by the seed, so the answer sits anywhere in a window) with its token positions; for no answer,
    one window with the first token as the answer; for a yes/no question, the passage's first window and its label."""
    rng = random.Random(seed)
    windows = []
    for at in range(0, len(examples), 512):
        batch = examples[at : at + 512]
        enc = tokenizer(
            [question_text(tokenizer, ex.question, ex.history) for ex in batch],
            [ex.context for ex in batch],
            truncation="only_second",
            max_length=max_tokens,
            stride=stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        per_example: dict[int, list[tuple[int, int, int]]] = {}
        for w, i in enumerate(enc["overflow_to_sample_mapping"]):
            per_example.setdefault(i, []).append((w, *_answer_tokens(batch[i], enc, w)))
        for i, ex in enumerate(batch):
            options = per_example.get(i, [])
            holding = [o for o in options if o[1] > 0]
            if not options:
                continue
            if ex.yes_no is not None:
                w, start, end, yes_no = options[0][0], IGNORE, IGNORE, int(ex.yes_no)
            elif ex.answer_start is not None and holding:
                w, start, end = rng.choice(holding)
                yes_no = IGNORE
            elif ex.answer_start is None:
                w, start, end, yes_no = rng.choice(options)[0], 0, 0, IGNORE
            else:
                continue  # the question is too long to leave the answer room
            windows.append(
                {
                    "input_ids": enc["input_ids"][w],
                    "token_type_ids": enc["token_type_ids"][w],
                    "start": start,
                    "end": end,
                    "yes_no": yes_no,
                }
            )
    return windows


def _answer_tokens(ex: Example, enc, w: int) -> tuple[int, int]:
    """The answer's first and last token in window `w` (0, 0 when the window does not hold all of it)."""
    if ex.answer_start is None:
        return 0, 0
    a_start, a_end = ex.answer_start, ex.answer_start + len(ex.answer)
    seq, offsets = enc.sequence_ids(w), enc["offset_mapping"][w]
    ctx = [i for i, s in enumerate(seq) if s == 1]
    if not ctx or offsets[ctx[0]][0] > a_start or offsets[ctx[-1]][1] < a_end:
        return 0, 0
    start = next(i for i in ctx if offsets[i][1] > a_start)
    end = next(i for i in reversed(ctx) if offsets[i][0] < a_end)
    return start, end


def collate(batch: list[dict]) -> dict[str, torch.Tensor]:
    """Pads to the longest window of the batch (many windows are shorter than the maximum)."""
    width = max(len(w["input_ids"]) for w in batch)
    ids = torch.zeros(len(batch), width, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, w in enumerate(batch):
        n = len(w["input_ids"])
        ids[i, :n] = torch.tensor(w["input_ids"])
        types[i, :n] = torch.tensor(w["token_type_ids"])
        mask[i, :n] = 1
    return {
        "input_ids": ids,
        "token_type_ids": types,
        "attention_mask": mask,
        "start": torch.tensor([w["start"] for w in batch]),
        "end": torch.tensor([w["end"] for w in batch]),
        "yes_no": torch.tensor([w["yes_no"] for w in batch]),
    }


def loss_of(model, batch: dict[str, torch.Tensor], bf16: bool) -> torch.Tensor:
    """Span loss (start and end cross-entropy) on span rows plus yes/no cross-entropy on BoolQ rows."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        starts, ends, yes_no = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    ce = torch.nn.functional.cross_entropy
    loss = torch.zeros(())
    if (batch["start"] != IGNORE).any():
        loss = (
            loss + (ce(starts, batch["start"], ignore_index=IGNORE) + ce(ends, batch["end"], ignore_index=IGNORE)) / 2
        )
    if (batch["yes_no"] != IGNORE).any():
        loss = loss + ce(yes_no, batch["yes_no"], ignore_index=IGNORE)
    return loss


def train(
    config: TrainConfig,
    out: Path,
    examples: list[Example],
    progress: bool = True,
    resume: bool = False,
    checkpoint_dir: Path = CHECKPOINT_DIR,
) -> dict:
    """Trains and writes `out/reader.safetensors` (fp16, without the frozen word embeddings) and
    `out/training.json` (configuration, data, loss by step). With `resume`, continues from the checkpoint of the
    same configuration in `checkpoint_dir`; without it, a checkpoint there is an error (it would be overwritten)."""
    from safetensors.torch import save_file

    torch.manual_seed(config.seed)
    checkpoint = _checked_checkpoint(checkpoint_dir, resume)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_base()
    for name, param in model.named_parameters():
        param.requires_grad = name not in FROZEN
    windows = featurize(tokenizer, examples, config.max_tokens, config.stride, config.seed)
    steps_per_epoch = math.ceil(len(windows) / config.batch_size)
    total = max(1, round(steps_per_epoch * config.epochs))
    optimizer, schedule = _optimizer(model, config, total)
    losses: list[tuple[int, float]] = []
    step, seconds_before = 0, 0.0
    if resume:
        step, losses, seconds_before = _resume(checkpoint, config, model, optimizer, schedule)
        log.info("resuming at step %d of %d", step, total)
    order = _batch_order(len(windows), config, total)
    model.train()
    started = last_save = time.perf_counter()
    bar = tqdm(total=total, initial=step, desc="training the reader", unit="step", disable=not progress)
    running = None
    while step < total:
        loss = _step(model, optimizer, schedule, collate([windows[i] for i in order[step]]), config.bf16)
        step += 1
        running = loss if running is None else 0.98 * running + 0.02 * loss
        losses.append((step, round(loss, 4)))
        bar.update(1)
        bar.set_postfix(loss=f"{running:.3f}")
        if time.perf_counter() - last_save > config.checkpoint_minutes * 60 and step < total:
            elapsed = seconds_before + time.perf_counter() - started
            _save_checkpoint(checkpoint, config, model, optimizer, schedule, step, losses, elapsed)
            last_save = time.perf_counter()
    bar.close()
    save_file(trained_state(model), str(out / WEIGHTS_FILE))
    report = {
        "config": asdict(config),
        **_data_counts(examples),
        "windows": len(windows),
        "steps": total,
        "seconds": round(seconds_before + time.perf_counter() - started, 1),
        "losses": losses,
    }
    (out / "training.json").write_text(json.dumps(report))
    checkpoint.unlink(missing_ok=True)
    return report


def _optimizer(model, config: TrainConfig, total: int):
    """AdamW over the trainable parameters, with linear warm-up and decay over `total` steps."""
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=config.weight_decay
    )
    return optimizer, get_linear_schedule_with_warmup(optimizer, round(total * config.warmup), total)


def _step(model, optimizer, schedule, batch: dict[str, torch.Tensor], bf16: bool) -> float:
    """One optimisation step (gradient clipped at 1.0); the batch's loss."""
    loss = loss_of(model, batch, bf16)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    return loss.item()


def _checked_checkpoint(checkpoint_dir: Path, resume: bool) -> Path:
    """The checkpoint's path; an error when one is there and not resumed (it would be overwritten), or resumed and
    not there."""
    checkpoint = checkpoint_dir / "checkpoint.pt"
    if checkpoint.exists() and not resume:
        raise CheckpointError(f"a training checkpoint is at {checkpoint}: pass --resume to continue it, or delete it")
    if resume and not checkpoint.exists():
        raise CheckpointError(f"no training checkpoint at {checkpoint} to resume")
    return checkpoint


def _resume(checkpoint: Path, config, model, optimizer, schedule) -> tuple[int, list, float]:
    """Loads the checkpoint into the model, optimizer and schedule; its step, losses and seconds so far."""
    saved = torch.load(checkpoint, weights_only=False)
    if saved["config"] != asdict(config):
        raise CheckpointError(f"the checkpoint at {checkpoint} was made with other settings: {saved['config']}")
    model.load_state_dict(saved["model"], strict=False)
    optimizer.load_state_dict(saved["optimizer"])
    schedule.load_state_dict(saved["schedule"])
    return saved["step"], saved["losses"], saved.get("seconds", 0.0)


def _data_counts(examples: list[Example]) -> dict[str, int]:
    return {
        "questions": len(examples),
        "unanswerable": sum(e.answer_start is None and e.yes_no is None for e in examples),
        "follow_ups": sum(bool(e.history) for e in examples),
        "yes_no": sum(e.yes_no is not None for e in examples),
    }


def _save_checkpoint(path: Path, config, model, optimizer, schedule, step, losses, seconds) -> None:
    """Written beside, then renamed: a run killed while saving keeps the previous checkpoint."""
    state = {
        "config": asdict(config),
        "model": {k: v for k, v in model.state_dict().items() if k not in FROZEN},
        "optimizer": optimizer.state_dict(),
        "schedule": schedule.state_dict(),
        "step": step,
        "losses": losses,
        "seconds": seconds,
    }
    torch.save(state, path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)
    log.info("checkpoint at step %d", step)


def _batch_order(n: int, config: TrainConfig, total: int) -> list[list[int]]:
    """The windows of every step, fixed by the seed (so a resumed run sees the same batches)."""
    rng = random.Random(config.seed)
    batches: list[list[int]] = []
    while len(batches) < total:
        order = list(range(n))
        rng.shuffle(order)
        batches += [order[i : i + config.batch_size] for i in range(0, n, config.batch_size)]
    return batches[:total]
