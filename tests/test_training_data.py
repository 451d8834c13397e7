"""The questions typed as users type them (data/train/): training data only, so they must be right as data: every
answer is verbatim in its document and inside its evidence sentence, and each becomes a training example."""

import json

from bot.training.examples import USER_QUESTIONS_DIR, user_question_examples


def items():
    for path in sorted(USER_QUESTIONS_DIR.glob("*/*.jsonl")):
        document = path.with_suffix(".txt").read_text()
        for line in path.read_text().splitlines():
            row = json.loads(line)
            for turn in row.get("turns", [row]):
                yield path.stem, document, turn


def test_there_are_many_documents_of_many_kinds_and_thousands_of_questions():
    documents = list(USER_QUESTIONS_DIR.glob("*/*.txt"))
    assert len(documents) >= 50
    questions = list(items())
    assert len(questions) >= 3000
    kinds = {turn["kind"] for _, _, turn in questions}
    assert {"yes-no", "unanswerable", "follow-up", "why"} <= kinds


def test_every_answer_is_verbatim_in_its_document_and_inside_its_evidence():
    for name, document, turn in items():
        if not turn["answerable"]:
            assert turn["answers"] == [], (name, turn["question"])
            continue
        assert turn["evidence"] in document, (name, turn["question"])
        for answer in turn["answers"]:
            assert answer in turn["evidence"], (name, turn["question"], answer)


def test_each_answerable_question_becomes_an_example_whose_answer_sits_where_it_says():
    examples = user_question_examples()
    spans = [ex for ex in examples if ex.answer_start is not None]
    assert len(spans) > 2000
    for ex in spans:
        assert ex.context[ex.answer_start : ex.answer_start + len(ex.answer)] == ex.answer
    assert sum(ex.yes_no is not None for ex in examples) >= 250
    assert sum(bool(ex.history) for ex in examples) >= 250
