"""CLI command ``engram context TASK``: build the context pack offline and show or print it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from engram.graph.cli.command_support import (
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
    print_table,
    run_async,
)
from engram.graph.context import Context
from engram.graph.deps import Deps

__all__ = ["context_command", "ensure_openers", "register", "run_context", "show_pack"]

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
NOT_WIRED_HINT = "this build's graph has no pack_context node; wire it in graph/builder.py"
MAP_ROWS = 15
"""Code-map rows shown in the readable output (the JSON has them all)."""


def register(app: typer.Typer) -> None:
    """Add the ``context`` command to the root command."""
    app.command("context")(context_command)


def ensure_openers(deps: Deps) -> Deps:
    """Register the code index and code graph openers unless the composition root did."""
    from engram.graph.retrieval.open_code_index import open_project_index
    from engram.stores.codegraph.code_graph import open_code_graph

    if deps.open_code_index is None:
        deps.open_code_index = open_project_index
    if deps.open_code_graph is None:
        deps.open_code_graph = lambda context: open_code_graph(context.project_path)
    return deps


def run_context(graph: Any, context: Context, task: str) -> dict[str, Any]:
    """Run the graph in context mode for ``task`` and return the pack.

    Raises:
        typer.Exit: The graph ended without a pack (it is not wired for context mode).
    """
    from langchain_core.messages import HumanMessage

    config = {"configurable": {"thread_id": f"context-{uuid.uuid4().hex[:12]}"}}
    state = run_async(
        graph.ainvoke({"messages": [HumanMessage(content=task)]}, config, context=context)
    )
    pack = state.get("context_pack") or {}
    if not pack:
        fail("the graph ended without a context pack", NOT_WIRED_HINT)
    return dict(pack)


@handle_errors
def context_command(
    task: str = typer.Argument(..., help="The task to gather context for."),
    path: Path | None = PathOption,
    budget: int | None = typer.Option(
        None, "--budget", "-b", help="Pack budget in tokens (default: derived from the window)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the pack as JSON."),
    as_text: bool = typer.Option(False, "--text", help="Print only the pack text (to paste)."),
) -> None:
    """Assemble the smallest context the task needs (rules, memory, code map, code slices)."""
    if not task.strip():
        fail("the task is empty", 'describe the task, e.g. engram context "fix the login bug"')
    # Imported here: the graph and its stores cost a second to import, which every other
    # engram command would otherwise pay at start-up.
    from engram.graph.builder import build_graph
    from engram.graph.cli.cli_runtime import open_store
    from engram.graph.deps import make_default_deps
    from engram.graph.retrieval.preload import preload

    context = load_context(path, mode="context", budget=budget, auto_approve=True)
    with open_store(context) as store:
        deps = ensure_openers(make_default_deps(store=store))
        graph = build_graph(deps, store=store)
        if "pack_context" not in graph.nodes:
            fail("the context pipeline is not wired into the graph", NOT_WIRED_HINT)
        preload(deps, context)
        pack = run_context(graph, context, task)
    if as_json:
        print_json(pack)
    elif as_text:
        out_console.out(pack.get("text", ""))
    else:
        show_pack(pack)


def show_pack(pack: dict[str, Any]) -> None:
    """Print the pack readably: sections with token counts, then why each file is in."""
    sections = Table(title=f"context pack: {pack['tokens']} of {pack['budget']} tokens")
    for column in ("section", "tokens", "budget", "items", "left out"):
        sections.add_column(column, justify="left" if column == "section" else "right")
    for section in pack["sections"]:
        sections.add_row(section["name"], str(section["tokens"]), str(section["budget"]),
                         str(len(section["items"])), str(section.get("dropped", 0)))
    print_table(sections)
    by_name = {s["name"]: s for s in pack["sections"]}
    sliced = {item["path"] for item in by_name.get("slices", {}).get("items", [])}
    files = Table(title="code map (why each file is in)")
    for column in ("#", "file", "score", "sliced", "why"):
        files.add_column(column)
    for number, item in enumerate(by_name.get("code_map", {}).get("items", [])[:MAP_ROWS], 1):
        files.add_row(str(number), escape(item["path"]), f"{item['score']:.4f}",
                      "yes" if item["path"] in sliced else "",
                      escape("; ".join(item["reasons"])))
    print_table(files)
    for item in by_name.get("slices", {}).get("items", []):
        symbol = f" {item['symbol']}" if item["symbol"] else ""
        out_console.print(f"[dim]slice[/] {escape(item['path'])}:{item['start_line']}-"
                          f"{item['end_line']}{escape(symbol)}")
    for note in pack.get("notes", []):
        out_console.print(f"[yellow]note:[/] {escape(note)}")
