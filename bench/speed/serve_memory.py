"""Where the warm server's memory goes: resident size after each thing it loads, in one process.

    ENGRAM_HOME=HOME .venv/bin/python bench/speed/serve_memory.py --project TREE [--task T]

TREE must already be indexed in HOME (``engram index TREE``). The steps are the calls a warm
server makes for one ``engram context`` (the indexes opened once and kept), each followed by
the process's ``VmRSS``: the imports, the code index opened, a lexical query (BM25 loaded), a
dense query (Chroma's HNSW index loaded), the file table, the relation index opened, the first
pack (the relation graph and its tables derived), a second pack, then the freed heap given back
as the server does between commands. Prints one table row per step; ``--json`` writes them too.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.cli._serve_memory import release_free_memory, resident_mb  # noqa: E402

TASK = "QuerySet.bulk_create() crashes with update_conflicts on a model with a db_column"


def main() -> None:
    """Load what the warm server loads, step by step, and print the resident size after each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--task", default=TASK)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    steps: list[tuple[str, float]] = [("Python started", resident_mb())]

    def step(label: str) -> None:
        gc.collect()
        steps.append((label, resident_mb()))

    from bench.context.pipeline import compose, run_pack
    from engram.graph import Context, Deps
    from engram.graph.retrieval import open_project_index
    from engram.stores.relations import open_relation_index

    step("imports (engram, LangGraph, Chroma)")
    context = Context(
        project=str(args.project.resolve()),
        engram_home=os.environ.get("ENGRAM_HOME", ""),
        mode="context",
        auto_approve=True,
    )
    index = open_project_index(context)
    step("code index opened")
    index.search(args.task, mode="bm25", k=10)
    step("lexical query (BM25 loaded)")
    index.search(args.task, mode="dense", k=10)
    step("dense query (HNSW loaded)")
    index.file_table()
    step("file table")
    relations = open_relation_index(context.project_path, context.state)
    step("relation index opened")
    graph = compose(
        Deps(open_code_index=lambda _c: index, open_relation_index=lambda _c: relations)
    )
    run_pack(graph, context, args.task)
    step("first pack")
    run_pack(graph, context, args.task)
    step("second pack")
    started = time.perf_counter()
    release_free_memory()
    trimmed_ms = (time.perf_counter() - started) * 1000
    step("freed heap returned (``release_free_memory``, as the server does between commands)")
    before = steps[0][1]
    print("| step | RSS (MB) | added (MB) |")
    print("| --- | ---: | ---: |")
    for label, value in steps:
        print(f"| {label} | {value:.0f} | {value - before:+.0f} |")
        before = value
    print(f"\nreturning the freed heap took {trimmed_ms:.1f} ms")
    if args.json:
        args.json.write_text(json.dumps([{"step": s, "rss_mb": v} for s, v in steps], indent=1))


if __name__ == "__main__":
    main()
