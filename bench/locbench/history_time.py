"""Time history mining on a checkout: the first mining, and the update after one new commit.

    .venv/bin/python bench/locbench/history_time.py --tree TREE [--runs 3]

TREE is a git checkout (``materialize.py --with-history`` gives each dev tree one). The first
mining reads every commit reachable from HEAD (up to the cap) into a fresh folder. The update
is measured by storing the history as it was one commit earlier (the newest commit dropped,
HEAD recorded as the next one) and refreshing: git then reads the commits since, as after a
``git pull`` of one commit (when HEAD is a merge, the merged branch's commits are read too; the
count is printed). Also times reading the stored file and building the ranking tables, which
the first search process after a mining does once, and reading the tables it stores, which
every later process does instead (``bench/locbench/search_history_cost.py`` times both in
whole ``engram search`` processes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.stores.codeindex._history_cache import (  # noqa: E402
    history_stamp,
    load_tables,
    save_tables,
)
from engram.stores.codeindex._history_evidence import HistoryTables  # noqa: E402
from engram.stores.history import HISTORY_FILE, load_history, refresh_history  # noqa: E402
from engram.stores.history._store import save_history  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    first, update, read, stored, added = [], [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            state = Path(folder)
            started = time.perf_counter()
            history = refresh_history(tree, state)
            first.append(time.perf_counter() - started)
            if not history.usable:
                raise SystemExit(f"no history: {history.note}")
            parent = history.commits[1].sha
            save_history(state, replace(history, head=parent, commits=history.commits[1:]))
            started = time.perf_counter()
            again = refresh_history(tree, state)
            update.append(time.perf_counter() - started)
            assert again.added >= 1, again.added  # a merge at HEAD brings its branch along
            added.append(again.added)
            started = time.perf_counter()
            loaded = load_history(state)
            assert loaded is not None
            tables = HistoryTables.build(loaded)
            read.append(time.perf_counter() - started)
            stamp = history_stamp(state / HISTORY_FILE)
            assert stamp is not None
            save_tables(state, stamp, tables, loaded.note)
            started = time.perf_counter()
            assert load_tables(state, stamp) is not None
            stored.append(time.perf_counter() - started)
    print(
        f"{tree}: {len(history.commits)} commits {history.note}\n"
        f"first mining: median {statistics.median(first):.2f} s ({', '.join(f'{x:.2f}' for x in first)})\n"
        f"after one new commit ({max(added)} read): median {statistics.median(update):.3f} s "
        f"({', '.join(f'{x:.3f}' for x in update)})\n"
        f"read + ranking tables, first search process: median {statistics.median(read):.2f} s\n"
        f"stored tables read, every later process: median {statistics.median(stored):.2f} s"
    )


if __name__ == "__main__":
    main()
