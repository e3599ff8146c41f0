"""The context pack on locbench-dev, built in-process: gold files and gold changed lines.

    .venv/bin/python bench/locbench/pack_lines.py --trees TREES --gold-lines GOLD_LINES \
        [--home HOME] [--budgets 4000,8000,16000] [--only REPO] [--json OUT] \
        [--branch-timeout-ms MS]

The same pack ``engram context --budget B`` prints (the same graph, preload and settings),
scored like bench/context/locbench.py, but with one process and one warm index per tree: a
quick check of a pack change. The CLI harness stays the figure of record.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "bench" / "context"))

from dataset import (  # noqa: E402
    CASES,
    HOME_HELP,
    engram_home,
    is_indexed,
    load_cases,
    load_gold_lines,
    tree_of,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", required=True)
    parser.add_argument("--gold-lines", required=True)
    parser.add_argument("--cases", default=str(CASES))
    parser.add_argument("--budgets", default="4000,8000,16000")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--json", default="")
    parser.add_argument(
        "--branch-timeout-ms",
        type=int,
        default=60000,
        help="retrieval branch time limit (high: measure quality, not load)",
    )
    parser.add_argument(
        "--capture",
        default="",
        help="pickle each case's pack inputs here (for bench/locbench/pack_replay.py)",
    )
    parser.add_argument("--home", default="", help=HOME_HELP)
    args = parser.parse_args()
    home = engram_home(args.home)  # the trees' indexes live in their state folders there
    os.environ["ENGRAM_HOME"] = str(home)  # what load_context reads

    from locbench import score_pack  # bench/context/locbench.py

    from engram.api._pack import ensure_openers, run_pack_graph
    from engram.builder import build_graph
    from engram.cli._command_support import load_context
    from engram.cli._runtime import open_store
    from engram.graph import make_default_deps
    from engram.graph.retrieval import preload

    captured: list[dict] = []
    if args.capture:
        import engram.nodes._pack_context as node

        real = node.assemble_pack

        def capturing(state, context, **kw):  # noqa: ANN001, ANN003, ANN202
            captured.append(
                {
                    "state": state,
                    "context": context,
                    "feedback": kw["feedback"],
                    "extra": list(kw.get("extra", ())),
                    "notes": list(kw.get("notes", ())),
                }
            )
            return real(state, context, **kw)

        node.assemble_pack = capturing
    budgets = [int(b) for b in args.budgets.split(",")]
    gold_lines = load_gold_lines(args.gold_lines)
    by_tree: dict[Path, list[dict]] = defaultdict(list)
    for case in load_cases(args.cases, args.only):
        by_tree[tree_of(args.trees, case)].append(case)
    rows = []
    started = time.perf_counter()
    for tree, group in by_tree.items():
        if not is_indexed(tree, home):
            print(f"skip {tree}: not indexed", file=sys.stderr)
            continue
        for budget in budgets:
            context = load_context(
                tree,
                mode="context",
                budget=budget,
                auto_approve=True,
                branch_timeout_ms=args.branch_timeout_ms,
            )
            with open_store(context) as store:
                deps = ensure_openers(make_default_deps(store=store))
                graph = build_graph(deps, store=store)
                preload(deps, context)
                for case in group:
                    t0 = time.perf_counter()
                    pack = run_pack_graph(graph, context, case["query"])
                    if captured:
                        captured[-1]["case"] = case
                    scored = score_pack(
                        pack, case["gold_files"], gold_lines.get(case["instance_id"])
                    )
                    rows.append(
                        {
                            "instance_id": case["instance_id"],
                            "repo": case["repo"],
                            "category": case["category"],
                            "budget": budget,
                            "ms": (time.perf_counter() - t0) * 1000,
                            **scored,
                        }
                    )
        print(
            f"[{time.perf_counter() - started:6.1f}s] {tree.parent.name}: {len(group)} cases",
            file=sys.stderr,
        )
    print(
        "| budget | cases | gold file sliced | gold lines (macro) | gold lines (micro) | p50 ms |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for budget in budgets:
        cell = [r for r in rows if r["budget"] == budget]
        shares = [r["gold_lines_share"] for r in cell if r.get("gold_lines_share") is not None]
        total = sum(r.get("gold_lines_total", 0) for r in cell)
        micro = sum(r.get("gold_lines_hit", 0) for r in cell) / total if total else float("nan")
        macro = f"{statistics.mean(shares):.3f}" if shares else "n/a"  # no gold lines given
        print(
            f"| {budget} | {len(cell)} | {statistics.mean(r['covered'] for r in cell):.3f} | "
            f"{macro} | {micro:.3f} | "
            f"{statistics.median(r['ms'] for r in cell):.0f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.capture:
        import pickle

        with open(args.capture, "wb") as f:
            pickle.dump([c for c in captured if "case" in c], f)


if __name__ == "__main__":
    main()
