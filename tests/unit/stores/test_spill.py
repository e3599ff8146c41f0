from __future__ import annotations

from engram.stores.spill import (
    SPILL_DIR,
    SPILL_LIMIT_CHARS,
    find_spill_path,
    session_spill_folder,
    spill_if_large,
)


def test_small_output_is_untouched(tmp_path):
    result = spill_if_large(tmp_path, "grep_code", "c1", "short")
    assert result.text == "short" and result.path is None
    assert not (tmp_path / SPILL_DIR).exists()


def test_large_output_is_saved_whole_with_previews(tmp_path):
    lines = [f"line {i:06d}" for i in range(5_000)]
    text = "\n".join(lines)
    assert len(text) > SPILL_LIMIT_CHARS
    result = spill_if_large(tmp_path, "run/shell", "call:1", text)
    assert result.path is not None and result.path.startswith(".engram/tool-outputs/")
    saved = (tmp_path / result.path).read_text(encoding="utf-8")
    assert saved == text
    assert result.path in result.text
    assert "line 000000" in result.text and "line 004999" in result.text
    assert "line 002500" not in result.text
    assert len(result.text) < SPILL_LIMIT_CHARS // 4
    assert find_spill_path(result.text) == result.path
    assert not list((tmp_path / SPILL_DIR).glob(".tmp-*"))


def test_limit_is_a_parameter_and_names_are_safe(tmp_path):
    result = spill_if_large(tmp_path, "../../evil", "../id", "x" * 11, session="../t", limit=10)
    assert result.path is not None
    folder = (tmp_path / result.path).resolve().parent
    assert folder.parent == (tmp_path / SPILL_DIR).resolve()
    assert folder.name == "t"


def test_each_session_spills_into_its_own_folder(tmp_path):
    a = spill_if_large(tmp_path, "t", "c", "a" * 20, session="one", limit=10)
    b = spill_if_large(tmp_path, "t", "c", "a" * 20, session="two", limit=10)
    assert a.path is not None and a.path.startswith(session_spill_folder("one") + "/")
    assert b.path is not None and b.path.startswith(session_spill_folder("two") + "/")


def test_same_call_different_output_does_not_overwrite(tmp_path):
    a = spill_if_large(tmp_path, "t", "c", "a" * 20, limit=10)
    b = spill_if_large(tmp_path, "t", "c", "b" * 20, limit=10)
    assert a.path != b.path


def test_find_spill_path_none_for_plain_text():
    assert find_spill_path("nothing here") is None
