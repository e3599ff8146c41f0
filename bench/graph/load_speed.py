"""Code graph load time: reading the saved graph, then building its relation graph.

Usage: .venv/bin/python bench/graph/load_speed.py TREE [--runs 3] [--code DIR]

TREE must hold a graph saved by ``engram index`` (or ``bench/graph/speed.py``). Each run is a
fresh process (so no run profits from the previous one's memory) that loads the graph with
``graph_store_for(TREE).load()`` and then touches ``graph.graph``; the wall and CPU seconds of
the load, and of the load and the relation graph together, are printed per run. ``--code DIR``
imports engram from another checkout (a baseline, e.g. ``git archive`` of an older commit), so
calls with and without it can alternate on one tree;
with a checkout that builds the relation graph while loading, the second step costs nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ONE_RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from engram.stores.relations._persistence import graph_store_for
store = graph_store_for(Path(sys.argv[2]))
wall, cpu = time.perf_counter(), time.process_time()
graph = store.load()
loaded = time.perf_counter() - wall, time.process_time() - cpu
relations = graph.graph
built = time.perf_counter() - wall, time.process_time() - cpu
print(f"{loaded[0]:.3f} {loaded[1]:.3f} {built[0]:.3f} {built[1]:.3f} "
      f"{relations.number_of_nodes()} {len(graph.facts)}")
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", default=str(ROOT))
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    print(f"code {args.code}, tree {tree}")
    print(
        "| Run | Load wall s | Load CPU s | Load + relation graph wall s | CPU s | Nodes | Files |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for run in range(1, args.runs + 1):
        done = subprocess.run(
            [sys.executable, "-c", ONE_RUN, args.code, str(tree)],
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"| {run} | " + " | ".join(done.stdout.split()) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
