"""Each document's summary (issue 59): its key sentences, chosen once at indexing by the learnt model
(bot.answer.summary), kept with what the bot learnt of the index, shown in the documents list and quoted by an
overview; an unchanged document is not summarized again; with `EVENTBOT_SUMMARIES=off` its opening sentences stand
for it."""

import json
import subprocess
import sys

import numpy as np

from bot.answer.corpus import Corpus
from bot.answer.summary import FEATURES, KEY_SENTENCES, SUMMARY_FILE, SummaryModel, summarize
from bot.learning import knowledge_path, load
from bot.models import shared_embedder, shared_summary_model
from index.store import all_chunks
from index.text.pipeline import parse_document
from tests.conftest import ARTICLE, ROOT, run_cli
from tests.test_long_answers import ARTICLE_TEXT


def test_the_summary_model_file_has_its_card():
    data = json.loads(SUMMARY_FILE.read_text())
    assert tuple(data["features"]) == FEATURES
    card = data["card"]
    assert card["documents"] >= 20 and card["key_sentences"] >= 2 * card["documents"]
    assert 0 < card["key_sentences_found_leave_one_document_out"] <= 1


def test_the_articles_summary_says_who_won_gold_and_silver(bot):
    """The bundled article (no document the model was trained on) is summarized, at indexing, by its key sentences:
    each verbatim, in the article's order, together naming Liu's gold and Sakamoto's silver."""
    (summary,) = bot.knowledge.summaries.values()
    sentences = summary.sentences
    assert 2 <= len(sentences) <= KEY_SENTENCES
    starts = [ARTICLE_TEXT.index(p.text) for p in sentences]
    assert starts == sorted(starts) == [p.start for p in sentences]
    text = " ".join(p.text for p in sentences)
    assert "Alysa Liu" in text and "gold" in text and "silver" in text


def test_an_unchanged_document_keeps_its_summary_and_the_setting_off_takes_the_opening(bot):
    """Summarizing again with the kept summaries reuses them (no embedding: a failing embedder proves it); with no
    model the summary is the document's opening sentences, and it is chosen anew (its way of choosing differs)."""

    class NoEmbedding:
        def embed_documents(self, texts):
            raise AssertionError("an unchanged document was embedded again")

    corpus = Corpus(all_chunks(bot.store), bot.knowledge)
    kept = bot.knowledge.summaries
    again = summarize(corpus, shared_summary_model(), NoEmbedding(), kept)
    assert again == kept
    opening = summarize(corpus, None, NoEmbedding(), kept)
    (path,) = opening
    assert opening[path].digest != kept[path].digest
    texts = [p.text for p in opening[path].sentences]
    assert len(texts) == KEY_SENTENCES and ARTICLE_TEXT.index(texts[0]) < 200
    assert texts == sorted(texts, key=ARTICLE_TEXT.index)


def test_the_model_chooses_no_repeat_and_no_short_line():
    """A headline and the lead that says the same are not both chosen; a dateline-length line never is."""
    texts = [
        "Harbour club wins the county cup after extra time",
        "The Harbour club won the county cup after extra time on Saturday, beating Dunmore 3-2.",
        "By staff.",
        "A crowd of 18,406 watched the final at Kelsall Park.",
        "Dunmore had a player sent off with 18 minutes left.",
        "The captain said it was the best day of her life.",
    ]
    vectors = np.asarray(shared_embedder(False).embed_documents(texts))
    chosen = shared_summary_model().key_sentences(texts, vectors, [parse_document(t)[0] for t in texts])
    assert 2 not in chosen and not {0, 1} <= set(chosen)
    assert chosen == sorted(chosen) and len(chosen) == 4  # six lines, less the short one and a repeat


def test_the_documents_list_shows_each_summary(tmp_path):
    """`eventbot index` writes the summaries with the index; the documents list (as the API and the chat show it)
    carries each one. A bot started with EVENTBOT_SUMMARIES=off on that index shows the opening sentences instead:
    summaries chosen another way are chosen again, without indexing again."""
    from bot.event_bot import EventBot
    from bot.library import documents
    from bot.settings import Settings

    run_cli("index", str(ARTICLE), env={"EVENTBOT_INDEX_DIR": str(tmp_path)})
    listed = {}
    for setting in ("on", "off"):
        settings = Settings(index_dir=tmp_path, summaries=setting)
        (listed[setting],) = documents(EventBot(settings), settings)
        assert listed[setting]["summary"][:80] in " ".join(ARTICLE_TEXT.split())
    assert "Alysa Liu" in listed["on"]["summary"]
    assert listed["off"]["summary"].startswith("Team USA figure skating star Amber Glenn goes viral")
    assert load(knowledge_path(tmp_path, "eventbot"), None).summaries, "the summaries are kept beside the index"


def test_training_the_summary_model_reproduces_the_shipped_file(tmp_path):
    """`python -m bot.training.summary` (seconds: 28 documents) writes the model that is shipped."""
    out = tmp_path / "summary.json"
    subprocess.run([sys.executable, "-m", "bot.training.summary", "--out", str(out)], check=True, cwd=ROOT)
    trained, shipped = SummaryModel.load(out), SummaryModel.load()
    assert np.allclose(trained.weights, shipped.weights, atol=1e-4) and abs(trained.bias - shipped.bias) < 1e-4
