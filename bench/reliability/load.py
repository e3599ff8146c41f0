"""A bounded load run: 8 processes mixing search, memory save/search and context on one project.

Each worker loops for ``--seconds`` (default 60) over ``engram search``, ``memory save``,
``memory search`` and ``context`` on a small fixture project with one shared ``ENGRAM_HOME``,
and records every command's latency and exit status. Reports ops, errors, p50 and p95; any
error (non-zero exit or a traceback) is a failure. Not part of ``make test``.
Usage: ``python bench/reliability/load.py [--workers 8] [--seconds 60]`` (or through run.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.crash_points import base_env, cli, make_code_project  # noqa: E402

Row = tuple[str, int, int, list[str]]
WORKERS = int(os.environ.get("ENGRAM_RELIABILITY_WORKERS", "8"))
SECONDS = float(os.environ.get("ENGRAM_RELIABILITY_SECONDS", "60"))
Result = tuple[str, float, str]
"""(operation, seconds, error or "")."""


def commands(worker: int, step: int) -> tuple[str, list[str]]:
    """Return the ``step``-th operation of ``worker``: the four kinds in turn."""
    kind = (worker + step) % 4
    if kind == 0:
        return "search", ["search", f"step_{step % 40}_{worker % 8}", "--json"]
    if kind == 1:
        return "memory save", [
            "memory",
            "save",
            f"Worker {worker} note {step}: stage {step} runs on node {worker}-{step}",
            "--force",
        ]
    if kind == 2:
        return "memory search", ["memory", "search", f"stage {step} node", "--json"]
    return "context", ["context", f"what does step_{step % 40}_3 return?", "--json"]


def worker_loop(worker: int, project: str, home: str, seconds: float) -> list[Result]:
    """Run operations until ``seconds`` have passed; return each one's latency and error."""
    env, results, step = base_env(Path(home)), [], 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        name, args = commands(worker, step)
        started = time.monotonic()
        done = cli(args, env, Path(project))
        output = done.stdout + done.stderr
        error = (
            ""
            if done.returncode == 0 and "Traceback" not in output
            else f"{name}: exit {done.returncode}: {output[-300:]}"
        )
        results.append((name, time.monotonic() - started, error))
        step += 1
    return results


def percentile(values: list[float], share: float) -> float:
    """Return the ``share`` quantile of ``values`` (0 for none)."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def main(workers: int = WORKERS, seconds: float = SECONDS) -> list[Row]:
    """Run the load; print per-operation figures; return one row per operation kind."""
    with tempfile.TemporaryDirectory(prefix="engram-load-") as work:
        project = make_code_project(Path(work) / "project", files=60)
        home = Path(work) / "home"
        indexed = cli(["index", "."], base_env(home), project)
        if indexed.returncode != 0:
            return [("load", 1, 0, [f"index failed: {indexed.stderr[-300:]}"])]
        with ProcessPoolExecutor(workers) as pool:
            futures = [
                pool.submit(worker_loop, w, str(project), str(home), seconds)
                for w in range(workers)
            ]
            results = [r for f in futures for r in f.result()]
    rows = []
    print(f"load: {workers} processes for {seconds:.0f} s")  # noqa: T201
    for name in sorted({r[0] for r in results}):
        mine = [r for r in results if r[0] == name]
        latencies = [r[1] for r in mine]
        errors = [r[2] for r in mine if r[2]]
        print(
            f"  {name:<14} ops {len(mine):>4}  errors {len(errors):>3}  "  # noqa: T201
            f"p50 {percentile(latencies, 0.5):5.2f} s  p95 {percentile(latencies, 0.95):5.2f} s"
        )
        rows.append((f"load: {name}", len(mine), len(mine) - len(errors), errors))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    args = parser.parse_args()
    main(args.workers, args.seconds)
