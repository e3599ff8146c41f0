"""What the history costs a whole ``engram search --files`` process, with and without stored tables.

    .venv/bin/python bench/locbench/search_history_cost.py --tree TREE --home HOME [--runs 5]

TREE is an indexed checkout with a mined history (``ENGRAM_HOME=HOME engram index TREE``).
Each round runs the same search three times, in its own process (``ENGRAM_SERVE=off``, so no
warm server answers), in turn: with the ranking tables stored beside the history (what every
search after the first does), with them removed first (the first search after a mining builds
them and stores them), and with the history file moved away (no history: the baseline). Prints
each setting's median wall time and its difference from the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.stores.codeindex._history_cache import TABLES_FILE  # noqa: E402
from engram.stores.history import HISTORY_FILE  # noqa: E402

QUERY = "the parser fails on an empty configuration file"


def index_folder(home: Path, tree: Path) -> Path:
    """Return the index folder of ``tree`` under ``home`` (the one whose history names HEAD)."""
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for history in sorted(home.glob(f"projects/*/index/{HISTORY_FILE}")):
        if f'"head":"{head}"' in history.read_text(encoding="utf-8")[:200]:
            return history.parent
    raise SystemExit(f"no mined history for {tree} in {home}: run `engram index` first")


def run(tree: Path, home: Path) -> float:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_SERVE": "off"}
    command = [str(ROOT / ".venv/bin/engram"), "search", "--files", "-p", str(tree), QUERY]
    started = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", required=True, type=Path)
    parser.add_argument("--home", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tree, home = args.tree.resolve(), args.home.resolve()
    folder = index_folder(home, tree)
    history, tables = folder / HISTORY_FILE, folder / TABLES_FILE
    aside = folder / f"{HISTORY_FILE}.aside"
    times: dict[str, list[float]] = {"stored tables": [], "tables built": [], "no history": []}
    run(tree, home)  # warm the file cache; stores the tables
    for _ in range(args.runs):
        assert tables.exists()
        times["stored tables"].append(run(tree, home))
        tables.unlink()
        times["tables built"].append(run(tree, home))
        history.rename(aside)
        try:
            times["no history"].append(run(tree, home))
        finally:
            aside.rename(history)
    base = statistics.median(times["no history"])
    print(f"{tree} ({history.stat().st_size / 1e6:.1f} MB history), {args.runs} runs each")
    for name, values in times.items():
        median = statistics.median(values)
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name:14} median {median:.2f} s ({median - base:+.2f} s)  [{shown}]")


if __name__ == "__main__":
    main()
