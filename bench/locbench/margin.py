"""Does the localizer know when its first file is right? R@1 by its top-two score margin.

    .venv/bin/python bench/locbench/margin.py --trees TREES --home HOME \
        --cases cases.jsonl [--cases cases-longtail.jsonl] [--lines REPLAY.json ...]

For each case, ``localize`` (what ``engram search --files`` ranks by) gives the files' scores;
the margin is the first score minus the second. Cases are split into margin quartiles, and
each quartile's R@1 is printed, with its mean gold changed lines shown at 8K when replay
scores are given (``pack_replay.py CAPTURE --json REPLAY.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from dataset import HOME_HELP, engram_home, is_indexed, load_cases, tree_of  # noqa: E402

QUARTILES = 4


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", required=True)
    parser.add_argument("--home", default="", help=HOME_HELP)
    parser.add_argument("--cases", action="append", required=True)
    parser.add_argument("--lines", action="append", default=[], help="pack_replay.py --json")
    args = parser.parse_args()
    home = engram_home(args.home)
    os.environ["ENGRAM_HOME"] = str(home)

    from engram.cli._command_support import load_context
    from engram.graph.retrieval import open_project_index
    from engram.stores.codeindex._localization import localize

    shown = {
        row["instance_id"]: row["gold_lines_share"] or 0.0
        for path in args.lines
        for row in json.loads(Path(path).read_text())
        if row.get("budget") == 8000
    }
    rows: list[tuple[float, bool, str]] = []
    for cases in args.cases:
        by_tree: dict[Path, list[dict]] = defaultdict(list)
        for case in load_cases(cases, []):
            by_tree[tree_of(args.trees, case)].append(case)
        for tree, group in by_tree.items():
            if not is_indexed(tree, home):
                print(f"skip {tree}: not indexed", file=sys.stderr)
                continue
            index = open_project_index(load_context(tree))
            try:
                for case in group:
                    ranked = localize(index, case["query"])[:2]
                    scores = [score for _, score in ranked]
                    margin = scores[0] - scores[1] if len(scores) == 2 else float("inf")
                    first = bool(ranked) and ranked[0][0].path in case["gold_files"]
                    rows.append((margin, first, case["instance_id"]))
            finally:
                index.close()
    rows.sort()
    print("| margin quartile | margins | cases | R@1 | gold lines at 8K |")
    print("| --- | --- | --- | --- | --- |")
    for q in range(QUARTILES):
        part = rows[q * len(rows) // QUARTILES : (q + 1) * len(rows) // QUARTILES]
        if not part:
            continue
        hits = sum(first for _, first, _ in part) / len(part)
        lines = [shown[i] for _, _, i in part if i in shown]
        mean = f"{statistics.mean(lines):.2f}" if lines else "—"
        print(
            f"| {q + 1} | {part[0][0]:.3f}–{part[-1][0]:.3f} | {len(part)} | {hits:.2f} | {mean} |"
        )


if __name__ == "__main__":
    main()
