"""`eventbot train-reader`: fine-tunes the installed MiniLM into the reader (SQuAD 2.0 recipe: the first token stands
for "no answer"; a yes/no head on the same token learns BoolQ; AdamW with linear warm-up and decay; word embeddings
frozen). Made for runs of hours on a CPU: windows of 160 tokens (the reader reads a sentence with its neighbours),
bf16 autocast where the CPU has bf16 instructions (else fp32: emulated bf16 is several times slower), a checkpoint at most every few minutes in an ignored folder and `--resume`,
a progress bar with ETA. Deterministic for a seed. Never reads the SQuAD test articles."""

import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from tqdm import tqdm

from bot.reader.model import FROZEN, WEIGHTS_FILE, load_base, trained_state
from bot.training.objective import Group, collate, featurize, loss_of
from index.errors import InputError

log = logging.getLogger(__name__)

CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / ".eventbot" / "training"  # ignored by git


class CheckpointError(InputError, RuntimeError):
    """A checkpoint is in the way (or missing) for what was asked."""


def check_training_paths(
    squad: Path, out: Path, calibrate_only: bool, refit: bool, checkpoint_dir: Path = CHECKPOINT_DIR, resume=False
) -> None:
    """InputError (exit 2, one line) unless the folders hold what `train-reader` was asked to read, and a training
    run's checkpoint is there to resume or not in the way (checked before the minutes of choosing windows)."""
    if not calibrate_only:
        checked_checkpoint(checkpoint_dir, resume)
    if not (squad / "split.json").is_file():
        raise InputError(f"no SQuAD split at {squad}: pass --data DIR (the folder with split.json and dev-v2.0.json)")
    if refit and not (calibrate_only and (out / "calibration.jsonl").is_file()):
        raise InputError(
            f"--refit needs --calibrate-only and the readings of an earlier calibration in {out / 'calibration.jsonl'}"
        )
    if calibrate_only and not (out / WEIGHTS_FILE).is_file():
        raise InputError(
            f"no reader weights at {out / WEIGHTS_FILE} to calibrate: train first (without --calibrate-only)"
        )


@dataclass
class TrainConfig:
    epochs: float = 1.0
    limit: int | None = None  # at most this many questions (a quick run)
    seed: int = 13
    batch_size: int = 4  # questions per step, each with all its windows (about 16 windows)
    lr: float = 5e-5
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_tokens: int = 192  # a window's tokens, question included (Settings.reader_max_tokens)
    windows: int = 4  # windows read per question, as the bot reads them (Settings.reader_windows)
    squad_train: bool = True  # SQuAD 1.1 train (87,599 questions) beside the dev articles' train part
    squad_questions: int | None = 24_000  # SQuAD questions drawn (None: all 100,000 or so)
    other_paragraphs: int = 2  # a SQuAD question's document: its paragraph and this many others of its article
    chat_typed_share: float = 0.3  # this share of SQuAD questions typed as in a chat (lowercase, a typo)
    drop_share: float = 0.2  # this share of answerable questions lose the windows holding the answer
    follow_up_share: float = 0.15  # this share of consecutive question pairs also read as a conversation
    boolq_repeats: int = 1  # BoolQ's yes/no questions (2,600 for training)
    user_question_repeats: int = 3  # questions typed as users type them (data/train) are few; they count thrice
    init: str | None = None  # start from these weights (e.g. the shipped reader) instead of the plain MiniLM
    # bf16 autocast only where the CPU has bf16 instructions (AMX, AVX512-BF16: 1.5x faster steps); elsewhere autocast
    # would emulate bf16, about 3x slower than fp32 (27.7 s a step on an AVX2-only EPYC), so fp32 there
    bf16: bool = field(default_factory=lambda: _bf16_fast())
    checkpoint_minutes: float = 8.0


def _bf16_fast() -> bool:
    from index.embeddings import bf16_fast  # loads the embedding stack: only where no precision was given

    return bf16_fast()


def _trainable_base(config: TrainConfig, base: str | None = None):
    """The base model (all but the frozen word embeddings trained), warm-started from `config.init` when set."""
    model, tokenizer = load_base(base)
    for name, param in model.named_parameters():
        param.requires_grad = name not in FROZEN
    if config.init:
        _warm_start(model, Path(config.init))
    return model, tokenizer


def train(
    config: TrainConfig,
    out: Path,
    groups: list[Group],
    progress: bool = True,
    resume: bool = False,
    checkpoint_dir: Path = CHECKPOINT_DIR,
    base: str | None = None,
    stop_after_s: float | None = None,
) -> dict:
    """Trains and writes `out/reader.safetensors` (fp16, without the frozen word embeddings) and
    `out/training.json` (configuration, data, loss by step). With `resume`, continues from the checkpoint of the
    same configuration in `checkpoint_dir`; without it, a checkpoint there is an error (it would be overwritten).
    On a CUDA GPU where there is one; `base`: the MiniLM folder (default: the installed package's); `stop_after_s`:
    stop early after this many seconds of training (a lease on a borrowed machine), keeping what was learnt."""
    from safetensors.torch import save_file

    torch.manual_seed(config.seed)
    checkpoint = checked_checkpoint(checkpoint_dir, resume)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, tokenizer = _trainable_base(config, base)
    model.to(device)
    questions = featurize(tokenizer, groups, config.max_tokens)
    steps_per_epoch = math.ceil(len(questions) / config.batch_size)
    total = max(1, round(steps_per_epoch * config.epochs))
    optimizer, schedule = _optimizer(model, config, total)
    step, losses, seconds_before = _resume(checkpoint, config, model, optimizer, schedule) if resume else (0, [], 0.0)
    order = _batch_order(len(questions), config, total)
    model.train()
    started = last_save = time.perf_counter()
    precision = "bf16" if config.bf16 else "fp32"
    log.info("training in %s on %s", precision, torch.cuda.get_device_name() if device == "cuda" else "the CPU")
    bar = tqdm(total=total, initial=step, desc=f"training the reader ({precision})", unit="step", disable=not progress)
    running, planned = None, total
    while step < total:
        if stop_after_s is not None and time.perf_counter() - started > stop_after_s:
            log.warning("stopped after %.0f s at step %d of %d", time.perf_counter() - started, step, total)
            total = step
            break
        batch = {k: v.to(device) for k, v in collate([questions[i] for i in order[step]]).items()}
        loss = _step(model, optimizer, schedule, batch, config.bf16)
        step += 1
        if math.isfinite(loss):
            running = loss if running is None else 0.98 * running + 0.02 * loss
        losses.append((step, round(loss, 4)))
        bar.update(1)
        bar.set_postfix(loss=f"{running:.3f}" if running is not None else "nan")
        if time.perf_counter() - last_save > config.checkpoint_minutes * 60 and step < total:
            elapsed = seconds_before + time.perf_counter() - started
            _save_checkpoint(checkpoint, config, model, optimizer, schedule, step, losses, elapsed)
            last_save = time.perf_counter()
    bar.close()
    save_file(trained_state(model), str(out / WEIGHTS_FILE))
    seconds = round(seconds_before + time.perf_counter() - started, 1)
    report = _report(config, groups, total, planned, seconds, losses)
    (out / "training.json").write_text(json.dumps(report))
    checkpoint.unlink(missing_ok=True)
    return report


def _report(config: TrainConfig, groups: list[Group], steps: int, planned: int, seconds: float, losses) -> dict:
    """What `training.json` keeps of a run: its configuration, data, steps (and those planned, when it stopped
    early), time, loss by step, and what made the weights it started from."""
    report = {
        "config": asdict(config),
        **_data_counts(groups),
        "steps": steps,
        **({"steps_planned": planned} if planned != steps else {}),
        "seconds": seconds,
        "losses": losses,
    }
    if config.init:
        report["init_training"] = earlier_training(Path(config.init))
    return report


def earlier_training(weights: Path) -> dict | None:
    """What made the weights a run started from (their training.json, less the losses), so that the model card
    tells the whole chain; None when they came without one."""
    path = weights.with_name("training.json")
    if not path.is_file():
        return None
    earlier = json.loads(path.read_text())
    return {k: v for k, v in earlier.items() if k != "losses"} | {"weights": str(weights)}


def _optimizer(model, config: TrainConfig, total: int):
    """AdamW over the trainable parameters, with linear warm-up and decay over `total` steps."""
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=config.weight_decay
    )
    return optimizer, get_linear_schedule_with_warmup(optimizer, round(total * config.warmup), total)


def _step(model, optimizer, schedule, batch: dict[str, torch.Tensor], bf16: bool) -> float:
    """One optimisation step (gradient clipped at 1.0); the batch's loss. A loss that is not finite is not stepped
    on (one would make every weight NaN), and says so."""
    loss = loss_of(model, batch, bf16)
    if not torch.isfinite(loss):
        log.warning("a batch's loss is %s: skipped", loss.item())
        optimizer.zero_grad()
        schedule.step()
        return float("nan")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    return loss.item()


def checked_checkpoint(checkpoint_dir: Path, resume: bool) -> Path:
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
    log.info("resuming at step %d", saved["step"])
    return saved["step"], saved["losses"], saved.get("seconds", 0.0)


def _data_counts(groups: list[Group]) -> dict[str, int]:
    spans = [g for g in groups if g.yes_no is None]
    return {
        "questions": len(groups),
        "windows": sum(len(g.windows) for g in groups),
        "unanswerable": sum(not g.answerable for g in spans),
        "follow_ups": sum(bool(g.history) for g in spans),
        "yes_no": len(groups) - len(spans),
        "typed_by_users": sum("/" in g.source for g in groups),
    }


def _warm_start(model, weights: Path) -> None:
    """Loads trained reader weights (as shipped: fp16, without the frozen word embeddings) into the model."""
    from safetensors.torch import load_file

    state = {k: v.float() for k, v in load_file(str(weights)).items()}
    model.load_state_dict(state, strict=False)
    log.info("warm-started from %s", weights)


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
