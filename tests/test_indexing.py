"""Loader, splitter and idempotent indexing, against the real model and a real embedded Chroma."""

import json

import pytest

from index.chunking import split_documents
from index.loaders import DocumentLoadError, load_documents
from tests.conftest import ARTICLE, run_cli


def test_loader_keeps_title_and_source():
    [doc] = load_documents([ARTICLE])
    assert doc.metadata["source"] == "event-article.txt"
    assert doc.metadata["title"].startswith("Team USA figure skating star Amber Glenn")
    assert doc.page_content == ARTICLE.read_text(encoding="utf-8").strip()


def test_html_is_read_as_text(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Race day</title><script>x=1</script></head><body><p>Kiprop won the race.</p></body></html>"
    )
    [doc] = load_documents([page])
    assert doc.metadata["title"] == "Race day"
    assert "Kiprop won the race." in doc.page_content and "x=1" not in doc.page_content


@pytest.mark.parametrize("size", [200, 400, 800])
def test_chunks_are_verbatim_at_their_offsets(size):
    docs = load_documents([ARTICLE])
    text = docs[0].page_content
    chunks = split_documents(docs, chunk_size=size, chunk_overlap=size // 5)
    assert len(chunks) > 1
    for chunk in chunks:
        start = chunk.metadata["start"]
        assert text[start : start + len(chunk.page_content)] == chunk.page_content
        assert len(chunk.page_content) <= size
    # every sentence of the article lies whole inside some chunk (sentence-aware splitting)
    for line in filter(None, (line.strip() for line in text.splitlines())):
        if len(line) < size:
            assert any(line in c.page_content for c in chunks), line


def test_missing_and_unsupported_files_are_rejected(tmp_path):
    with pytest.raises(DocumentLoadError, match="no such file"):
        load_documents([tmp_path / "nope.txt"])
    (tmp_path / "data.bin").write_bytes(b"\x00\x01")
    with pytest.raises(DocumentLoadError, match="unsupported"):
        load_documents([tmp_path / "data.bin"])


def index_json(index_dir, *args):
    proc = run_cli("index", *args, "--json", env={"EVENTBOT_INDEX_DIR": str(index_dir)})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_reindex_is_idempotent_and_replaces_only_changed_chunks(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(ARTICLE.read_text(encoding="utf-8"), encoding="utf-8")
    (corpus / "b.md").write_text("# Chess final\n\nMagnus Carlsen won the final on Sunday in Oslo.\n")
    index_dir = tmp_path / "index"

    first = index_json(index_dir, str(corpus))
    assert first["documents"] == 2 and first["added"] == first["chunks"] > 2 and first["removed"] == 0

    second = index_json(index_dir, str(corpus))
    assert second["added"] == 0 and second["unchanged"] == first["chunks"] and second["removed"] == 0

    (corpus / "b.md").write_text("# Chess final\n\nHikaru Nakamura won the final on Monday in Oslo.\n")
    third = index_json(index_dir, str(corpus))
    assert third["added"] == 1 and third["removed"] == 1 and third["unchanged"] == first["chunks"] - 1

    reset = index_json(index_dir, "--reset", str(corpus))
    assert reset["added"] == reset["chunks"] and reset["removed"] == 0


def test_bad_path_exits_2_and_leaves_index_untouched(tmp_path):
    index_dir = tmp_path / "index"
    before = index_json(index_dir, str(ARTICLE))
    proc = run_cli("index", str(tmp_path / "missing.txt"), env={"EVENTBOT_INDEX_DIR": str(index_dir)}, check=False)
    assert proc.returncode == 2
    assert "missing.txt" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    after = index_json(index_dir, str(ARTICLE))
    assert after["added"] == 0 and after["unchanged"] == before["chunks"]


def test_reindexing_a_folder_removes_files_no_longer_there(tmp_path):
    """Issue 11.4: a renamed and a deleted file leave no orphan chunks, and the answer cites the new name."""
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "article.txt").write_text(ARTICLE.read_text(encoding="utf-8"), encoding="utf-8")
    (corpus / "chess.md").write_text("# Chess final\n\nMagnus Carlsen won the chess final on Sunday in Oslo.\n")
    (corpus / "sub" / "rowing.md").write_text("# Rowing\n\nThe Leander crew won the rowing regatta in Henley.\n")
    other = tmp_path / "other.md"  # indexed on its own, outside the folder: must survive
    other.write_text("# Darts\n\nLuke Littler won the darts final in London.\n")
    index_dir = tmp_path / "index"
    env = {"EVENTBOT_INDEX_DIR": str(index_dir)}
    first = index_json(index_dir, str(corpus))
    assert index_json(index_dir, str(other))["added"] == 1

    (corpus / "chess.md").rename(corpus / "chess-final.md")
    (corpus / "sub" / "rowing.md").unlink()
    again = index_json(index_dir, str(corpus))
    assert again["documents"] == 2 and again["removed"] == 2 and again["added"] == 1
    assert again["unchanged"] == first["chunks"] - 2

    from chromadb import PersistentClient

    collection = PersistentClient(path=str(index_dir)).get_collection("eventbot")
    sources = [m["source"] for m in collection.get(include=["metadatas"])["metadatas"]]
    assert collection.count() == again["chunks"] + 1
    assert sorted(set(sources)) == ["article.txt", "chess-final.md", "other.md"]

    answer = json.loads(run_cli("ask", "--json", "Who won the chess final?", env=env).stdout)
    assert "Carlsen" in answer["answer"]
    assert {c["source"] for c in answer["citations"]} == {"chess-final.md"}


def test_html_inline_tags_stay_inside_their_sentence(tmp_path):
    """Issue 11.7: "Ines <b>Moreau</b>" is one name in one sentence; a line break inside a paragraph is a space."""
    page = tmp_path / "race.html"
    page.write_text(
        "<html><head><title>Lyon 10K</title></head><body><h1>Lyon 10K</h1>"
        "<p>The race was won by Ines <b>Moreau</b> of <a href='/club'>AC Lyon</a>,\n"
        "who ran <em>31 minutes</em>.</p><ul><li>Second: Léa Petit</li><li>Third: Zoé Martin</li></ul></body></html>"
    )
    [doc] = load_documents([page])
    assert "The race was won by Ines Moreau of AC Lyon, who ran 31 minutes." in doc.page_content.split("\n\n")
    assert "Second: Léa Petit" in doc.page_content.split("\n\n")  # block tags still end a line

    index_dir = tmp_path / "index"
    index_json(index_dir, str(page))
    answer = json.loads(
        run_cli(  # what is read, whatever the decision to answer says (threshold 0): the name whole, across its tags
            "ask",
            "--json",
            "Who won the Lyon 10K?",
            env={"EVENTBOT_INDEX_DIR": str(index_dir), "EVENTBOT_ANSWER_THRESHOLD": "0"},
        ).stdout
    )
    assert "Ines Moreau" in answer["answer"]


def test_a_file_over_the_size_limit_is_refused_before_indexing(tmp_path):
    """Issue 11.7: a huge file is refused with a one-line reason (exit 2) instead of indexing for an hour."""
    index_dir = tmp_path / "index"
    before = index_json(index_dir, str(ARTICLE))
    big = tmp_path / "big.txt"
    big.write_text("Kiprop won the race. " * 300_000)  # 6.3 MB, over the 5 MB default
    env = {"EVENTBOT_INDEX_DIR": str(index_dir)}
    proc = run_cli("index", str(big), env=env, check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "big.txt" in proc.stderr and "limit" in proc.stderr and "EVENTBOT_MAX_FILE_BYTES" in proc.stderr
    lowered = run_cli("index", str(ARTICLE), env=env | {"EVENTBOT_MAX_FILE_BYTES": "1000"}, check=False)
    assert lowered.returncode == 2 and "limit of 0.001 MB" in lowered.stderr
    after = index_json(index_dir, str(ARTICLE))
    assert after["added"] == 0 and after["unchanged"] == before["chunks"]
