"""Training the reader on a borrowed machine with a GPU, which has torch and transformers but none of the bot's other
packages and no network. Here, `export` writes what that machine needs into one folder: the training questions as
the windows the bot would read (built with spaCy and the SQuAD files, which stay here) and the MiniLM's frozen word
embeddings with its tokenizer. There, `train` fine-tunes from them with the same loss and loop as
`eventbot train-reader` (bot.training.fine_tune), in bf16 on the GPU, and writes `reader.safetensors` and
`training.json`; back here, `eventbot train-reader --out DIR --calibrate-only` learns when to answer.

    python -m bot.training.accelerated export DIR [--squad-questions N] [--limit N]
    python -m bot.training.accelerated train DIR --out OUT --init WEIGHTS [--epochs N] [--batch-size N] [--lr X]
                                             [--stop-after-minutes M]
"""

import argparse
import json
import logging
import shutil
from dataclasses import asdict, replace
from pathlib import Path

import torch

from bot.reader.model import FROZEN
from bot.training.fine_tune import TrainConfig, train
from bot.training.objective import load_groups, save_groups

GROUPS_FILE = "groups.json.xz"
CONFIG_FILE = "config.json"
BASE_FOLDER = "base"
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def export(folder: Path, config: TrainConfig) -> int:
    """Writes the training groups for `config`, the configuration, and the base model's folder less every weight
    but the frozen word embeddings (fp16; the rest comes from `--init`); the number of groups."""
    from safetensors.torch import load_file, save_file

    from bot.reader.model import base_model_path
    from bot.training.groups import training_groups

    folder.mkdir(parents=True, exist_ok=True)
    groups = training_groups(config)
    save_groups(groups, folder / GROUPS_FILE)
    (folder / CONFIG_FILE).write_text(json.dumps(asdict(config)))
    source, base = Path(base_model_path()), folder / BASE_FOLDER
    base.mkdir(exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copy(source / name, base / name)
    (name,) = (k.removeprefix("bert.") for k in FROZEN)
    words = load_file(str(source / "model.safetensors"))[name]
    save_file({name: words.to(torch.float16)}, str(base / "model.safetensors"))
    return len(groups)


def train_exported(folder: Path, out: Path, init: Path, stop_after_s: float | None = None, **changes) -> dict:
    """Trains from what `export` wrote, starting from the reader weights `init` (they hold every weight the base
    folder lacks), with `changes` to the exported configuration (epochs, batch size, learning rate)."""
    config = TrainConfig(**json.loads((folder / CONFIG_FILE).read_text()))
    config = replace(config, init=str(init), bf16=torch.cuda.is_available(), **changes)
    groups = load_groups(folder / GROUPS_FILE)
    return train(
        config,
        out,
        groups,
        checkpoint_dir=folder / "checkpoints",
        base=str(folder / BASE_FOLDER),
        stop_after_s=stop_after_s,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bot.training.accelerated", description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    exporting = verbs.add_parser("export", help="write the training data and base model for a GPU machine")
    exporting.add_argument("folder", type=Path)
    exporting.add_argument("--squad-questions", type=int, default=0, help="SQuAD questions drawn (0: all)")
    exporting.add_argument("--limit", type=int, default=None, help="at most this many questions (a quick run)")
    exporting.add_argument("--seed", type=int, default=13)
    training = verbs.add_parser("train", help="train from an exported folder (on the GPU where there is one)")
    training.add_argument("folder", type=Path)
    training.add_argument("--out", type=Path, required=True)
    training.add_argument("--init", type=Path, required=True, help="the reader weights to start from")
    training.add_argument("--epochs", type=float, default=2.0)
    training.add_argument("--batch-size", type=int, default=32)
    training.add_argument("--lr", type=float, default=6e-5)
    training.add_argument("--stop-after-minutes", type=float, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.verb == "export":
        config = TrainConfig(squad_questions=args.squad_questions or None, limit=args.limit, seed=args.seed, bf16=False)
        print(f"{export(args.folder, config)} training questions in {args.folder}")
        return
    stop = args.stop_after_minutes * 60 if args.stop_after_minutes else None
    report = train_exported(
        args.folder, args.out, args.init, stop, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr
    )
    print(f"trained {report['steps']} steps in {report['seconds']:.0f} s; weights in {args.out}")


if __name__ == "__main__":
    main()
