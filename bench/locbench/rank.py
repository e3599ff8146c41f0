"""File localization on locbench-dev: engram's issue localizer vs. its plain hybrid search.

    .venv/bin/python bench/locbench/rank.py --trees TREES \
        [--features bench/out/locbench_features.jsonl] [--only REPO] [--weights FILE]

Each tree must have been indexed (``engram index TREE``; bench/context/locbench.py does it).
Ranks every indexed file (docs, tests and data included: what ``engram search --files``
sees) and scores against the gold files (non-test ``.py`` files the fix changed). With
``--features`` it also writes each case's per-file features (top candidates plus the gold
files) for ``bench/locbench/fit.py``.
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

from engram.graph import Context  # noqa: E402
from engram.graph.retrieval import open_project_index  # noqa: E402
from engram.stores.codeindex import INDEX_DIR  # noqa: E402
from engram.stores.codeindex._localization import (  # noqa: E402
    FEATURES,
    HISTORY_FEATURES,
    Weights,
    issue_evidence,
    rank_evidence,
)

DATASET = ROOT.parent / "shared" / "bench" / "locbench-dev"
FEATURE_DEPTH = 150
HISTORY_DEPTH = 50


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    gold_set = set(gold)
    rr = next((1 / i for i, p in enumerate(ranked, 1) if p in gold_set), 0.0)
    return {
        "r1": len(gold_set & set(ranked[:1])) / len(gold_set),
        "r5": len(gold_set & set(ranked[:5])) / len(gold_set),
        "r10": len(gold_set & set(ranked[:10])) / len(gold_set),
        "acc5": float(gold_set <= set(ranked[:5])),
        "mrr": rr,
    }


def fused_files(index, query: str) -> list[str]:
    """The hybrid file ranking before the localizer: chunk RRF (exact, BM25, dense) per file.

    Reaches into the index's private fusion on purpose: it is the A/B baseline.
    """
    from engram.stores.codeindex import aggregate_files
    from engram.stores.codeindex._index import FILE_CANDIDATES_PER_LIST

    ranked = index._fused(query, "hybrid", FILE_CANDIDATES_PER_LIST)
    stored = index._chunk_map()
    pairs = [(stored[i].path, s) for i, s, _ in ranked if i in stored]
    return [path for path, _ in aggregate_files(pairs, decay=index.file_decay)]


def table(rows: list[dict], key: str) -> list[str]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
        groups["All"].append(row)
    if key == "repo":
        for row in rows:
            if row["repo"] != "yt-dlp/yt-dlp":
                groups["All but yt-dlp"].append(row)
    out = [
        f"| {key} | cases | ranker | R@1 | R@5 | Acc@5 | R@10 | MRR | top-5 source / test / docs / other |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in sorted(groups, key=lambda g: (g.startswith("All"), g)):
        group = groups[name]
        for ranker in ("hybrid", "localizer"):
            m = {
                k: statistics.mean(r[ranker][k] for r in group)
                for k in ("r1", "r5", "acc5", "r10", "mrr")
            }
            kinds: dict[str, int] = defaultdict(int)
            for r in group:
                for kind in r[ranker + "_kinds"]:
                    kinds[kind if kind in ("source", "test", "docs") else "other"] += 1
            total = max(sum(kinds.values()), 1)
            shares = " / ".join(
                f"{kinds[k] / total:.2f}" for k in ("source", "test", "docs", "other")
            )
            out.append(
                f"| {name} | {len(group)} | {ranker} | {m['r1']:.3f} | {m['r5']:.3f} | {m['acc5']:.3f} | "
                f"{m['r10']:.3f} | {m['mrr']:.3f} | {shares} |"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", required=True)
    parser.add_argument("--cases", default=str(DATASET / "cases.jsonl"))
    parser.add_argument("--features", default="")
    parser.add_argument("--weights", default="")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--no-history", action="store_true", help="rank as without git")
    parser.add_argument("--json", default="")
    parser.add_argument(
        "--home",
        default=os.environ.get("ENGRAM_HOME", "~/.engram"),
        help="ENGRAM_HOME the trees were indexed with (bench/context/locbench.py --home)",
    )
    args = parser.parse_args()
    from engram.stores.codeindex._file_kinds import file_kind

    weights = None
    if args.weights:
        data = json.loads(Path(args.weights).read_text())
        weights = Weights(features=data["features"], kinds=data["kinds"])
    cases = [json.loads(line) for line in Path(args.cases).read_text().splitlines() if line.strip()]
    if args.only:
        cases = [c for c in cases if c["repo"] in args.only]
    feature_out = open(args.features, "w") if args.features else None
    rows, opened = [], {}
    started = time.perf_counter()
    for n, case in enumerate(cases, 1):
        tree = Path(args.trees) / case["repo"].replace("/", "+") / case["base_commit"]
        context = Context(project=str(tree), engram_home=args.home)
        if not context.state.path(INDEX_DIR, "manifest.sqlite").exists():
            print(f"skip {case['instance_id']}: not indexed", file=sys.stderr)
            continue
        if tree not in opened:
            for old in opened.values():
                old.close()
            opened = {tree: open_project_index(context)}
            if args.no_history:
                opened[tree].history = None
            elif opened[tree].history is not None and opened[tree].history_tables() is None:
                mined = opened[tree].history.refresh()  # indexed before history was mined
                print(
                    f"history of {tree.name[:12]}: {len(mined.commits)} commits in "
                    f"{mined.seconds:.2f} s {mined.note}",
                    file=sys.stderr,
                )
        index = opened[tree]
        t0 = time.perf_counter()
        hybrid = fused_files(index, case["query"])[:50]
        t1 = time.perf_counter()
        evidence = issue_evidence(index, case["query"])
        ranked = rank_evidence(evidence, weights)
        t2 = time.perf_counter()
        paths = [e.path for e, _ in ranked]
        row = {
            "instance_id": case["instance_id"],
            "repo": case["repo"],
            "category": case["category"],
            "gold": case["gold_files"],
            "hybrid": metrics(hybrid, case["gold_files"]),
            "localizer": metrics(paths, case["gold_files"]),
            "hybrid_kinds": [file_kind(p) for p in hybrid[:5]],
            "localizer_kinds": [file_kind(p) for p in paths[:5]],
            "top5": paths[:5],
            "ms": {"hybrid": (t1 - t0) * 1000, "localizer": (t2 - t1) * 1000},
        }
        rows.append(row)
        print(
            f"[{time.perf_counter() - started:6.1f}s] {n}/{len(cases)} {case['instance_id']}: "
            f"hybrid rr {row['hybrid']['mrr']:.2f} localizer rr {row['localizer']['mrr']:.2f} "
            f"({row['ms']['localizer']:.0f} ms)",
            file=sys.stderr,
        )
        if feature_out:
            keep = [e for e, _ in ranked[:FEATURE_DEPTH]]
            for name in (*HISTORY_FEATURES, "imports"):  # what propagation alone would lift
                by = sorted(evidence.values(), key=lambda e, n=name: -getattr(e, n))
                keep += [e for e in by[:HISTORY_DEPTH] if getattr(e, name) > 0]
            keep = list({e.path: e for e in keep}.values())
            keep += [
                evidence[g] for g in case["gold_files"] if g in evidence and evidence[g] not in keep
            ]
            feature_out.write(
                json.dumps(
                    {
                        "instance_id": case["instance_id"],
                        "repo": case["repo"],
                        "gold": case["gold_files"],
                        "files": [[e.path, e.kind, e.vector()] for e in keep],
                    }
                )
                + "\n"
            )
    if feature_out:
        feature_out.close()
    print(f"features: {', '.join(FEATURES)}")
    print("\n".join(table(rows, "repo")))
    print()
    print("\n".join(table(rows, "category")))
    ms = sorted(r["ms"]["localizer"] for r in rows)
    print(f"\nlocalizer time per issue: median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
