from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from engram.stores.codeindex import _ripgrep as exact_search
from engram.stores.codeindex import grep
from engram.stores.codeindex._ripgrep import InvalidPatternError, find_rg


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


ENGINES = [
    pytest.param("auto", marks=pytest.mark.integration, id="auto"),
    pytest.param(None, marks=pytest.mark.integration, id="python"),
]  # auto runs ripgrep; the Python fallback runs in a child process


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


@pytest.fixture()
def many(tmp_path: Path) -> Path:
    for d in range(6):
        (tmp_path / f"pkg{d}").mkdir()
        for f in range(5):
            lines = [f"beta {n}" if n % 2 else "other" for n in range(12)]
            (tmp_path / f"pkg{d}" / f"m{f}.py").write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_capped_search_keeps_the_first_lines_in_path_order(many: Path, engine):
    everything = grep(many, "beta", max_results=10_000, rg_path=engine)
    assert len(everything) == 6 * 5 * 6
    assert [(m.path, m.line) for m in everything] == sorted((m.path, m.line) for m in everything)
    for limit in (1, 7, 40):
        assert grep(many, "beta", max_results=limit, rg_path=engine) == everything[:limit]


@pytest.mark.integration  # runs ripgrep
def test_a_capped_search_gives_the_same_lines_every_time(many: Path):
    runs = {tuple(grep(many, "beta|other", max_results=25)) for _ in range(5)}
    assert len(runs) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_egg_info_folders_are_not_searched(tree: Path, engine):
    (tree / "pkg.egg-info").mkdir()
    (tree / "pkg.egg-info" / "SOURCES.txt").write_text("src/a.py alpha\n")
    assert "pkg.egg-info/SOURCES.txt" not in {m.path for m in grep(tree, "alpha", rg_path=engine)}


def _fake_rg(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-rg"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


@pytest.mark.integration  # runs ripgrep
def test_ripgrep_is_stopped_once_enough_lines_are_read(tree: Path, tmp_path: Path):
    event = (
        '{"type":"match","data":{"path":{"text":"./src/a.py"},"lines":{"text":"alpha\\\\n"},'
        '"line_number":%d}}'
    )
    lines = "".join(f"echo '{event % n}'\n" for n in range(1, 4))
    rg = _fake_rg(tmp_path, lines + "exec sleep 20\n")
    started = time.monotonic()
    matches = grep(tree, "alpha", max_results=2, rg_path=rg)
    assert [(m.path, m.line, m.text) for m in matches] == [
        ("src/a.py", 1, "alpha"),
        ("src/a.py", 2, "alpha"),
    ]
    assert time.monotonic() - started < 10


@pytest.mark.integration  # runs ripgrep
def test_a_hung_ripgrep_times_out(tree: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(exact_search, "RG_TIMEOUT_S", 0.3)
    rg = _fake_rg(tmp_path, "exec sleep 20\n")
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        grep(tree, "alpha", rg_path=rg)
    assert time.monotonic() - started < 10


@pytest.mark.integration  # runs ripgrep
def test_path_order_rerun_only_when_the_limit_is_passed(tree: Path, tmp_path: Path):
    log = tmp_path / "calls.log"
    event = (
        '{"type":"match","data":{"path":{"text":"./src/a.py"},"lines":{"text":"alpha\\\\n"},'
        '"line_number":%d}}'
    )
    rg = _fake_rg(
        tmp_path, f'echo "$*" >> {log}\n' + "".join(f"echo '{event % n}'\n" for n in (2, 1))
    )
    assert [m.line for m in grep(tree, "alpha", max_results=5, rg_path=rg)] == [1, 2]
    assert "--sort path" not in log.read_text()
    log.unlink()
    assert [m.line for m in grep(tree, "alpha", max_results=1, rg_path=rg)] == [2]
    first, second = log.read_text().splitlines()
    assert "--sort path" not in first and "--sort path" in second


@pytest.mark.integration  # the fallback's child process
def test_a_catastrophic_pattern_in_the_python_fallback_is_stopped(tree: Path, monkeypatch):
    # Python's re backtracks exponentially on (a+)+b against a run of a's; ripgrep does not,
    # but the fallback runs where ripgrep cannot (no binary, or a FIFO .gitignore)
    (tree / "src" / "slow.py").write_text("a" * 40 + "\n")
    monkeypatch.setattr(exact_search, "RG_TIMEOUT_S", 2.0)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        grep(tree, "(a+)+b", rg_path=None)
    assert time.monotonic() - started < 20


@pytest.mark.integration  # the fallback's child process
def test_the_python_fallback_imports_no_module_the_project_ships(tree: Path):
    planted = tree / "planted"
    for name in ("json.py", "fnmatch.py", "re.py"):
        (tree / name).write_text(f"open({str(planted)!r}, 'w').write('imported')\n")
    assert [m.path for m in grep(tree, "alpha", rg_path=None)] == ["src/a.py", "src/b.ts"]
    assert not planted.exists()
