"""Spilled tool outputs: saved whole in the project's state folder, named by the path the model reads."""

from __future__ import annotations

from pathlib import Path

from engram.stores.files import (
    find_spill_path,
    session_spill_folder,
    spill_if_large,
    spilled_folder,
)
from engram.stores.files._spill import SPILL_FOLDER, SPILL_LIMIT_CHARS
from tests.support.state import state_of


def _saved(state, virtual: str) -> Path:
    """Return the real file of a spilled output's model-facing path."""
    folder, name = virtual.rsplit("/", 1)
    return spilled_folder(state, folder) / name


def test_small_output_is_untouched(tmp_path):
    state = state_of(tmp_path)
    result = spill_if_large(state, "grep_code", "c1", "short")
    assert result.text == "short" and result.path is None
    assert not state.path(SPILL_FOLDER).exists()


def test_large_output_is_saved_whole_with_previews(tmp_path):
    state = state_of(tmp_path)
    lines = [f"line {i:06d}" for i in range(5_000)]
    text = "\n".join(lines)
    assert len(text) > SPILL_LIMIT_CHARS
    result = spill_if_large(state, "run/shell", "call:1", text)
    assert result.path is not None and result.path.startswith(".engram/tool-outputs/")
    assert _saved(state, result.path).read_text(encoding="utf-8") == text
    assert not (tmp_path / ".engram").exists()  # nothing is written into the project
    assert result.path in result.text
    assert "line 000000" in result.text and "line 004999" in result.text
    assert "line 002500" not in result.text
    assert len(result.text) < SPILL_LIMIT_CHARS // 4
    assert find_spill_path(result.text) == result.path
    assert not list(state.path(SPILL_FOLDER).rglob(".tmp-*"))


def test_limit_is_a_parameter_and_names_are_safe(tmp_path):
    state = state_of(tmp_path)
    result = spill_if_large(state, "../../evil", "../id", "x" * 11, session="../t", limit=10)
    assert result.path is not None
    folder = _saved(state, result.path).resolve().parent
    assert folder.parent == state.path(SPILL_FOLDER).resolve()
    assert folder.name == "t"


def test_each_session_spills_into_its_own_folder(tmp_path):
    state = state_of(tmp_path)
    a = spill_if_large(state, "t", "c", "a" * 20, session="one", limit=10)
    b = spill_if_large(state, "t", "c", "a" * 20, session="two", limit=10)
    assert a.path is not None and a.path.startswith(session_spill_folder("one") + "/")
    assert b.path is not None and b.path.startswith(session_spill_folder("two") + "/")


def test_same_call_different_output_does_not_overwrite(tmp_path):
    state = state_of(tmp_path)
    a = spill_if_large(state, "t", "c", "a" * 20, limit=10)
    b = spill_if_large(state, "t", "c", "b" * 20, limit=10)
    assert a.path != b.path


def test_find_spill_path_none_for_plain_text():
    assert find_spill_path("nothing here") is None
