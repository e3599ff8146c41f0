from __future__ import annotations

from pathlib import Path

import pytest

from stores.exact_search import InvalidPatternError, find_rg, grep


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def alpha():\n    return 'Alpha'\n")
    (tmp_path / "src" / "b.ts").write_text("export function alpha() {}\n")
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "i.js").write_text("alpha\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "c.py").write_text("alpha\n")
    (tmp_path / ".env").write_text("alpha=1\n")
    return tmp_path


ENGINES = ["auto", None]


@pytest.mark.parametrize("engine", ENGINES)
def test_same_results_from_both_engines(tree: Path, engine):
    matches = grep(tree, "alpha", rg_path=engine)
    assert [(m.path, m.line) for m in matches] == [("src/a.py", 1), ("src/b.ts", 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_options(tree: Path, engine):
    assert len(grep(tree, "alpha", ignore_case=True, rg_path=engine)) == 3
    assert [m.path for m in grep(tree, "alpha", glob="*.ts", rg_path=engine)] == ["src/b.ts"]
    assert grep(tree, "alpha()", literal=True, rg_path=engine)[0].path == "src/a.py"
    assert len(grep(tree, "alpha", max_results=1, rg_path=engine)) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_invalid_regex(tree: Path, engine):
    with pytest.raises(InvalidPatternError):
        grep(tree, "alpha(", rg_path=engine)


def test_ripgrep_binary_is_installed():
    assert find_rg() is not None
