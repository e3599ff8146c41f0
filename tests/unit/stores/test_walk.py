from __future__ import annotations

import os
from pathlib import Path

from engram.stores.files import read_text, walk_project


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
    assert [f.path for f in report.files] == [
        ".gitignore",
        "src/a.py",
        "src/deep/.gitignore",
        "src/deep/b.go",
    ]
    reasons = dict(report.skipped)
    assert reasons["img.png"] == "binary"
    assert reasons["big.txt"].startswith("too large: over ")


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


def test_known_text_files_are_not_sniffed_again(tmp_path: Path, monkeypatch):
    (tmp_path / "a.py").write_text("a\n")
    (tmp_path / "b.py").write_text("b\n")
    first = {f.path: (f.size, f.mtime_ns) for f in walk_project(tmp_path).files}
    sniffed: list[str] = []
    import engram.stores.files._walk as walk_module

    real = walk_module._is_binary

    def spy(path: str) -> bool:
        sniffed.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(walk_module, "_is_binary", spy)
    (tmp_path / "b.py").write_bytes(b"b\x00\n")  # changed: size differs, sniffed again
    report = walk_project(tmp_path, known=first)
    assert sniffed == ["b.py"]
    assert [f.path for f in report.files] == ["a.py"]
    assert dict(report.skipped)["b.py"] == "binary"


def test_nested_gitignore_matches_relative_to_its_folder(tmp_path: Path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / ".gitignore").write_text("/top.py\nsub/\n")
    (tmp_path / "pkg" / "top.py").write_text("x\n")
    (tmp_path / "top.py").write_text("x\n")
    (tmp_path / "pkg" / "sub" / "s.py").write_text("x\n")
    (tmp_path / "pkg" / "keep.py").write_text("x\n")
    paths = [f.path for f in walk_project(tmp_path).files]
    assert paths == ["pkg/.gitignore", "pkg/keep.py", "top.py"]


def test_names_with_control_characters_are_skipped_and_reported_escaped(tmp_path: Path):
    from engram.stores.files import listable

    names = ("two\nlines.py", "esc\x1b[2J.py", "bidi\u202ecod.py", "latin\udcff.py")
    for name in (*names, "données.py", "日本.py"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "dir\rx").mkdir()
    (tmp_path / "dir\rx" / "inner.py").write_text("x\n")
    report = walk_project(tmp_path)
    # names in other scripts are names: only control, separator and bidi characters count
    assert [f.path for f in report.files] == ["données.py", "日本.py"]
    reasons = dict(report.skipped)
    shown_names = ("two\\x0alines.py", "esc\\x1b[2J.py", "bidi\\u202ecod.py", "latin\\udcff.py")
    for shown in (*shown_names, "dir\\x0dx"):
        assert reasons[shown] == "name with control characters"
    assert not listable(tmp_path, "two\nlines.py") and not listable(tmp_path, "dir\rx/inner.py")
    assert listable(tmp_path, "données.py")


def test_a_linked_ignore_file_is_not_followed(tmp_path: Path):
    # as git (2.32 on): a .gitignore or .engram/ignore that is a link is not read, so a
    # repository cannot make engram read a file outside it as rules
    outside = tmp_path / "outside"
    outside.write_text("a.py\nb.py\n")
    root = tmp_path / "repo"
    (root / ".engram").mkdir(parents=True)
    (root / "a.py").write_text("needle_a = 1\n")
    (root / "b.py").write_text("needle_b = 1\n")
    (root / ".gitignore").symlink_to(outside)
    (root / ".engram" / "ignore").symlink_to(outside)
    listed = [f.path for f in walk_project(root).files]
    assert "a.py" in listed and "b.py" in listed


def test_a_walk_can_stop_once_it_knows_there_are_more_files_than_asked(tmp_path):
    for n in range(5):
        (tmp_path / f"f{n}.py").write_text("x = 1\n")
    assert not walk_project(tmp_path, stop_after=5).stopped
    assert len(walk_project(tmp_path, stop_after=5).files) == 5
    stopped = walk_project(tmp_path, stop_after=3)
    assert stopped.stopped and len(stopped.files) == 3
