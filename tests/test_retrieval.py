"""Retrieval among many documents: the article hidden among generated news stories that share its common words
("won the gold medal", other sports), with the real model, Chroma and BM25."""

from pathlib import Path

import pytest

from bot.answer.retrieve import Fusion
from bot.eval.distractors import write_corpus
from bot.eval.metrics import evidence_rank
from bot.eval.running import load_dataset
from bot.event_bot import EventBot
from bot.indexing import build_index
from bot.settings import Settings

ARTICLE = Path(__file__).resolve().parent.parent / "data" / "event-article.txt"
QUESTIONS = Path(__file__).resolve().parent.parent / "data" / "eval" / "event_qa.jsonl"


@pytest.fixture(scope="module")
def crowded(tmp_path_factory) -> EventBot:
    tmp = tmp_path_factory.mktemp("crowded")
    settings = Settings(index_dir=tmp / "index", chroma_url=None, collection="crowded")
    build_index(settings, [write_corpus(tmp / "news", 60)[0].parent, ARTICLE])
    return EventBot(settings)


def hit_rate(bot: EventBot) -> float:
    items = [i for i in load_dataset(QUESTIONS) if i.answerable and i.evidence and not i.history and not i.conversation]
    hits = [evidence_rank(i.evidence, [p.text for p in bot.retriever(i.question)]) is not None for i in items]
    return sum(hits) / len(hits)


def test_the_document_step_finds_the_article_among_distractors(crowded):
    with_documents = hit_rate(crowded)
    crowded.retriever.fusion = Fusion(documents=0)  # dense + BM25 over chunks alone
    try:
        without = hit_rate(crowded)
    finally:
        crowded.retriever.fusion = Fusion()
    assert with_documents >= 0.95, (with_documents, without)
    assert with_documents > without, (with_documents, without)


def test_the_document_step_keeps_the_best_documents_by_their_rare_words(crowded):
    top = crowded.retriever.keywords.top_documents("Who won the gold medal in the women's free skate?", 3)
    assert top[0] == str(ARTICLE.resolve())
    passages = crowded.retriever("Who won the gold medal in the women's free skate?")
    assert len(passages) == crowded.settings.top_k
    assert passages[0].source == ARTICLE.name
