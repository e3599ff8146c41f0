"""Values kept per file while the file is unchanged: reuse, remaking, the racy-write guard."""

from __future__ import annotations

import os

import pytest

from engram.stores.files import SETTLED_NS, FileDerived


def _settle(path, seconds_ago: float = 10.0) -> None:
    """Give ``path`` a modification time well in the past (as a file edited earlier has)."""
    info = path.stat()
    old = info.st_mtime_ns - int(seconds_ago * 1e9)
    os.utime(path, ns=(old, old))


def _counting(path):
    calls = []

    def make() -> str:
        calls.append(1)
        return path.read_text()

    return make, calls


def test_a_settled_file_is_read_once_until_it_changes(tmp_path, monkeypatch):
    file = tmp_path / "a.py"
    file.write_text("one")
    _settle(file)
    known: FileDerived[str] = FileDerived()
    make, calls = _counting(file)
    # the change time is set by the write itself: pretend it is long past
    monkeypatch.setattr(
        "engram.stores.files._derived.time.time_ns", lambda: file.stat().st_ctime_ns + SETTLED_NS
    )
    assert known.get("a", file, make) == "one"
    assert known.get("a", file, make) == "one"
    assert len(calls) == 1
    file.write_text("two!")
    _settle(file)
    assert known.get("a", file, make) == "two!"
    assert len(calls) == 2


def test_a_file_modified_within_the_settling_time_is_never_kept(tmp_path):
    file = tmp_path / "fresh.py"
    file.write_text("new")
    known: FileDerived[str] = FileDerived()
    make, calls = _counting(file)
    known.get("f", file, make)
    known.get("f", file, make)
    assert len(calls) == 2
    assert len(known) == 0


def test_the_least_recently_used_file_goes_first(tmp_path, monkeypatch):
    files = []
    for name in ("a", "b", "c"):
        file = tmp_path / name
        file.write_text(name)
        files.append(file)
    monkeypatch.setattr(
        "engram.stores.files._derived.time.time_ns",
        lambda: max(f.stat().st_ctime_ns for f in files) + SETTLED_NS,
    )
    known: FileDerived[str] = FileDerived(max_files=2)
    made: list[str] = []

    def get(file):
        return known.get(file.name, file, lambda: made.append(file.name) or file.read_text())

    get(files[0])
    get(files[1])
    get(files[0])  # a is now the most recently used
    get(files[2])  # evicts b
    get(files[0])
    get(files[1])
    assert made == ["a", "b", "c", "b"]
    assert len(known) == 2


def test_a_missing_file_raises_and_keeps_nothing(tmp_path):
    known: FileDerived[str] = FileDerived()
    with pytest.raises(OSError):
        known.get("x", tmp_path / "gone.py", lambda: "never")
    assert len(known) == 0
