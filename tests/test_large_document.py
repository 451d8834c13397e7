"""No question may cost the whole corpus (issue 12). Beside the article, one long generated document (a news digest
of over 300 KB, about 2,000 sentences): questions whose passages do not answer them used to read every sentence of
the documents those passages came from (embedding them all, and their words); now they read a bounded
neighbourhood. Checked by what was embedded and by what was looked at, warm, against the article's own questions in
the same index (counts, not times: times are `eventbot bench`'s); /healthz counts come from counts kept by indexing."""

import statistics

import pytest

from bot.eval.distractors import write_large_document
from tests.conftest import ARTICLE

# Questions whose retrieved passages do not hold the answer: the reader falls back to reading around them.
FALLBACK_QUESTIONS = [
    "Which company opened a plant?",
    "Which nation does Sakamoto represent?",
    "Why did Sakamoto cry?",
    "who coached the rowing team?",
    "What did the mayor say about the tram line?",
    "Who is Kaori Sakamoto?",
]
ARTICLE_QUESTIONS = [
    "Who consoled Sakamoto?",
    "Who shielded Sakamoto from the camera?",
    "How many points separated Liu and Sakamoto?",
    "How old is Sakamoto?",
    "Where did Glenn finish?",
]
# Texts one question may have the model embed: the question and the sentences of its passages (top_k = 6 chunks of
# 400 characters: about 30 sentences). Reading the whole digest embedded its ~2,000 sentences.
MAX_EMBEDDED_PER_QUESTION = 60
# Warm, a fallback question looks at (the vectors of) at most this many times the texts an article question looks at;
# reading the whole digest looked at its ~3,000 sentences and their words.
LOOKED_AT_RATIO_LIMIT = 5.0


@pytest.fixture(scope="module")
def large_bot(tmp_path_factory):
    from bot.event_bot import EventBot
    from bot.indexing import build_index
    from bot.settings import Settings

    tmp = tmp_path_factory.mktemp("large")
    digest = write_large_document(tmp / "docs" / "digest.txt", min_bytes=300_000)
    assert digest.stat().st_size >= 300_000
    # no answer cache: these tests count what reading a question costs, every time it is asked
    settings = Settings(index_dir=tmp / "index", chroma_url=None, collection="large", answer_cache_entries=0)
    build_index(settings, [ARTICLE, digest])
    return EventBot(settings)


def test_digest_is_long(large_bot):
    digest = next(p for p in large_bot.knowledge.sources if p.endswith("digest.txt"))
    # sentences in all: reading them would break the bounds
    assert large_bot.knowledge.n > 30 * MAX_EMBEDDED_PER_QUESTION
    assert digest


def test_a_fallback_question_embeds_a_bounded_number_of_texts(large_bot):
    vectors = large_bot.retriever.vectors
    for question in FALLBACK_QUESTIONS:
        before = vectors.misses
        large_bot.ask(question)
        assert vectors.misses - before <= MAX_EMBEDDED_PER_QUESTION, question


def test_fallback_questions_cost_a_few_article_answers(large_bot, monkeypatch):
    for question in ARTICLE_QUESTIONS + FALLBACK_QUESTIONS:  # warm: every text each one needs is cached
        large_bot.ask(question)
    vectors = large_bot.retriever.vectors
    looked_at: set[str] = set()
    lookup = vectors.vectors

    def counted(texts: list[str]):
        looked_at.update(texts)
        return lookup(texts)

    monkeypatch.setattr(vectors, "vectors", counted)

    def texts_looked_at(question: str) -> int:
        looked_at.clear()
        large_bot.ask(question)
        return len(looked_at)

    article_median = statistics.median(texts_looked_at(q) for q in ARTICLE_QUESTIONS)
    for question in FALLBACK_QUESTIONS:
        ratio = texts_looked_at(question) / article_median
        assert ratio <= LOOKED_AT_RATIO_LIMIT, f"{question!r} looked at {ratio:.1f}× the texts of an article question"


def test_answers_beside_a_long_document_stay_right(large_bot):
    # (not "Who won the gold medal?": the digest's sports pages have gold medallists of their own)
    assert "25" in large_bot.ask("How old is Sakamoto?").answer
    assert "1.91" in large_bot.ask("How many points separated Liu and Sakamoto?").answer
    assert large_bot.ask("What did the mayor say about the weather on the moon?").abstained


def test_stats_come_from_counts_kept_by_indexing(large_bot, monkeypatch):
    from chromadb.api.models.Collection import Collection

    def read_chunks(*args, **kwargs):
        raise AssertionError("/healthz read the chunks")

    monkeypatch.setattr(Collection, "get", read_chunks)  # any read of chunks (their metadata too) fails the test
    stats = large_bot.stats()
    assert stats["documents"] == 2
    assert stats["chunks"] == large_bot.retriever.chunks > 700
