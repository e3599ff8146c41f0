from __future__ import annotations

import os
from pathlib import Path

from stores.walk import read_text, walk_project


def test_walk_skips_what_it_should(tmp_path: Path):
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("a\n")
    (tmp_path / "src" / "deep" / "b.go").write_text("b\n")
    (tmp_path / "src" / "deep" / ".gitignore").write_text("gen_*.go\n")
    (tmp_path / "src" / "deep" / "gen_x.go").write_text("x\n")
    (tmp_path / ".gitignore").write_text("*.log\nbuildout/\n")
    (tmp_path / "debug.log").write_text("x\n")
    (tmp_path / "buildout").mkdir()
    (tmp_path / "buildout" / "x.py").write_text("x\n")
    (tmp_path / ".engram").mkdir()
    (tmp_path / ".engram" / "ignore").write_text("private/\n")
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "p.py").write_text("p\n")
    for folder in (".git", ".venv", "node_modules", "__pycache__", "dist"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "f.py").write_text("x\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\x00\x00")
    (tmp_path / "big.txt").write_text("x" * 2_000_000)
    report = walk_project(tmp_path)
    assert [f.path for f in report.files] == [".gitignore", "src/a.py", "src/deep/.gitignore",
                                               "src/deep/b.go"]
    reasons = dict(report.skipped)
    assert reasons["img.png"] == "binary"
    assert reasons["big.txt"] == "too large"


def test_symlink_loops_and_outside_links(tmp_path: Path):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.py").write_text("x\n")
    os.symlink(root / "a", root / "a" / "loop")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("o\n")
    os.symlink(outside, root / "out")
    paths = [f.path for f in walk_project(root).files]
    assert paths == ["a/x.py"]


def test_empty_and_non_git_folder(tmp_path: Path):
    assert walk_project(tmp_path).files == []


def test_invalid_utf8_is_replaced(tmp_path: Path):
    (tmp_path / "bad.py").write_bytes(b"x = '\xff\xfe'\n")
    assert "\ufffd" in read_text(tmp_path / "bad.py")
