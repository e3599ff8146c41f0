"""Localization with and without the code-graph signal, in one run, on localize-dev.

Usage:
    .venv/bin/python bench/graph/localize_graph.py [--sources bench/data/localize-dev]
        [--provider default] [--graph-weight 0.5] [--seeds 5]

For each case: the hybrid file list comes from `CodeIndex.search_files` (as `engram search
--files`); the graph list is `pagerank_files` seeded with the hybrid top `--seeds` files and the
query's identifiers; "hybrid+graph" fuses both with `engram.stores.codeindex._fusion.rrf` (graph list weighted
`--graph-weight`). The candidate pool is non-test `.py` files, as in bench/index/localize.py.
The graph is built in memory (nothing written into the source trees).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.localize_dev import DATASET, evaluate, is_test_path, run_timed  # noqa: E402
from engram.stores.codeindex import (  # noqa: E402
    open_code_index,  # noqa: E402
    rrf,  # noqa: E402
)
from engram.stores.embeddings import make_embedder  # noqa: E402
from engram.stores.relations import RelationIndex  # noqa: E402
from engram.stores.relations._index import build_relation_index  # noqa: E402
from engram.stores.relations._pagerank import file_graph, pagerank_files  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", default=str(ROOT / "bench/data/localize-dev"))
    parser.add_argument("--cases", default=str(DATASET / "cases.jsonl"))
    parser.add_argument("--provider", default="default")
    parser.add_argument("--home", default=str(ROOT / "bench/data/home"))
    parser.add_argument("--graph-weight", default="0.25,0.5,1.0")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8") if line.strip()]
    embedder = make_embedder(args.provider, home=Path(args.home))
    weights = [float(w) for w in args.graph_weight.split(",")]
    trees: dict[str, tuple] = {}
    per: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)

    def keep(path: str) -> bool:
        return path.endswith(".py") and not is_test_path(path)

    for case in cases:
        root = case["sdist_root"]
        tree = Path(args.sources) / root
        if root not in trees:
            index = open_code_index(tree, embedder=embedder)
            index.update()
            graph = RelationIndex()
            stats = build_relation_index(tree, graph)
            print(
                f"{root}: graph {stats.nodes} nodes {stats.edges} edges in {stats.seconds:.1f}s",
                file=sys.stderr,
            )
            trees[root] = (index, graph, file_graph(graph))
        index, graph, fgraph = trees[root]
        lib = case["repo"].split("/")[1]
        hybrid = [h.path for h in index.search_files(case["query"], k=1000) if keep(h.path)]
        ranked_graph = [
            p
            for p, _ in pagerank_files(
                graph, seed_paths=hybrid[: args.seeds], query=case["query"], graph=fgraph
            )
            if keep(p)
        ]
        runs = {"hybrid": hybrid, "graph only": ranked_graph}
        for w in weights:
            fused = rrf({"hybrid": hybrid, "graph": ranked_graph}, {"graph": w})
            runs[f"hybrid+graph w={w}"] = [p for p, _ in fused]
        for name, ranked in runs.items():
            metrics = evaluate(ranked, case["gold_files"])
            per[(name, lib)].append(metrics)
            per[(name, "All")].append(metrics)
    libs = sorted({lib for _, lib in per if lib != "All"}) + ["All"]
    names = list(dict.fromkeys(name for name, _ in per))
    print(f"provider={args.provider} seeds={args.seeds} tests excluded")
    print("| Ranking | Library | Cases | R@1 | R@5 | R@10 | MRR |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        for lib in libs:
            ms = per[(name, lib)]
            avg = {k: sum(m[k] for m in ms) / len(ms) for k in ("R@1", "R@5", "R@10", "MRR")}
            label = f"**{lib}**" if lib == "All" else lib
            print(
                f"| {name} | {label} | {len(ms)} | {avg['R@1']:.3f} | {avg['R@5']:.3f} | "
                f"{avg['R@10']:.3f} | {avg['MRR']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    run_timed(main)
