"""``engram graph`` and ``engram slice``: structure queries and dependency slices from the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.tree import Tree

from engram.cli._command_support import (
    err_console,
    fail,
    handle_errors,
    load_context,
    print_json,
    print_table,
)
from engram.stores import IndexCorruptError
from engram.stores.relations import RELATIONS

if TYPE_CHECKING:
    from engram.graph import Context
    from engram.stores.relations import Answer, RelationIndex, Slice, SymbolInfo

# The commands import the relation index (tree-sitter, NetworkX) and the model tools (LangChain)
# when they run, not when the CLI starts: `engram --help` and other commands should not pay.

DEFAULT_SLICE_BUDGET = 2_000
PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON.")
EXIT_NOT_FOUND = 1


def _load_graph(context: Context, quiet: bool) -> RelationIndex:
    """Load the project's graph, building or refreshing it when missing (changed files only).

    In the warm server the graph it keeps open is lent instead (the same graph, kept current
    with the files it follows).
    """
    from engram.graph._warm_resources import WARM_RESOURCES

    keeper = WARM_RESOURCES.get()
    if keeper is not None:
        return keeper.keep("relation_index", context, lambda c: _read_graph(c, quiet))
    return _read_graph(context, quiet)


def _read_graph(context: Context, quiet: bool) -> RelationIndex:
    from engram.stores.relations import graph_store_for, update_relation_index

    project, state = context.project_path, context.state
    store = graph_store_for(project, state)
    try:
        graph = store.load()
        missing = graph is None
    except IndexCorruptError:
        graph, missing = (
            None,
            False,
        )  # unreadable, untrusted or another version: update_relation_index
        # says so in one line and rebuilds it
    if graph is None:
        if missing and not quiet:
            err_console.print(
                "[dim]no relation index yet: building it (`engram index` keeps it current)…[/]"
            )
        update_relation_index(project, state, store=store)
        graph = store.load()
    if graph is None:
        fail("the relation index could not be built", "run `engram index` first")
    return graph


def _label(info: SymbolInfo) -> str:
    if info.kind == "file":
        return f"[bold]{info.path}[/]"
    return (
        f"[bold]{info.qualname}[/] [dim]{info.kind} · {info.path}:{info.start_line}-"
        f"{info.end_line}[/]"
    )


def _tree(result: Answer) -> Tree:
    head = result.symbol.found
    root = Tree(f"{_label(head) if head else result.symbol.query} [cyan]{result.relation}[/]")
    if result.relation == "path":
        branch = root
        for info in result.path[1:]:
            branch = branch.add(_label(info))
        return root
    branches: dict[str, Tree] = {head.id: root} if head else {}
    for r in result.related:
        parent = branches.get(r.parent, root)
        text = _label(r.symbol) if r.symbol else f"[yellow]{r.name}[/] [dim](unresolved)[/]"
        branch = parent.add(f"[magenta]{r.relation}[/] {text}")
        if r.symbol is not None:
            branches.setdefault(r.symbol.id, branch)
    if not result.related:
        root.add("[dim](none)[/]")
    return root


def graph_command(
    symbol: str = typer.Argument(..., help="Symbol: name, Class.method, module.Class or path."),
    path: Path | None = PathOption,
    relation: str = typer.Option(
        "callers", "--relation", "-r", help=f"One of: {', '.join(RELATIONS)}."
    ),
    to: str = typer.Option("", "--to", help="Target symbol for --relation path."),
    depth: int = typer.Option(1, "--depth", "-d", min=1, help="Hops to follow."),
    json_out: bool = JsonOption,
) -> None:
    """Answer a structural question about a symbol from the relation index."""
    from engram.graph.tools import answer_to_dict
    from engram.stores.relations import GraphQueries, answer

    context = load_context(path)
    if relation not in RELATIONS:
        fail(f"unknown relation {relation!r}", f"use one of {', '.join(RELATIONS)}")
    graph = _load_graph(context, json_out)
    result = answer(GraphQueries(graph), symbol, relation, depth, to)
    if json_out:
        print_json(answer_to_dict(result))
    elif result.problem and not result.path:
        err_console.print(f"[yellow]{result.problem}[/]")
    else:
        print_table(_tree(result))
    if result.problem:
        raise typer.Exit(EXIT_NOT_FOUND)


def _print_slice(piece_slice: Slice) -> None:
    from rich.syntax import Syntax

    root = Tree(
        f"[bold]{piece_slice.target}[/] [dim]{piece_slice.tokens}/{piece_slice.budget} tokens[/]"
    )
    for p in piece_slice.pieces:
        branch = root.add(
            f"[magenta]{p.reason}[/] [bold]{p.symbol}[/] [dim]{p.path}:"
            f"{p.start_line}-{p.end_line} · {p.tokens} tokens[/]"
        )
        language = Path(p.path).suffix.lstrip(".") or "text"
        branch.add(Syntax(p.text, language, line_numbers=True, start_line=p.start_line))
    if piece_slice.omitted:
        root.add(f"[dim]omitted (budget or parse check): {', '.join(piece_slice.omitted)}[/]")
    print_table(root)


def slice_command(
    symbol: str = typer.Argument(..., help="Function or method to slice."),
    path: Path | None = PathOption,
    budget: int = typer.Option(
        DEFAULT_SLICE_BUDGET, "--budget", "-b", min=1, help="Token budget of the slice."
    ),
    json_out: bool = JsonOption,
) -> None:
    """Print a function with the bodies, constants and types it depends on, within a budget."""
    from engram.graph.tools import slice_to_dict
    from engram.stores.relations import GraphQueries, describe_match, slice_symbol

    context = load_context(path)
    graph = _load_graph(context, json_out)
    match = GraphQueries(graph).find(symbol)
    if match.found is None:
        fail(
            describe_match(match),
            "pass a qualified name (Class.method) or path::Qual.name",
            code=EXIT_NOT_FOUND,
        )
    piece_slice = slice_symbol(graph, match.found.id, context.project_path, budget=budget)
    if json_out:
        print_json(slice_to_dict(piece_slice))
    else:
        _print_slice(piece_slice)


def register(app: typer.Typer) -> None:
    """Add ``graph`` and ``slice`` to the root command."""
    app.command("graph")(handle_errors(graph_command))
    app.command("slice")(handle_errors(slice_command))
