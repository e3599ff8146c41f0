"""Pack coverage on localize-dev: does the pack carry code from the file the real fix touched?

Usage:
    .venv/bin/python bench/context/coverage.py [--sources bench/data/localize-dev]
        [--home bench/data/home] [--budgets 4000,8000,16000] [--limit N] [--json out.json]

Each library tree is indexed (code index + code graph) once, then every case's commit message
goes through the context pipeline (bench/context/pipeline.py: the real nodes) with
``mode=context`` and ``--budget`` set to each budget. A case is covered when one of its gold
files contributes a code slice to the pack (being listed in the code map alone does not
count). In the same run, a naive pack — the top NAIVE_FILES BM25 files (same index), each
contributing its head, budget / NAIVE_FILES tokens — is scored the same way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.localize_dev import DATASET, run_timed  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline import compose, make_deps, run_pack  # noqa: E402

from engram.graph import (  # noqa: E402
    Context,  # noqa: E402
    count_text,  # noqa: E402
)
from engram.graph.retrieval import open_project_index  # noqa: E402
from engram.stores import IndexCorruptError  # noqa: E402
from engram.stores.relations import (  # noqa: E402
    GRAPH_FILE,  # noqa: E402
    update_relation_index,  # noqa: E402
)

NAIVE_FILES = 10
"""Files in the naive pack; each gets an equal share of the budget."""


def naive_files(index, tree: Path, query: str, budget: int) -> set[str]:
    """Return the files whose heads fill the naive pack (top BM25 files, equal shares)."""
    share = budget // NAIVE_FILES
    used: set[str] = set()
    for hit in index.search_files(query, k=NAIVE_FILES, mode="bm25"):
        head = (tree / hit.path).read_text(encoding="utf-8", errors="replace")[: share * 4]
        if head and count_text(head) > 0:
            used.add(hit.path)
    return used


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", default=str(ROOT / "bench/data/localize-dev"))
    parser.add_argument("--cases", default=str(DATASET / "cases.jsonl"))
    parser.add_argument("--home", default=str(ROOT / "bench/data/home"))
    parser.add_argument("--budgets", default="4000,8000,16000")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=500,
        help="per-branch timeout (raise it to measure quality apart from load)",
    )
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8") if line.strip()]
    cases = cases[: args.limit] if args.limit else cases
    budgets = [int(b) for b in args.budgets.split(",")]
    deps = make_deps()
    graph = compose(deps)
    indexes = {}
    covered: dict[tuple[str, int], list[bool]] = defaultdict(list)
    seconds: list[float] = []
    rows = []
    for case in cases:
        tree = Path(args.sources) / case["sdist_root"]
        base = Context(
            project=str(tree),
            engram_home=args.home,
            mode="context",
            auto_approve=True,
            branch_timeout_ms=args.timeout_ms,
        )
        if case["sdist_root"] not in indexes:
            index = open_project_index(base, create=True)
            stats = index.update()
            state = base.state  # ProjectState of the tree under --home
            try:
                update_relation_index(tree, state)
            except IndexCorruptError:  # saved by an older format: rebuild
                (state.folder / GRAPH_FILE).unlink()
                update_relation_index(tree, state)
            print(f"indexed {case['sdist_root']}: {stats.files} files", file=sys.stderr)
            indexes[case["sdist_root"]] = index
            run_pack(graph, base.replace(branch_timeout_ms=60_000), "warm up the index")
        gold = set(case["gold_files"])
        for budget in budgets:
            pack, took = run_pack(graph, base.replace(budget=budget), case["query"])
            seconds.append(took)
            slices = next(s for s in pack["sections"] if s["name"] == "slices")
            in_slices = {item["path"] for item in slices["items"]}
            naive = naive_files(indexes[case["sdist_root"]], tree, case["query"], budget)
            covered[("engram", budget)].append(bool(gold & in_slices))
            covered[("naive", budget)].append(bool(gold & naive))
            rows.append(
                {
                    "commit": case["commit"],
                    "budget": budget,
                    "gold": sorted(gold),
                    "covered": bool(gold & in_slices),
                    "tokens": pack["tokens"],
                    "notes": pack["notes"],
                }
            )
    timeouts = sum(any("timed out" in n for n in r["notes"]) for r in rows)
    print(
        f"cases={len(cases)} runs={len(rows)} branch timeout {args.timeout_ms} ms: "
        f"{timeouts} runs had a branch time out; pipeline median "
        f"{statistics.median(seconds) * 1000:.0f} ms"
    )
    print("| Pack | " + " | ".join(f"{b // 1000}K" for b in budgets) + " |")
    print("| --- |" + " --- |" * len(budgets))
    for kind in ("engram", "naive"):
        cells = [f"{sum(covered[(kind, b)]) / len(cases):.3f}" for b in budgets]
        print(f"| {kind} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    run_timed(main)
