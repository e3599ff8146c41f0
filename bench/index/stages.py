"""Where a full ``index`` run spends its wall time, stage by stage, in one process.

Runs the ``index`` command of ``bench/index/cli.py`` in this process with timers wrapped around
the functions each stage calls (no profiler, so Python code is not slowed more than C code),
and prints a markdown table of seconds per stage. Run it with a fresh ENGRAM_HOME (cold
embedding cache, no index yet) and the checkout to measure first on PYTHONPATH:

    ENGRAM_HOME=$(mktemp -d) PYTHONPATH=CHECKOUT .venv/bin/python bench/index/stages.py TREE

Stages that a checkout does not have (a function another version does not define) are
left out. Indented stages are counted inside the row above them, so rows do not add up.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

STAGES: tuple[tuple[str, str, str], ...] = (
    ("walk", "engram.stores.codeindex._incremental", "_walk"),
    ("read and hash changed files", "engram.stores.codeindex._incremental", "_scan"),
    (
        "chunk files (tree-sitter parse included)",
        "engram.stores.codeindex._incremental",
        "chunk_file",
    ),
    ("  tree-sitter parse (index and relations)", "engram.stores.codeindex._chunker", "parse"),
    ("  tree-sitter parse (index and relations)", "engram.stores.relations._extraction", "parse"),
    (
        "  relation facts from the chunker's trees (walk)",
        "engram.stores.relations._shared_facts",
        "SharedFacts.record",
    ),
    ("BM25 tokens of chunks", "engram.stores.codeindex._incremental", "code_tokens"),
    (
        "embed (cache lookups and writes included)",
        "engram.stores.embeddings._cache",
        "CachedEmbedder.embed",
    ),
    ("  static embedder", "engram.stores.embeddings._static", "StaticEmbedder.embed"),
    (
        "  embedding cache writes",
        "engram.stores.embeddings._cache",
        "SqliteEmbeddingCache.put_many",
    ),
    ("Chroma upserts", "engram.stores.codeindex._vectors", "ChromaVectors.upsert"),
    ("manifest commit (SQLite)", "engram.stores.codeindex._manifest", "Manifest.commit_run"),
    (
        "manifest chunk ids of replaced files",
        "engram.stores.codeindex._manifest",
        "Manifest.chunk_ids_of",
    ),
    ("BM25 build and save", "engram.stores.codeindex._incremental", "refresh_lexical"),
    (
        "relation index (read, parse, resolve, save)",
        "engram.stores.relations._index",
        "update_relation_index",
    ),
    ("  relation facts (parse and walk)", "engram.stores.relations._index", "extract_file"),
    ("  relation edges (resolve)", "engram.stores.relations._index", "replace_edges"),
)
"""(row label, module, attribute) of each timed function, in the order a run reaches them."""


def _wrap(totals: dict[str, float], label: str, module: str, attribute: str) -> None:
    """Replace ``module.attribute`` (``Class.method`` allowed) by a timed wrapper."""
    try:
        owner: Any = importlib.import_module(module)
    except ModuleNotFoundError:  # a module another version does not have
        return
    *parents, name = attribute.split(".")
    for parent in parents:
        owner = getattr(owner, parent, None)
    original = getattr(owner, name, None) if owner is not None else None
    if original is None:
        return
    depth = [0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return original(*args, **kwargs)  # recursion: timed once, at the outer call
        depth[0] += 1
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[label] += time.perf_counter() - started
            depth[0] -= 1

    setattr(owner, name, timed)
    totals.setdefault(label, 0.0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    args = parser.parse_args()
    started = time.perf_counter()
    import typer

    from engram.cli._index_commands import register

    app = typer.Typer()
    app.callback()(lambda: None)
    register(app)
    imports = time.perf_counter() - started
    totals: dict[str, float] = defaultdict(float)
    for label, module, attribute in STAGES:
        _wrap(totals, label, module, attribute)
    run: Callable[..., Any] = app
    command = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        run(["index", args.tree, "--json"], standalone_mode=False)
    finished = time.perf_counter()
    print("| Stage | Seconds |")
    print("| --- | --- |")
    print(f"| imports (Typer, the index command) | {imports:.2f} |")
    for label in dict.fromkeys(label for label, _, _ in STAGES):
        if label in totals:
            print(f"| {label} | {totals[label]:.2f} |")
    print(f"| whole `index` command | {finished - command:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
