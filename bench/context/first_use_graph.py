"""First use through the graph (Studio, LangGraph Server, ``build_pack``): indexing in the background.

    .venv/bin/python bench/context/first_use_graph.py TREE [--runs 3]

Each run copies TREE to a fresh folder with a fresh ENGRAM_HOME, then in one process (as a
server would run the graph): the first ``build_pack`` at 8K (it starts the index in the
background, and waits for it only in a project of up to 500 files), the wait until that index
is complete, and a second ``build_pack``. Prints the seconds of each and each pack's slices.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "the download fails when the server answers slowly"


def _slices(pack) -> int:  # noqa: ANN001 - engram.graph.pack.Pack
    section = pack.section("slices")
    return len(section.items) if section else 0


def one_run(tree: Path) -> dict[str, float]:
    """Return the seconds and slices of one first use of a copy of ``tree``."""
    from engram.api import build_pack
    from engram.graph import Context
    from engram.graph.retrieval import shared_first_use
    from engram.stores.codeindex import index_is_complete

    with tempfile.TemporaryDirectory() as scratch:
        project, home = Path(scratch) / "project", Path(scratch) / "home"
        shutil.copytree(tree, project, symlinks=True)
        os.environ["ENGRAM_HOME"] = str(home)
        state = Context(project=str(project), engram_home=str(home)).state
        started = time.perf_counter()
        first = build_pack(TASK, project, 8000)
        first_s = time.perf_counter() - started
        while shared_first_use().running(project.resolve()):
            time.sleep(0.05)
        built_s = time.perf_counter() - started
        assert index_is_complete(state), "the first-use build did not complete"
        started = time.perf_counter()
        second = build_pack(TASK, project, 8000)
        second_s = time.perf_counter() - started
    return {
        "first": first_s,
        "first_slices": _slices(first),
        "index_ready": built_s,
        "second": second_s,
        "second_slices": _slices(second),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("ENGRAM_AUTO_INDEX", "on")
    os.environ["ENGRAM_SERVE"] = "off"
    rows = [one_run(Path(args.tree)) for _ in range(args.runs)]
    for n, row in enumerate(rows, 1):
        print(
            f"run {n}: first pack {row['first']:.2f} s ({row['first_slices']:.0f} slices), index "
            f"ready {row['index_ready']:.1f} s, next pack {row['second']:.2f} s "
            f"({row['second_slices']:.0f} slices)"
        )
    for key in ("first", "index_ready", "second"):
        print(f"median {key}: {statistics.median(r[key] for r in rows):.2f} s")


if __name__ == "__main__":
    main()
