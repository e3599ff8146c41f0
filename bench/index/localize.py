"""Localization benchmark: file recall@1/5/10 and MRR of `engram search --files` on localize-dev.

Usage:
    .venv/bin/python bench/index/localize.py [--sources bench/data/localize-dev]
        [--provider default] [--modes hybrid,bm25,dense] [--include-tests] [--json out.json]

Each library tree is indexed once (under --home: HOME/projects/<tree>-<digest>/index), then every case's
query goes through the same in-process API the CLI uses (`CodeIndex.search_files`). Like the
dataset's BM25 baseline, the candidate pool is the tree's non-test `.py` files unless
--include-tests is given (results outside the pool are dropped before scoring).
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
from engram.stores.codeindex import open_code_index  # noqa: E402
from engram.stores.embeddings import make_embedder  # noqa: E402
from engram.stores.project import ProjectState  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", default=str(ROOT / "bench/data/localize-dev"))
    parser.add_argument("--cases", default=str(DATASET / "cases.jsonl"))
    parser.add_argument("--provider", default="default")
    parser.add_argument("--home", default=str(ROOT / "bench/data/home"))
    parser.add_argument("--modes", default="hybrid,bm25,dense")
    parser.add_argument("--include-tests", action="store_true")
    parser.add_argument("--json", default="")
    parser.add_argument("--weights", default="", help="e.g. exact=1,bm25=1,dense=0.5")
    parser.add_argument("--decay", type=float, default=None)
    args = parser.parse_args()
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8") if line.strip()]
    home = Path(args.home).expanduser().resolve()
    embedder = make_embedder(args.provider, home=home)
    modes = args.modes.split(",")
    indexes = {}
    per: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    rows = []
    for case in cases:
        tree = Path(args.sources) / case["sdist_root"]
        if case["sdist_root"] not in indexes:
            state = ProjectState(tree.resolve(), home)
            index = open_code_index(tree, embedder=embedder, state=state)
            stats = index.update()
            print(
                f"indexed {case['sdist_root']}: {stats.files} files, {stats.chunks} chunks "
                f"in {stats.seconds:.1f}s",
                file=sys.stderr,
            )
            indexes[case["sdist_root"]] = index
        index = indexes[case["sdist_root"]]
        if args.weights:
            index.weights = {
                k: float(v) for k, v in (p.split("=") for p in args.weights.split(","))
            }
        if args.decay is not None:
            index.file_decay = args.decay
        lib = case["repo"].split("/")[1]
        for mode in modes:
            hits = index.search_files(case["query"], k=1000, mode=mode)
            ranked = [
                h.path
                for h in hits
                if h.path.endswith(".py") and (args.include_tests or not is_test_path(h.path))
            ]
            metrics = evaluate(ranked, case["gold_files"])
            per[(mode, lib)].append(metrics)
            per[(mode, "All")].append(metrics)
            rows.append(
                {
                    "mode": mode,
                    "repo": case["repo"],
                    "commit": case["commit"],
                    "top10": ranked[:10],
                    "gold": case["gold_files"],
                    **metrics,
                }
            )
    libs = sorted({lib for _, lib in per if lib != "All"}) + ["All"]
    print(
        f"provider={args.provider} model={embedder.model_id} tests "
        f"{'included' if args.include_tests else 'excluded'}"
    )
    print("| Mode | Library | Cases | R@1 | R@5 | R@10 | MRR |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for mode in modes:
        for lib in libs:
            ms = per[(mode, lib)]
            avg = {k: sum(m[k] for m in ms) / len(ms) for k in ("R@1", "R@5", "R@10", "MRR")}
            name = f"**{lib}**" if lib == "All" else lib
            print(
                f"| {mode} | {name} | {len(ms)} | {avg['R@1']:.3f} | {avg['R@5']:.3f} | "
                f"{avg['R@10']:.3f} | {avg['MRR']:.3f} |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    run_timed(main)
