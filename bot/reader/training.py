"""`eventbot train-reader`: fine-tunes the installed MiniLM into the span reader (SQuAD 2.0 recipe: windows of 256
tokens with a stride of 128, the first token stands for "no answer", AdamW with linear warm-up and decay, word
embeddings frozen). Deterministic for a seed; checkpoints so an interrupted run resumes; a progress bar with ETA.
Never reads the SQuAD test articles."""

import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from bot.reader.data import SQUAD_DIR, Example, dev_set_examples, squad_examples, train_titles
from bot.reader.model import FROZEN, MAX_QUESTION_TOKENS, WEIGHTS_FILE, load_base, trained_state

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    epochs: float = 1.5
    limit: int | None = None  # at most this many questions (a quick run)
    seed: int = 13
    batch_size: int = 16
    lr: float = 1e-4
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_tokens: int = 256
    stride: int = 128
    dev_set_repeats: int = 2  # the project's own news questions are few; they count twice
    checkpoint_every: int = 100  # steps


def featurize(tokenizer, examples: list[Example], max_tokens: int, stride: int) -> list[dict]:
    """Windows of question + context with the answer's token positions (0, 0 when the window holds no answer)."""
    windows = []
    for ex in examples:
        question = tokenizer.convert_tokens_to_string(tokenizer.tokenize(ex.question)[:MAX_QUESTION_TOKENS])
        enc = tokenizer(
            question,
            ex.context,
            truncation="only_second",
            max_length=max_tokens,
            stride=max_tokens - stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        for w in range(len(enc["input_ids"])):
            start = end = 0
            if ex.answer_start is not None:
                a_start, a_end = ex.answer_start, ex.answer_start + len(ex.answer)
                seq, offsets = enc.sequence_ids(w), enc["offset_mapping"][w]
                ctx = [i for i, s in enumerate(seq) if s == 1]
                if ctx and offsets[ctx[0]][0] <= a_start and offsets[ctx[-1]][1] >= a_end:
                    start = next(i for i in ctx if offsets[i][1] > a_start)
                    end = next(i for i in reversed(ctx) if offsets[i][0] < a_end)
            windows.append(
                {
                    "input_ids": enc["input_ids"][w],
                    "token_type_ids": enc["token_type_ids"][w],
                    "start": start,
                    "end": end,
                }
            )
    return windows


def collate(batch: list[dict]) -> dict[str, torch.Tensor]:
    """Pads to the longest window of the batch (most windows are shorter than the maximum)."""
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
        "start_positions": torch.tensor([w["start"] for w in batch]),
        "end_positions": torch.tensor([w["end"] for w in batch]),
    }


def training_examples(config: TrainConfig, squad_dir: Path = SQUAD_DIR) -> list[Example]:
    examples = squad_examples(train_titles(squad_dir), squad_dir)
    examples += dev_set_examples(seed=config.seed) * config.dev_set_repeats
    rng = random.Random(config.seed)
    rng.shuffle(examples)
    return examples[: config.limit] if config.limit else examples


def train(config: TrainConfig, out: Path, examples: list[Example], progress: bool = True) -> dict:
    """Trains and writes `out/reader.safetensors` (fp16, without the frozen word embeddings) and
    `out/training.json` (configuration, data, loss by step). Resumes from `out/checkpoint.pt` when present."""
    from safetensors.torch import save_file
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(config.seed)
    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_base()
    for name, param in model.named_parameters():
        param.requires_grad = name not in FROZEN
    windows = featurize(tokenizer, examples, config.max_tokens, config.stride)
    steps_per_epoch = math.ceil(len(windows) / config.batch_size)
    total = max(1, round(steps_per_epoch * config.epochs))
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=config.weight_decay
    )
    schedule = get_linear_schedule_with_warmup(optimizer, round(total * config.warmup), total)
    losses: list[tuple[int, float]] = []
    step = 0
    checkpoint = out / "checkpoint.pt"
    if checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=False)
        if saved["config"] == asdict(config):
            model.load_state_dict(saved["model"], strict=False)
            optimizer.load_state_dict(saved["optimizer"])
            schedule.load_state_dict(saved["schedule"])
            step, losses = saved["step"], saved["losses"]
            log.info("resuming at step %d of %d", step, total)
    order = _batch_order(len(windows), config, total)
    model.train()
    started = time.perf_counter()
    bar = tqdm(total=total, initial=step, desc="training the reader", unit="step", disable=not progress)
    running = None
    while step < total:
        batch = collate([windows[i] for i in order[step]])
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        losses.append((step, round(loss.item(), 4)))
        bar.update(1)
        bar.set_postfix(loss=f"{running:.3f}")
        if step % config.checkpoint_every == 0 and step < total:
            torch.save(
                {
                    "config": asdict(config),
                    "model": {k: v for k, v in model.state_dict().items() if k not in FROZEN},
                    "optimizer": optimizer.state_dict(),
                    "schedule": schedule.state_dict(),
                    "step": step,
                    "losses": losses,
                },
                checkpoint,
            )
    bar.close()
    save_file(trained_state(model), str(out / WEIGHTS_FILE))
    report = {
        "config": asdict(config),
        "questions": len(examples),
        "unanswerable": sum(e.answer_start is None for e in examples),
        "windows": len(windows),
        "steps": total,
        "seconds": round(time.perf_counter() - started, 1),
        "losses": losses,
    }
    (out / "training.json").write_text(json.dumps(report))
    checkpoint.unlink(missing_ok=True)
    return report


def _batch_order(n: int, config: TrainConfig, total: int) -> list[list[int]]:
    """The windows of every step, fixed by the seed (so a resumed run sees the same batches)."""
    rng = random.Random(config.seed)
    batches: list[list[int]] = []
    while len(batches) < total:
        order = list(range(n))
        rng.shuffle(order)
        batches += [order[i : i + config.batch_size] for i in range(0, n, config.batch_size)]
    return batches[:total]
