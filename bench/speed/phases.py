"""Where one ``engram search`` (hybrid) or ``engram context`` spends its time, in one process.

Imports the libraries the command needs one group at a time, in the order the command first
needs them (each row: what that group adds to those above it), then runs the command's steps
through the same functions the CLI calls, and prints a markdown table of wall milliseconds,
with the garbage collector's CPU time over the whole run. Run it in a fresh process per
measurement, over an index built beforehand (``engram index PROJECT``):

    ENGRAM_HOME=H .venv/bin/python -m bench.speed.phases hybrid PROJECT
    ENGRAM_HOME=H .venv/bin/python -m bench.speed.phases context PROJECT

The interpreter's own start (``python -c pass``, ≈ 25 ms) comes before the first row.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.speed.startup import CONTEXT_TASK, HYBRID_QUERY

IMPORTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "hybrid": (
        ("Typer and Rich", ("typer", "rich.console")),
        ("Pydantic (Typer's coercion of option values)", ("typer._adapters",)),
        ("engram's CLI (command modules)", ("engram.cli._app",)),
        (
            "the code index's modules (SQLite manifest, ranking)",
            ("engram.graph.retrieval._open_code_index",),
        ),
        ("BM25 (bm25s, SciPy)", ("bm25s",)),
    ),
    "context": (
        ("Typer and Rich", ("typer", "rich.console")),
        ("Pydantic (Typer's coercion of option values)", ("typer._adapters",)),
        ("engram's CLI (command modules)", ("engram.cli._app",)),
        ("LangGraph's graph (LangChain core, LangSmith tracers, SDK)", ("langgraph.graph",)),
        (
            "engram's graph and nodes (NetworkX, NumPy, SciPy, tree-sitter)",
            ("engram.api._pack",),
        ),
    ),
}


class Clock:
    """Wall time of named steps, and the garbage collector's CPU time meanwhile."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []
        self.gc_cpu = 0.0
        self._gc_started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.thread_time()
        else:
            self.gc_cpu += time.thread_time() - self._gc_started

    def step(self, label: str, run: Callable[[], Any]) -> Any:
        """Run ``run`` and record its wall time under ``label``; return its result."""
        started = time.perf_counter()
        result = run()
        self.rows.append((label, time.perf_counter() - started))
        return result


def _import_groups(clock: Clock, command: str) -> None:
    for label, modules in IMPORTS[command]:
        clock.step(f"import {label}", lambda m=modules: [importlib.import_module(n) for n in m])
    from engram.stores.codeindex._chroma_import import import_chromadb

    clock.step("import Chroma's client (chromadb)", import_chromadb)


def run_hybrid(clock: Clock, project: Path) -> None:
    """Time ``engram search HYBRID_QUERY --path project`` step by step."""
    from engram.cli._command_support import load_context
    from engram.graph.retrieval import open_project_index

    context = load_context(project)
    index = clock.step(
        "open the index (Chroma client, manifest)", lambda: open_project_index(context)
    )
    clock.step(
        "search (first: loads BM25, vectors, the query embedder)",
        lambda: index.search(HYBRID_QUERY, mode="hybrid", k=10),
    )
    clock.step("the same search again (warm)", lambda: index.search(HYBRID_QUERY, k=10))


def run_context(clock: Clock, project: Path) -> None:
    """Time ``engram context CONTEXT_TASK --budget 8000 --path project`` step by step."""
    from engram.api import pack_settings
    from engram.api._pack import run_pack_graph
    from engram.builder import build_graph
    from engram.cli._command_support import load_context
    from engram.graph import make_default_deps
    from engram.graph.retrieval import preload
    from engram.stores.sqlite import database_url, open_memory_store

    settings = pack_settings(budget=8000, context=load_context(project))
    with open_memory_store(settings.home_path, database_url()) as memory:
        deps = make_default_deps(store=memory)
        graph = clock.step("build and compile the graph", lambda: build_graph(deps, store=memory))
        clock.step("open the code index (Chroma client)", lambda: deps.code_index(settings))
        clock.step(
            "preload (index searches, file table, code graph load)", lambda: preload(deps, settings)
        )
        clock.step("run the pack graph", lambda: run_pack_graph(graph, settings, CONTEXT_TASK))
        clock.step(
            "run the pack graph again (warm)", lambda: run_pack_graph(graph, settings, CONTEXT_TASK)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=sorted(IMPORTS))
    parser.add_argument("project", type=Path, help="An indexed project.")
    args = parser.parse_args()
    from engram.cli._entry import GC_YOUNG_THRESHOLD

    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])  # as the engram command does
    clock = Clock()
    _import_groups(clock, args.command)
    (run_hybrid if args.command == "hybrid" else run_context)(clock, args.project.resolve())
    print(f"`{args.command}` on {args.project}, load average {os.getloadavg()[0]:.1f}\n")
    print("| step | wall ms |\n|---|---|")
    for label, seconds in clock.rows:
        print(f"| {label} | {seconds * 1000:.0f} |")
    print(f"| (garbage collection, CPU, within the steps above) | {clock.gc_cpu * 1000:.0f} |")


if __name__ == "__main__":
    main()
