"""The questions the bench asks: the article's own (timed and scored as `eventbot eval` scores them), other
questions about it to warm a process up, and distinct rewordings so that no server's cache answers a request."""

from __future__ import annotations

from bot.eval.items import DEFAULT_DATASETS_DIR, EvalItem, load_dataset

WARM_UP_SETS = ["event_qa_fresh.jsonl", "event_qa_unseen.jsonl"]
OPENERS = ["", "Tell me: ", "Quick question: ", "Please answer: ", "I'd like to know: ", "One more: ", "Question: "]


def article_items() -> list[EvalItem]:
    """The article's own questions that stand alone (no history, no conversation)."""
    items = load_dataset(DEFAULT_DATASETS_DIR / "event_qa.jsonl")
    return [i for i in items if not i.history and not i.conversation]


def warm_up_questions() -> list[str]:
    """Other questions about the article (held-out sets), to warm a process without seeing the timed ones."""
    timed = {i.question for i in article_items()}
    found: list[str] = []
    for name in WARM_UP_SETS:
        path = DEFAULT_DATASETS_DIR / name
        if path.exists():
            found += [i.question for i in load_dataset(path) if not i.history and not i.conversation]
    return [q for q in dict.fromkeys(found) if q not in timed] or ["Who is Amber Glenn?"]


def new_questions(count: int, offset: int = 0) -> list[str]:
    """`count` distinct questions about the article (its questions, reworded by a few openers), so that no cache
    of a server answers a request it already saw; `offset` starts further along the same list."""
    base = [i.question for i in article_items()]
    variants = [opener + q for opener in OPENERS for q in base]
    return [variants[(offset + n) % len(variants)] for n in range(count)]


OVERVIEW_SETS = ["overview1_qa.jsonl", "overview2_qa.jsonl"]


def overview_questions(overviews: bool = True) -> list[str]:
    """The overview questions of the article's overview sets ("what is this article about"), as people typed them;
    with `overviews` False, their other answerable questions (lists, why and how, sequences, …), which the LLM
    answers in several sentences."""
    items = [i for name in OVERVIEW_SETS for i in load_dataset(DEFAULT_DATASETS_DIR / name)]
    return [i.question for i in items if (i.kind == "overview") == overviews and i.answerable and not i.history]
