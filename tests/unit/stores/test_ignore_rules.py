"""Gitignore rules: git's semantics, agreement with pathspec, and no pattern that hangs a walk."""

from __future__ import annotations

import random
import time
import warnings
from pathlib import Path

import pytest

from engram.stores.files import walk_project
from engram.stores.files._ignore_rules import (
    GROUP_SIZE,
    MAX_COSTLY_RULES,
    MAX_RULES,
    TRUNCATED,
    IgnoreRules,
)

CASES = [
    # (rules, path, ignored)
    (["*.pyc"], "a/b/c.pyc", True),
    (["*.pyc"], "a/b/c.py", False),
    (["build/"], "build/", True),
    (["build/"], "build", False),  # a file named build: the rule is for folders
    (["build/"], "src/build/x.py", True),  # inside an ignored folder
    (["/dist"], "dist/x", True),
    (["/dist"], "src/dist/x", False),  # anchored to the ignore file's folder
    (["foo/*.txt"], "foo/a.txt", True),
    (["foo/*.txt"], "foo/b/a.txt", False),  # "*" stops at "/"
    (["a/**/b"], "a/b", True),
    (["a/**/b"], "a/x/y/b", True),
    (["**/node_modules"], "x/node_modules/y.js", True),
    (["docs/**"], "docs/a/b.md", True),
    (["docs/**"], "docs/", False),  # what is inside, not the folder itself (git)
    (["docs/**", "!docs/keep.md"], "docs/keep.md", False),
    (["*.log", "!keep.log"], "x/keep.log", False),
    (["[Bb]in/"], "Bin/", True),
    (["[!a]*.tmp"], "a.tmp", False),
    (["[!a]*.tmp"], "b.tmp", True),
    (["log[0-9].txt"], "log7.txt", True),
    (["x?y"], "x/y", False),  # "?" is never "/"
    (["\\#name", "\\!bang"], "#name", True),
    (["\\#name", "\\!bang"], "!bang", True),
    (["# comment", "", "   "], "# comment", False),
    (["trailing   "], "trailing", True),
    (["trailing\\ "], "trailing ", True),
    (["**"], "anything/at/all", True),
]


@pytest.mark.parametrize(("rules", "path", "ignored"), CASES)
def test_git_semantics(rules: list[str], path: str, ignored: bool):
    assert IgnoreRules.from_lines(rules).match_file(path) is ignored


def _assert_agree(pathspec, lines: list[str], rng: random.Random, names: list[str], paths: int):
    """Random paths of one to four ``names`` are ignored by ours as by pathspec's, as files
    and as folders."""
    theirs = pathspec.PathSpec.from_lines("gitignore", lines)
    ours = IgnoreRules.from_lines(lines)
    for _ in range(paths):
        path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))
        assert ours.match_file(path) == theirs.match_file(path), (lines, path)
        assert ours.match_file(path + "/") == theirs.match_file(path + "/"), (lines, path)


def test_it_agrees_with_pathspec_on_real_world_patterns():
    pathspec = pytest.importorskip("pathspec")
    patterns = [
        *("*.pyc", "__pycache__/", "*.py[cod]", "*$py.class", "build/", "/dist", "*.egg-info/"),
        *("**/node_modules", "**/*.log", "a/**/b", "/foo/bar", "foo/*.txt", "!keep.log"),
        *("[Bb]in/", "[!a]*.tmp", "x?y", "log[0-9].txt", "a*b*c", "**/x/**/y", "src/**/*.py"),
        *("*.tfstate*", "tmp", "/tmp/", ".*", "!.gitignore", "*~", ".#*", "a*b*c*d/e*f*g"),
    ]
    names = ["a", "b", "src", "foo", "bar", "build", "dist", "x", "y", "tmp", "f.pyc", "g.py"]
    names += ["log3.txt", "x1y", "m.log", "keep.log", ".env", ".gitignore", "Bin", "c.tmp"]
    names += ["a.tmp", "aXbYc", "abc", "q.egg-info", "s.tfstate.bak", "file~", "abcd", "efg"]
    rng = random.Random(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(1500):
            lines = rng.sample(patterns, rng.randint(1, 4))
            _assert_agree(pathspec, lines, rng, names, paths=10)


HOSTILE = [
    # (rule, path): each took pathspec's regex minutes or more to fail
    ("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 250),
    ("**/*a*a*a*a*a*a*a*a*a*a*a*b/c", "/".join(["a" * 200] * 3)),
    ("a*a*a*/a*a*a*/a*a*a*b", "/".join(["a" * 250] * 3)),
    ("**/a/**/a/**/a/**/a/**/b", "/".join(["a"] * 1500)),
    ("*a" * 200_000 + "*b", "a" * 250),  # too long to be a path: skipped
]


@pytest.mark.parametrize(("rule", "path"), HOSTILE)
def test_no_pattern_takes_long_to_fail(rule: str, path: str):
    started = time.perf_counter()
    assert IgnoreRules.from_lines([rule]).match_file(path) is False
    assert time.perf_counter() - started < 5  # a hang guard: it takes milliseconds


def test_a_hostile_gitignore_does_not_hang_the_walk(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n")
    for number in range(20):
        (tmp_path / f"{'a' * 200}{number}.py").write_text("x = 1\n")
    started = time.perf_counter()
    assert len(walk_project(tmp_path).files) == 21
    assert time.perf_counter() - started < 10


def test_a_hostile_glob_from_the_model_returns_at_once(tmp_path: Path):
    from engram.graph import Context
    from engram.graph.tools._project import build_core_tools

    (tmp_path / f"{'a' * 200}.py").write_text("x = 1\n")
    (tmp_path / f"{'a' * 20}b.py").write_text("x = 1\n")
    tools = {t.name: t for t in build_core_tools(Context(project=str(tmp_path)))}
    started = time.perf_counter()
    out = tools["glob_files"].invoke({"pattern": "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b*"})
    assert out.splitlines() == [f"{'a' * 20}b.py"]
    assert time.perf_counter() - started < 5


def test_it_agrees_with_pathspec_when_rules_are_joined_in_groups():
    # more rules than one joined regex holds, signs mixed: the last matching rule still decides
    pathspec = pytest.importorskip("pathspec")
    patterns = ["*.pyc", "build/", "/dist", "a/**/b", "[Bb]in/", "x?y", "a*b*c", "!keep.log"]
    patterns += ["**/x/**/y", "src/**/*.py", "!src/keep.py", "*.log", "tmp", "!tmp/a", "a*b*c*d"]
    names = ["a", "b", "src", "x", "y", "tmp", "f.pyc", "keep.py", "m.log", "keep.log", "Bin"]
    names += ["build", "dist", "x1y", "abc", "abcd", "g.py"]
    rng = random.Random(11)
    for _ in range(20):
        lines = [rng.choice(patterns) for _ in range(rng.randint(GROUP_SIZE, 3 * GROUP_SIZE))]
        lines += [f"name{n}" for n in range(rng.randint(0, GROUP_SIZE))]
        rng.shuffle(lines)
        _assert_agree(pathspec, lines, rng, names, paths=40)


def test_plain_names_and_endings_decide_as_git_does_among_other_rules():
    # names and "*.ext" rules are looked up per segment; the last matching rule still decides
    pathspec = pytest.importorskip("pathspec")
    plain = ["build/", "env", ".env", "*.gz", "*.tar.gz", "!*.tar.gz", "*.egg-info/", "!keep.gz"]
    plain += ["!build/", ".DS_Store", "*.", "!env", "\\#x", "*.log/", "!.env", "docs"]
    other = ["*.py[cod]", "/dist", "a/**/b", "[Bb]in/", "!src/build/x.gz", "*~", "e*v"]
    names = ["a", "b", "src", "build", "env", ".env", "x.gz", "a.tar.gz", ".tar.gz", "keep.gz"]
    names += ["q.egg-info", ".DS_Store", "x.", "#x", "m.log", "docs", "dist", "f.pyc", "Bin"]
    names += ["x", "z.tar", "gz", "file~", "eXv"]
    rng = random.Random(5)
    for _ in range(300):
        lines = [rng.choice(plain if rng.random() < 0.7 else other) for _ in range(12)]
        _assert_agree(pathspec, lines, rng, names, paths=20)


def test_a_gitignore_of_a_hundred_thousand_rules_does_not_stall_the_walk(tmp_path: Path):
    rng = random.Random(3)
    rules = [f"build{rng.randrange(10**9)}/" for _ in range(50_000)]  # joined regexes
    rules += [f"*{rng.randrange(10**9)}*q*z*" for _ in range(50_000)]  # the greedy method
    rng.shuffle(rules)
    (tmp_path / ".gitignore").write_text("\n".join(["*.log", *rules, "ignored.py"]) + "\n")
    for number in range(300):
        (tmp_path / f"f{number}.py").write_text("x = 1\n")
    (tmp_path / "ignored.py").write_text("x = 1\n")
    (tmp_path / "a.log").write_text("x\n")
    started = time.perf_counter()
    report = walk_project(tmp_path)
    assert time.perf_counter() - started < 15  # took 2.5 minutes with every rule applied
    listed = {f.path for f in report.files}
    # the first MAX_RULES rules apply, the ones after them (ignored.py) do not
    assert listed - {".gitignore"} == {f"f{n}.py" for n in range(300)} | {"ignored.py"}
    assert (".gitignore", TRUNCATED) in report.skipped
    simple = IgnoreRules.from_lines(f"name{n}" for n in range(MAX_RULES + 5))
    assert simple.truncated and len(simple.rules) == MAX_RULES
    wild = IgnoreRules.from_lines(f"*{n}*q*z*" for n in range(MAX_COSTLY_RULES + 5))
    assert wild.truncated and len(wild.rules) == MAX_COSTLY_RULES


def test_many_two_star_rules_do_not_stall_a_walk_of_long_names(tmp_path: Path):
    # each "*a*bN" costs a 200-character name's length squared in the regex: ten thousand of
    # them took 0.3 s per file; only the first MAX_COSTLY_RULES apply
    (tmp_path / ".gitignore").write_text("\n".join(f"*a*b{n}" for n in range(10_000)) + "\n")
    for number in range(20):
        (tmp_path / f"{'a' * 200}{number}.py").write_text("x = 1\n")
    started = time.perf_counter()
    report = walk_project(tmp_path)
    assert time.perf_counter() - started < 3
    assert len(report.files) == 21 and (".gitignore", TRUNCATED) in report.skipped
    # the cheap rules between the costly ones count only towards MAX_RULES
    assert (
        len(IgnoreRules.from_lines(["*a*b1", "*.pyc", "build/"] * 300).rules)
        == 3 * MAX_COSTLY_RULES
    )
