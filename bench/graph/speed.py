"""Code graph speed on a large real tree: full build, load, query p95, one-file update.

Usage: .venv/bin/python bench/graph/speed.py [--tree bench/data/Django-5.0] [--queries 300]
    [--repeat 1]

The tree is copied to a temporary folder first (the graph is written inside the project).
One-file updates are timed the way `engram index` runs them: the project walk is done once
for the code index and handed to the graph update, so it is timed apart. Each edit is applied
on top of the previous ones; --repeat N applies the whole list N times (medians are printed).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.stores.files import walk_project  # noqa: E402
from engram.stores.relations import (  # noqa: E402  # noqa: E402
    GRAPH_FILE,
    GraphQueries,  # noqa: E402
    answer,  # noqa: E402
    graph_store_for,
    open_relation_index,
    update_relation_index,
)

RELATIONS = (
    "callers",
    "callees",
    "subclasses",
    "implementations",
    "dependencies",
    "dependents",
    "impact",
)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else max(values)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=str(ROOT / "bench/data/Django-5.0"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / Path(args.tree).name
        shutil.copytree(args.tree, tree, ignore=shutil.ignore_patterns(".engram"))
        lines = sum(p.read_bytes().count(b"\n") for p in tree.rglob("*.py"))
        build = update_relation_index(tree)
        print(
            f"build: {build.files} files ({lines} .py lines), {build.nodes} nodes, "
            f"{build.edges} edges, {build.unresolved} unresolved refs in {build.seconds:.1f}s"
        )
        size = (tree / GRAPH_FILE).stat().st_size
        loads = []
        for _ in range(3):
            started = time.perf_counter()
            graph = open_relation_index(tree)
            loads.append(time.perf_counter() - started)
        print(f"load: {min(loads):.2f}s best of 3 ({size / 1e6:.1f} MB)")
        queries = GraphQueries(graph)
        rng = random.Random(7)
        symbols = sorted(n for n in graph.graph.nodes if "::" in n)
        picks = rng.sample(symbols, min(args.queries, len(symbols)))
        by_kind: dict[str, list[float]] = {}
        for i, node in enumerate(picks):
            relation = RELATIONS[i % len(RELATIONS)]
            name = graph.graph.nodes[node]["qualname"]
            started = time.perf_counter()
            answer(queries, name, relation, depth=2)
            by_kind.setdefault(relation, []).append(time.perf_counter() - started)
        for _ in range(min(50, args.queries)):
            a, b = rng.sample(picks, 2)
            started = time.perf_counter()
            queries.path(a, b)
            by_kind.setdefault("path", []).append(time.perf_counter() - started)
        all_times = [t for ts in by_kind.values() for t in ts]
        print(
            f"queries: {len(all_times)}, p50 {statistics.median(all_times) * 1e3:.1f} ms, "
            f"p95 {p95(all_times) * 1e3:.1f} ms, max {max(all_times) * 1e3:.1f} ms"
        )
        for relation, ts in by_kind.items():
            print(f"  {relation:<16} n={len(ts):<4} p95 {p95(ts) * 1e3:.1f} ms")
        noop = update_relation_index(tree)
        print(f"no-op update: {noop.seconds:.2f}s")
        edits = [
            (
                "append a function",
                "django/db/models/query.py",
                lambda t: t + "\n\ndef _bench_added(qs):\n    return qs.filter(pk=1)\n",
            ),
            (
                "edit a method body (lines shift)",
                "django/db/models/sql/query.py",
                lambda t: t.replace(
                    "    def chain(self, klass=None):\n",
                    "    def chain(self, klass=None):\n        # edited\n",
                    1,
                ),
            ),
            (
                "rename a method",
                "django/utils/text.py",
                lambda t: t.replace("def capfirst(", "def capfirst_renamed(", 1),
            ),
        ]
        largest = max(tree.rglob("*.py"), key=lambda p: p.stat().st_size)
        edits.append(
            (
                "append a function to the largest file",
                largest.relative_to(tree).as_posix(),
                lambda t: t + "\n\ndef _bench_largest():\n    return 1\n",
            )
        )
        totals: list[float] = []
        for round_ in range(args.repeat):
            for label, rel, edit in edits:
                target = tree / rel
                if not target.exists():
                    continue
                before = target.read_text()
                after = edit(before) + f"\n# round {round_}\n"
                assert after != before, label
                target.write_text(after)
                started = time.perf_counter()
                files = walk_project(tree).files
                walked = time.perf_counter() - started
                started = time.perf_counter()
                one = update_relation_index(tree, files=files)
                total = time.perf_counter() - started
                totals.append(total)
                delta = graph_store_for(tree).delta_path
                delta_size = delta.stat().st_size / 1e3 if delta.exists() else 0.0
                print(
                    f"one-file update, {label} ({rel}): parsed {one.parsed}, re-resolved "
                    f"{one.resolved} files; walk {walked:.2f}s; graph work {one.seconds:.2f}s, "
                    f"with load+save {total:.2f}s (delta {delta_size:.0f} KB)",
                    flush=True,
                )
        print(
            f"one-file update with load+save: median {statistics.median(totals):.2f}s, "
            f"range {min(totals):.2f}-{max(totals):.2f}s over {len(totals)} edits"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
