"""Indexing speed: full index from scratch (cold embedding cache) and one-file re-index.

Usage:
    .venv/bin/python bench/index/speed.py TREE [TREE ...] [--runs 3] [--provider default]
    .venv/bin/python bench/index/speed.py TREE --touch-only --home DIR [--runs 5] [--engram]

Each measurement is a whole process running the `index` command (`bench/index/cli.py`, the
same Typer command `engram index` registers) with `--json`; wall time includes interpreter
start, imports and the code graph update. "Full" uses a fresh ENGRAM_HOME (where the tree's
index and graph live, so none exists yet) holding only the distilled embedding table (built
once beforehand, not timed);
"touch one" appends a comment line to one source file and re-indexes. Medians over --runs.

--touch-only reuses the tree's existing index and the ENGRAM_HOME given by --home (no full
index): each run appends a different comment line to one file, times the re-index, restores
the file; one untimed re-index at the end brings the index back to the tree. --engram runs
the installed `engram` entry point (every command group imported) instead of
`bench/index/cli.py` (only the index commands).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "bench/index/cli.py"


def run_index(
    tree: Path, home: Path, provider: str, command: list[str] | None = None
) -> tuple[float, dict]:
    env = {
        **os.environ,
        "ENGRAM_HOME": str(home),
        "ENGRAM_EMBEDDING_PROVIDER": provider,
        "PYTHONPATH": str(ROOT),
        "ANONYMIZED_TELEMETRY": "False",
    }
    command = command or [sys.executable, str(CLI)]
    started = time.perf_counter()
    out = subprocess.run(
        [*command, "index", str(tree), "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, json.loads(out.stdout)


def touch_only(tree: Path, home: Path, provider: str, runs: int, command: list[str]) -> None:
    """Time one-file re-indexes of an already indexed tree."""
    run_index(tree, home, provider, command)  # bring the index up to date first
    target = pick_file(tree)
    original = target.read_bytes()
    seconds: list[float] = []
    inside: list[tuple[float, float]] = []
    try:
        for i in range(runs):
            target.write_bytes(original + f"\n# touched by the speed benchmark {i}\n".encode())
            took, summary = run_index(tree, home, provider, command)
            seconds.append(took)
            inside.append((summary["seconds"], summary["graph"].get("seconds", 0.0)))
            assert summary["parsed_files"] == 1, summary
    finally:
        target.write_bytes(original)
        run_index(tree, home, provider, command)
    print(
        f"| {tree.name} | {target.relative_to(tree).as_posix()} | {runs} | "
        f"{statistics.median(seconds):.2f} | {min(seconds):.2f}-{max(seconds):.2f} |"
    )
    print(
        f"  runs {[round(s, 2) for s in seconds]}; in-process (index s, graph work s) "
        f"{[(round(a, 2), round(b, 2)) for a, b in inside]}; load {os.getloadavg()}",
        file=sys.stderr,
    )


def fresh_home(models: Path) -> Path:
    home = Path(tempfile.mkdtemp(prefix="engram-bench-home-"))
    if models.exists():
        shutil.copytree(models, home / "models")
    return home


def pick_file(tree: Path) -> Path:
    candidates = sorted(p for p in tree.rglob("*.py") if ".engram" not in p.parts)
    return candidates[len(candidates) // 2]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", default="default")
    parser.add_argument("--models", default=str(ROOT / "bench/data/home/models"))
    parser.add_argument("--touch-only", action="store_true")
    parser.add_argument("--home", default=str(ROOT / "bench/data/home"))
    parser.add_argument("--engram", action="store_true")
    args = parser.parse_args()
    if args.touch_only:
        engram = Path(sys.executable).with_name("engram")
        command = [str(engram)] if args.engram else [sys.executable, str(CLI)]
        print("| Tree | File touched | Runs | Re-index one file s (median) | Range s |")
        print("| --- | --- | --- | --- | --- |")
        for raw in args.trees:
            touch_only(Path(raw).resolve(), Path(args.home), args.provider, args.runs, command)
        return 0
    print(
        "| Tree | Files | Chunks | Lines | Full index s (median) | Chunks embedded/s | "
        "Re-index one file s (median) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for raw in args.trees:
        tree = Path(raw).resolve()
        full, touch, summary = [], [], {}
        for _ in range(args.runs):
            home = fresh_home(Path(args.models))
            seconds, summary = run_index(tree, home, args.provider)
            full.append((seconds, summary))
            target = pick_file(tree)
            original = target.read_bytes()
            try:
                target.write_bytes(original + b"\n# touched by the speed benchmark\n")
                seconds, _ = run_index(tree, home, args.provider)
                touch.append(seconds)
            finally:
                target.write_bytes(original)
            run_index(tree, home, args.provider)
            shutil.rmtree(home, ignore_errors=True)
        lines = sum(
            p.read_bytes().count(b"\n") for p in tree.rglob("*.py") if ".engram" not in p.parts
        )
        median_full = statistics.median(s for s, _ in full)
        rate = summary["chunks"] / median_full
        print(
            f"| {tree.name} | {summary['files']} | {summary['chunks']} | {lines} (.py) | "
            f"{median_full:.1f} | {rate:.0f} | {statistics.median(touch):.2f} |",
            flush=True,
        )
        print(
            f"  runs full={[round(s, 1) for s, _ in full]} touch={[round(s, 2) for s in touch]}"
            f" in-process index seconds={[s['seconds'] for _, s in full]}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
