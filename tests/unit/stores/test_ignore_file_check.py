"""Finding ignore files ripgrep cannot open safely, and remembering clean trees."""

from __future__ import annotations

import os

import pytest

from engram.stores.codeindex import IgnoreFileCheck
from engram.stores.codeindex._ignore_check import unsafe_ignore_file

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _tree(root):
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / ".gitignore").write_text("*.log\n")
    (root / "pkg" / "sub" / "mod.py").write_text("x = 1\n")
    (root / "node_modules").mkdir()
    os.mkfifo(root / "node_modules" / ".gitignore")  # a skipped folder is never walked
    return root


def _age(root, seconds: float = 60.0) -> None:
    """Date every folder under ``root`` back, as folders of a tree edited earlier are."""
    for folder, _, _ in os.walk(root):
        info = os.stat(folder)
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns - int(seconds * 1e9)))


def test_a_fifo_ignore_file_is_found_and_a_regular_one_is_not(tmp_path):
    root = _tree(tmp_path)
    assert not unsafe_ignore_file(root)
    os.mkfifo(root / "pkg" / "sub" / ".ignore")
    assert unsafe_ignore_file(root)


def test_a_clean_tree_is_remembered_until_a_folder_changes(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    _age(root)
    check = IgnoreFileCheck()
    assert not check.unsafe(root)
    listed = []
    import engram.stores.codeindex._ignore_check as module

    real = module._list
    monkeypatch.setattr(module, "_list", lambda *a: listed.append(1) or real(*a))
    assert not check.unsafe(root)
    assert listed == []  # the folders' times were enough
    os.mkfifo(root / "pkg" / "sub" / ".rgignore")  # changes the folder's time
    assert check.unsafe(root)
    assert listed == [1]
    os.unlink(root / "pkg" / "sub" / ".rgignore")
    assert not check.unsafe(root)  # listed again; changed just now, so not remembered
    assert not check.unsafe(root)
    assert listed == [1, 1, 1]


def test_a_linked_ignore_file_is_never_handed_to_ripgrep(tmp_path):
    # ripgrep would follow the link and read a file outside the tree as rules; git does not
    root = _tree(tmp_path)
    target = tmp_path.parent / f"{tmp_path.name}-outside-ignore"
    target.write_text("*.tmp\n")
    (root / "pkg" / "sub" / ".ignore").symlink_to(target)
    _age(root)
    check = IgnoreFileCheck()
    assert check.unsafe(root) and check.unsafe(root)
    assert unsafe_ignore_file(root)
