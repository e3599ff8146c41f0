"""A history's ranking tables stored beside it: read back as built, never from another history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engram.stores.codeindex._history_source as source
from engram.stores.codeindex._history_cache import (
    TABLES_FILE,
    TABLES_VERSION,
    history_stamp,
    load_tables,
    save_tables,
)
from engram.stores.codeindex._history_evidence import HistoryTables, history_features
from engram.stores.codeindex._history_source import IndexHistory
from engram.stores.history import HISTORY_FILE, History
from engram.stores.history._store import save_history
from tests.unit.stores.test_history import HISTORY, KNOWN

RANKS = {"bm25": ["pkg/parser.py"], "exact": ["pkg/scanner.py"]}
QUERY = "parser crash on empty input"


def features(tables: HistoryTables) -> object:
    return history_features(tables, KNOWN, text_ranks=RANKS, query=QUERY)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    save_history(tmp_path, HISTORY)
    return tmp_path


def stamp_of(folder: Path) -> tuple[int, int, int]:
    stamp = history_stamp(folder / HISTORY_FILE)
    assert stamp is not None
    return stamp


def test_stored_tables_give_the_same_features_and_reasons(folder: Path):
    built = HistoryTables.build(HISTORY)
    save_tables(folder, stamp_of(folder), built, "a note")
    loaded = load_tables(folder, stamp_of(folder))
    assert loaded is not None
    tables, note = loaded
    assert note == "a note"
    assert features(tables) == features(built)
    assert any(
        "touched by 'fix: parser crash" in r for r in features(tables).reasons["pkg/parser.py"]
    )


def test_tables_of_another_history_file_are_not_used(folder: Path):
    old = stamp_of(folder)
    save_tables(folder, old, HistoryTables.build(HISTORY), "")
    save_history(folder, History(head=HISTORY.head, commits=HISTORY.commits[:3]))
    assert stamp_of(folder) != old
    assert load_tables(folder, stamp_of(folder)) is None


def test_tables_are_not_written_for_a_history_that_changed_meanwhile(folder: Path):
    old = stamp_of(folder)
    save_history(folder, History(head=HISTORY.head, commits=HISTORY.commits[:3]))
    save_tables(folder, old, HistoryTables.build(HISTORY), "")
    assert not (folder / TABLES_FILE).exists()


def test_a_vanished_index_folder_is_not_made_again(folder: Path, tmp_path: Path):
    gone = tmp_path / "gone"
    save_tables(gone, stamp_of(folder), HistoryTables.build(HISTORY), "")
    assert not gone.exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(version=TABLES_VERSION + 1),
        lambda d: d["touches"].update({"pkg/parser.py": [0, 99]}),
        lambda d: d["touches"].update({"pkg/parser.py": [-1]}),
        lambda d: d["postings"].update({"parser": [0, 1, 2]}),
        lambda d: d["postings"].update({"parser": [99, 1]}),
        lambda d: d["weights"].pop(),
        lambda d: d.update(functions={}),
        lambda d: d.update(recency=[]),
        lambda d: d.pop("subjects"),
        lambda d: d["touches"].update({"pkg/parser.py": ["0"]}),
    ],
)
def test_a_damaged_tables_file_is_refused(folder: Path, damage):
    save_tables(folder, stamp_of(folder), HistoryTables.build(HISTORY), "")
    data = json.loads((folder / TABLES_FILE).read_text())
    damage(data)
    (folder / TABLES_FILE).write_text(json.dumps(data))
    assert load_tables(folder, stamp_of(folder)) is None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"version": 1}', "\x00\xff"])
def test_a_file_that_is_not_tables_is_refused(folder: Path, text: str):
    (folder / TABLES_FILE).write_text(text, encoding="latin-1")
    assert load_tables(folder, stamp_of(folder)) is None


def test_a_second_process_reads_the_tables_the_first_built(folder: Path, monkeypatch):
    first = IndexHistory(folder, folder).tables()
    assert first is not None
    assert (folder / TABLES_FILE).exists()

    def no_build(history: History) -> HistoryTables:
        raise AssertionError("built again")

    monkeypatch.setattr(source.HistoryTables, "build", no_build)
    second = IndexHistory(folder, folder).tables()
    assert second is not None
    assert features(second) == features(first)


def test_a_history_mined_again_is_read_again(folder: Path):
    history = IndexHistory(folder, folder)
    assert history.tables() is not None
    save_history(folder, History(head="f" * 40, commits=HISTORY.commits[:1], note="cut"))
    tables = history.tables()
    assert tables is not None
    assert len(tables.weights) == 1
    assert history.note() == "cut"
    assert load_tables(folder, stamp_of(folder)) is not None


def test_no_history_file_says_to_index(tmp_path: Path):
    history = IndexHistory(tmp_path, tmp_path)
    assert history.tables() is None
    assert "engram index" in history.note()
    assert not (tmp_path / TABLES_FILE).exists()
