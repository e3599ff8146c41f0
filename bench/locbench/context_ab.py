"""Whole-process time of `engram context` for one issue, two engram builds alternating.

    .venv/bin/python bench/locbench/context_ab.py --tree TREE --issue-id ID \
        --a OLD_ENGRAM --b .venv/bin/engram [--tree-b COPY] [--runs 5] [--budget 8000] [--home DIR]

Both builds read the index of ``--tree`` (same format), or with ``--tree-b`` build b reads its
own copy of the tree (an index format that changed between the builds); the first run of each
is a warm-up and is not counted. Prints the median and the range of each, and the ratio b / a.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._env import serve_off  # noqa: E402

DATASET = (
    Path(os.environ.get("ENGRAM_SHARED", Path(__file__).resolve().parents[3] / "shared"))
    / "bench"
    / "locbench-dev"
)


def timed(engram: str, tree: str, query: str, budget: int, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [engram, "context", "--path", tree, "--budget", str(budget), "--json", "--", query],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{engram} failed: {done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", required=True)
    parser.add_argument("--tree-b", default="", help="build b's own copy of the tree")
    parser.add_argument("--issue-id", required=True)
    parser.add_argument("--a", required=True)
    parser.add_argument("--b", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--home", default="")
    parser.add_argument("--cases", default=str(DATASET / "cases.jsonl"))
    args = parser.parse_args()
    cases = {
        c["instance_id"]: c for c in map(json.loads, Path(args.cases).read_text().splitlines())
    }
    query = cases[args.issue_id]["query"]
    env = serve_off({**os.environ, **({"ENGRAM_HOME": args.home} if args.home else {})})
    times: dict[str, list[float]] = {"a": [], "b": []}
    trees = {"a": args.tree, "b": args.tree_b or args.tree}
    for which in ("a", "b"):
        timed(getattr(args, which), trees[which], query, args.budget, env)  # warm-up
    for _ in range(args.runs):
        for which in ("a", "b"):
            times[which].append(timed(getattr(args, which), trees[which], query, args.budget, env))
    for which in ("a", "b"):
        xs = times[which]
        print(
            f"{which}: {getattr(args, which)}: median {statistics.median(xs):.2f} s "
            f"(range {min(xs):.2f}-{max(xs):.2f}, {len(xs)} runs)"
        )
    print(f"ratio b/a: {statistics.median(times['b']) / statistics.median(times['a']):.2f}")


if __name__ == "__main__":
    main()
