"""Which chunks of a gold file hold the changed lines, and how well orderings find them.

    .venv/bin/python bench/locbench/chunk_rank.py --trees TREES --gold-lines GOLD_LINES \
        [--only REPO] [--out features.jsonl]

For each case and each gold file, every chunk of the file (functions, methods, classes and
module-level code) with the signals the issue gives about it, and the number of gold
changed lines it holds. Prints the gold-line coverage each ordering reaches when the file's
chunks are read in that order up to a token budget (each chunk cut at FOCUS_SLICE_TOKENS,
as the pack cuts a leading file's slices).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from dataset import (  # noqa: E402
    CASES,
    HOME_HELP,
    engram_home,
    is_indexed,
    load_cases,
    load_gold_lines,
    tree_of,
)

from engram.graph import Context  # noqa: E402
from engram.graph import count_text as count_tokens  # noqa: E402
from engram.graph.retrieval import open_project_index  # noqa: E402
from engram.stores.codeindex._issue_reading import read_issue  # noqa: E402
from engram.stores.codeindex._localization import issue_evidence, issue_query  # noqa: E402

BUDGETS = (640, 1280, 2560, 5120)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", required=True)
    parser.add_argument("--gold-lines", required=True)
    parser.add_argument("--cases", default=str(CASES))
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--out", default="")
    parser.add_argument("--home", default="", help=HOME_HELP)
    args = parser.parse_args()
    home = engram_home(args.home)
    gold_lines = load_gold_lines(args.gold_lines)
    out = open(args.out, "w") if args.out else None
    opened: dict = {}
    for case in load_cases(args.cases, args.only):
        tree = tree_of(args.trees, case)
        if not is_indexed(tree, home):
            continue
        if tree not in opened:
            for old in opened.values():
                old.close()
            opened = {tree: open_project_index(Context(project=str(tree), engram_home=str(home)))}
        index = opened[tree]
        signals = read_issue(case["query"])
        evidence = issue_evidence(index, case["query"])
        query = issue_query(signals)
        located = index._chunk_map()
        bm25 = index.ranked_lists(query, "bm25", 4000)["bm25"]
        title = index.ranked_lists(signals.title, "bm25", 4000)["bm25"]
        bm25_rank = {i: r for r, (i, _) in enumerate(bm25, 1)}
        title_rank = {i: r for r, (i, _) in enumerate(title, 1)}
        words = {w.lower() for w in [*signals.identifiers, *signals.errors, *signals.flags]}
        issue_vec = index.embedder.embed([query])[0]
        for path, lines in gold_lines.get(case["instance_id"], {}).items():
            chunks = [c for c in located.values() if c.path == path]
            if not chunks or not (tree / path).is_file():
                continue
            text = (tree / path).read_text(encoding="utf-8", errors="replace").splitlines()
            e = evidence.get(path)
            rows = []
            bodies = ["\n".join(text[c.start_line - 1 : c.end_line]) for c in chunks]
            vecs = index.embedder.embed(bodies) if bodies else []
            for c, body, vec in zip(chunks, bodies, vecs, strict=True):
                tokens = {t.lower() for t in _TOKEN.findall(body)}
                symbol = c.symbol.split("(", 1)[0]
                rows.append(
                    {
                        "start": c.start_line,
                        "end": c.end_line,
                        "kind": c.kind,
                        "symbol": c.symbol,
                        "tokens": count_tokens(body),
                        "gold": sum(c.start_line <= n <= c.end_line for n in lines),
                        "bm25": 1 / (5 + bm25_rank[c.key]) if c.key in bm25_rank else 0.0,
                        "title": 1 / (5 + title_rank[c.key]) if c.key in title_rank else 0.0,
                        "frame": float(
                            bool(e and any(c.start_line <= n <= c.end_line for n in e.lines))
                        ),
                        "named": float(
                            bool(
                                e and any(symbol == n or symbol.endswith("." + n) for n in e.names)
                            )
                        ),
                        "changed": (e.changed.get(symbol.rsplit(".", 1)[-1], 0.0) if e else 0.0),
                        "mentions": len(words & tokens),
                        "dense": float(sum(a * b for a, b in zip(issue_vec, vec, strict=True))),
                    }
                )
            record = {
                "instance_id": case["instance_id"],
                "repo": case["repo"],
                "path": path,
                "gold_total": len(lines),
                "file_lines": len(text),
                "chunks": rows,
                "rank": next(
                    (
                        i
                        for i, (p) in enumerate(
                            sorted(evidence, key=lambda q: -sum(evidence[q].vector())), 1
                        )
                        if p == path
                    ),
                    None,
                ),
            }
            if out:
                out.write(json.dumps(record) + "\n")
            print(
                f"{case['instance_id']} {path}: {len(rows)} chunks, gold in "
                f"{sum(r['gold'] > 0 for r in rows)}",
                file=sys.stderr,
            )
    if out:
        out.close()


if __name__ == "__main__":
    main()
