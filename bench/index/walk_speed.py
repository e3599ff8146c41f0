"""The project walk with engram's gitignore matcher against ``pathspec``'s, in the same run.

Usage:
    .venv/bin/python bench/index/walk_speed.py TREE [TREE ...] [--runs 5]

Each run is a whole process that walks TREE once (``walk_project``), either as shipped or
with the ignore files read by ``pathspec`` (the matcher engram used before, a dev dependency),
alternating the two so load changes hit both alike. Prints per tree the files found by each
(they must agree), the median whole-process time of each and their ratio, then the same for
a hostile ``.gitignore`` (``*a*a…*b``, 23 stars) over 20 files with 200-character names,
where ``pathspec`` is cut off after ``--limit`` seconds, and for a ``.gitignore`` of
100,000 rules (a third plain folders, a third with many wildcards, a third alternating ``!``
rules) over 300 files.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANY_RULES = 100_000
"""Rules of the long hostile ``.gitignore`` (engram applies the first 10,000)."""
CHILD = """
import sys
from pathlib import Path
if sys.argv[2] == "pathspec":
    import pathspec
    from engram.stores.files import _walk
    def load(folder, names):
        lines = []
        for name in names:
            try:
                lines += (folder / name).read_text(errors="replace").splitlines()
            except OSError:
                continue
        if not lines:
            return None
        spec = pathspec.PathSpec.from_lines("gitignore", lines)
        spec.truncated = False  # pathspec reads every rule
        return spec
    _walk._load_spec = load
from engram.stores.files import walk_project
print(len(walk_project(Path(sys.argv[1])).files))
"""


def _run(tree: Path, matcher: str, limit: float) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(tree), matcher],
            capture_output=True,
            text=True,
            timeout=limit,
            cwd=ROOT,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return limit, f"> {limit:.0f} s (stopped)"
    return time.perf_counter() - started, done.stdout.strip()


def _compare(label: str, tree: Path, runs: int, limit: float) -> None:
    times: dict[str, list[float]] = {"engram": [], "pathspec": []}
    found: dict[str, str] = {}
    for _ in range(runs):
        for matcher in ("pathspec", "engram"):
            seconds, files = _run(tree, matcher, limit)
            times[matcher].append(seconds)
            found[matcher] = files
    ours, theirs = (statistics.median(times[m]) for m in ("engram", "pathspec"))
    print(
        f"| {label} | {found['engram']} / {found['pathspec']} | {ours:.2f} s | {theirs:.2f} s "
        f"| {ours / theirs:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=float, default=60.0)
    args = parser.parse_args()
    print("| tree | files (engram / pathspec) | engram | pathspec | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for tree in args.trees:
        _compare(tree.name, tree, args.runs, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        hostile = Path(tmp)
        (hostile / ".gitignore").write_text("*a" * 22 + "*b\n")
        for number in range(20):
            (hostile / f"{'a' * 200}{number}.py").write_text("x = 1\n")
        _compare("hostile .gitignore", hostile, 1, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        many = Path(tmp)
        rng = random.Random(5)
        rules = []
        for number in range(MANY_RULES):
            kind = number % 3
            if kind == 0:
                rules.append(f"build{rng.randrange(10**9)}/")
            elif kind == 1:
                rules.append(f"*{rng.randrange(10**9)}*q*z*")  # engram's greedy method
            else:
                rules.append(f"src/**/x{number}*.py" if number % 2 else f"!keep{number}")
        (many / ".gitignore").write_text("\n".join(rules) + "\n")
        for number in range(300):
            (many / f"f{number}.py").write_text("x = 1\n")
        _compare(f"{MANY_RULES:,}-rule .gitignore", many, args.runs, args.limit)


if __name__ == "__main__":
    main()
