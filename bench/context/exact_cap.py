"""What the second ripgrep pass of exact search costs on a large tree, against one pass.

When a common term fills the line cap (2,000 lines, path order), ``grep_terms`` greps the
terms the first pass did not see once more, so a rare identifier later in the tree is not
lost. This times ``grep_terms`` as ``search_exact`` calls it on the localize-dev commit
messages that hold code terms, with and without that second pass, alternating, in one run.

    .venv/bin/python -m bench.context.exact_cap --project bench/data/Django-5.0 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import engram.stores.codeindex._exact as index_exact
from bench.localize_dev import DATASET
from engram.nodes._search_exact import MAX_EXACT_HITS, bounded_locator
from engram.stores.codeindex import exact_terms, grep, grep_terms
from engram.stores.codeindex._exact import is_path_term
from engram.stores.codeindex._ripgrep import GrepMatch


def one_pass(root: Path, terms: list[str]) -> list[GrepMatch]:
    """The exact search before the second pass: one capped ripgrep pass."""
    return grep(root, index_exact._pattern(terms), max_results=index_exact.MAX_GREP_LINES)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(ordered[len(ordered) // 2]),
        "p95": round(ordered[int(len(ordered) * 0.95)]),
        "max": round(ordered[-1]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = args.project.resolve()
    lines = (DATASET / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [q for q in (json.loads(line)["query"] for line in lines) if exact_terms(q)]
    code_terms = [[t for t in exact_terms(q) if not is_path_term(t)] for q in queries]
    capped = sum(
        1
        for terms in code_terms
        if terms and len(one_pass(root, terms)) >= index_exact.MAX_GREP_LINES
    )
    two_passes = index_exact._grep_all
    times: dict[str, list[float]] = {"one pass": [], "second pass when capped": []}
    for _ in range(args.repeat):
        for name, search in (("one pass", one_pass), ("second pass when capped", two_passes)):
            index_exact._grep_all = search
            for query in queries:
                started = time.perf_counter()
                grep_terms(
                    root, exact_terms(query), bounded_locator(root), max_files=MAX_EXACT_HITS
                )
                times[name].append((time.perf_counter() - started) * 1000)
    index_exact._grep_all = two_passes
    print(
        json.dumps(
            {
                "queries": len(queries),
                "filled the cap": capped,
                **{name: percentiles(v) for name, v in times.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
