"""Search latency on an indexed tree: hybrid (warm, in-process) and exact versus plain ripgrep.

Usage:
    .venv/bin/python bench/index/latency.py TREE [--queries N] [--provider default]

Hybrid queries are the localize-dev commit messages (realistic free text); exact queries are
identifiers defined in TREE, picked by a fixed rule (every n-th function name in the
manifest). Exact search is timed as `engram search --mode exact` does it (ripgrep plus locating
each match in its chunk) against running `rg -F` on the same pattern in the same tree.
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

from bench.localize_dev import DATASET  # noqa: E402
from engram.graph import Context  # noqa: E402
from engram.graph.retrieval import open_project_index  # noqa: E402
from engram.stores.codeindex import exact_search_hits  # noqa: E402
from engram.stores.codeindex._ripgrep import find_rg  # noqa: E402

CASES = DATASET / "cases.jsonl"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--provider", default="default")
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    context = Context(
        project=str(tree),
        embedding_provider=args.provider,
        engram_home=os.environ.get("ENGRAM_HOME", "~/.engram"),
    )
    index = open_project_index(context)
    queries = [json.loads(line)["query"] for line in CASES.open() if line.strip()]
    queries = (queries * (1 + args.queries // len(queries)))[: args.queries]
    index.search("warm up", k=10)
    index.search_files("warm up", k=10)
    rows = []
    for name, fn in (
        ("hybrid chunks (k=10)", lambda q: index.search(q, k=10)),
        ("hybrid files (k=10)", lambda q: index.search_files(q, k=10)),
    ):
        times = []
        for query in queries:
            started = time.perf_counter()
            fn(query)
            times.append((time.perf_counter() - started) * 1000)
        rows.append((name, len(times), statistics.median(times), pct(times, 0.95)))
    symbols = sorted(
        {
            c.symbol.split("(")[0].rsplit(".", 1)[-1]
            for c in index.manifest.chunks(sorted(index.manifest.chunk_ids())).values()
            if c.kind in {"function", "method"} and "_" in c.symbol
        }
    )
    names = symbols[:: max(1, len(symbols) // 20)][:20]
    rg = find_rg() or "rg"
    ours, plain = [], []
    for term in names:
        started = time.perf_counter()
        exact_search_hits(tree, term, 10)
        ours.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        subprocess.run([rg, "-F", "-n", "--json", term, str(tree)], capture_output=True)
        plain.append((time.perf_counter() - started) * 1000)
    rows.append(("exact (engram, k=10)", len(ours), statistics.median(ours), pct(ours, 0.95)))
    rows.append(("rg -F direct", len(plain), statistics.median(plain), pct(plain, 0.95)))
    print(
        f"tree={tree.name} chunks={len(index.manifest.chunk_ids())} model={index.embedder.model_id}"
    )
    print("| Search | Queries | p50 ms | p95 ms |")
    print("| --- | --- | --- | --- |")
    for name, n, p50, p95 in rows:
        print(f"| {name} | {n} | {p50:.1f} | {p95:.1f} |")
    print(f"exact/rg median ratio: {statistics.median(ours) / statistics.median(plain):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
