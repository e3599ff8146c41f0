"""``engram index`` and ``engram search``: build the code index and query it from the terminal."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from engram.cli._command_support import (
    err_console,
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
    print_table,
    words,
)
from engram.stores import (
    BackendUnavailableError,
    IndexNotBuiltError,
    mask_url_passwords,
)

if TYPE_CHECKING:
    from engram.graph import Context
    from engram.stores.codeindex import (
        CodeHit,
        FileHit,
        FileKind,
        SearchMode,
    )

# The commands import the index, Chroma, the model tools and the progress bars when they run, not
# when the CLI starts: `engram --help` and the other commands should not pay for them.

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON.")
ProjectArgument = typer.Argument(None, help="Project root (default: current folder).")
MODES = ("exact", "semantic", "hybrid")


def register(app: typer.Typer) -> None:
    """Add the ``index`` and ``search`` commands to the root command."""
    app.command("index")(index_command)
    app.command("search")(search_command)


@handle_errors
def index_command(
    path: Path = ProjectArgument,
    path_option: Path = PathOption,
    gc: bool = typer.Option(
        False,
        "--gc",
        help="Also remove the shared server's vectors no checkout of the project uses.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Index the project's code (incremental): chunks, BM25, embeddings and the relation index."""
    if path is not None and path_option is not None and path.resolve() != path_option.resolve():
        fail(
            f"two projects given: {path} and --path {path_option}",
            "give the project once, as PATH or as --path",
        )
    context = load_context(path_option if path_option is not None else path)
    if gc and not context.chroma_url:
        fail(
            "--gc collects a shared Chroma server's vectors, and none is configured",
            "embedded Chroma holds only this checkout's vectors and never keeps unused ones; "
            "set ENGRAM_CHROMA_URL to collect a server's",
        )
    from engram.cli._index_build import build_index

    run = build_index(context, gc=gc)
    summary, stats, collected, mined = run.summary, run.stats, run.collected, run.mined
    if as_json:
        print_json(summary)
        return
    out_console.print(
        f"[bold]indexed[/] {stats.files} files, {stats.chunks} chunks · parsed "
        f"{stats.parsed_files} · new embeddings {stats.embedded} · cache hits "
        f"{stats.cache_hits} · "
        + (f"reused from the server {stats.reused} · " if stats.reused else "")
        + f"removed {stats.removed_chunks} chunks · {summary['seconds_total']:.1f}s"
    )
    if collected is not None:
        out_console.print(
            f"collected the server's vectors: removed {collected.removed} of "
            f"{collected.vectors} no checkout uses; kept {collected.kept} for "
            f"{collected.leases} checkout(s)"
            + (f"; {collected.expired_leases} lease(s) expired" if collected.expired_leases else "")
        )
    reasons = summary["skipped"]["reasons"]
    if reasons:
        counts = ", ".join(f"{n} {why}" for why, n in reasons.items())
        out_console.print(
            f"[dim]not indexed: {counts} (engram index --json lists them)[/]", highlight=False
        )
    if mined is not None and mined.note:
        without = "" if mined.usable else "; files are ranked without it"
        err_console.print(f"[yellow]history:[/] {mined.note}{without}")
    if summary["graph"].get("error"):
        err_console.print(f"[yellow]relation index not updated:[/] {summary['graph']['error']}")


@handle_errors
def search_command(
    query_words: Annotated[
        list[str],
        typer.Argument(
            metavar="QUERY",
            help="What to look for: identifiers, text, or a description (quotes optional).",
        ),
    ],
    path: Path = PathOption,
    mode: str = typer.Option("hybrid", "--mode", "-m", help="exact, semantic or hybrid."),
    k: int = typer.Option(10, "-k", help="How many results.", min=1),
    files: bool = typer.Option(False, "--files", help="Rank files instead of chunks."),
    as_json: bool = JsonOption,
) -> None:
    """Search the project's code; exact mode works without an index."""
    if mode not in MODES:
        fail(f"unknown mode {mode!r}", f"use one of {', '.join(MODES)}")
    query = words(query_words)
    if not query.strip():
        fail("the query is empty", 'say what to look for, e.g. engram search "retry delay"')
    context = load_context(path)
    results = _run_search(context, query, mode, k, files)
    rows = [asdict(r) for r in results]
    for row in rows:
        if "reasons" in row:
            row["reasons"] = list(row["reasons"])
    if as_json:
        print_json(rows)
        return
    _print_table(rows, files)


def _run_search(
    context: Context, query: str, mode: str, k: int, files: bool
) -> list[CodeHit] | list[FileHit]:
    root = context.project_path
    if mode == "exact":
        return _exact(root, query, k, files)
    from engram.cli._auto_index import ensure_index
    from engram.graph.retrieval import OUTAGE_HINT, open_project_index, vector_outage

    ensure_index(context)
    try:
        index = open_project_index(context)
        if not index.is_built():  # a first `engram index` was interrupted
            raise IndexNotBuiltError(f"the code index of {root} is not complete")
    except IndexNotBuiltError as exc:
        if mode == "semantic":
            raise
        err_console.print(f"[yellow]note:[/] {exc} — showing exact matches; {exc.hint}")
        return _exact(root, query, k, files)
    other = index.embedded_with_other_model()
    if other:
        err_console.print(
            f"[yellow]note:[/] the index was embedded with {other}, not "
            f"{index.embedder.model_id}; semantic results are missing until `engram index` "
            "re-embeds it"
        )
    search_mode: SearchMode = "dense" if mode == "semantic" else "hybrid"
    if files:
        found: list[CodeHit] | list[FileHit] = index.search_files(
            query, k=k, mode=search_mode, prefer=_preferred_kinds(query)
        )
        note = index.history.note() if index.history is not None else ""
        if note and search_mode == "hybrid":
            err_console.print(f"[yellow]note:[/] history: {note}")
    else:
        found = index.search(query, mode=search_mode, k=k)
    outage = vector_outage(index)
    if outage:
        if mode == "semantic":  # nothing else to rank by
            server = mask_url_passwords(context.chroma_url)
            raise BackendUnavailableError(
                f"semantic search needs the vectors on the Chroma server at {server}, which "
                "cannot be reached",
                hint=OUTAGE_HINT,
            )
        err_console.print(f"[yellow]note:[/] {escape(outage)}")
    changed = index.changed_since_indexed(hit.path for hit in found)
    if changed:
        err_console.print(f"[yellow]note:[/] {escape(changed_note(changed))}")
    return found


def changed_note(changed: list[str]) -> str:
    """Say which shown files changed since the index was updated, and what to do."""
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return (
        f"{shown} changed since the last `engram index`: the lines shown for "
        f"{'it' if len(changed) == 1 else 'them'} may be out of date; run `engram index`"
    )


def _exact(root: Path, query: str, k: int, files: bool) -> list[CodeHit] | list[FileHit]:
    from engram.stores.codeindex import FileHit, aggregate_files, exact_search_hits

    if not files:
        return exact_search_hits(root, query, k)
    hits = exact_search_hits(root, query, max(k * 20, 200))
    return [
        FileHit(p, round(s, 6), ())
        for p, s in aggregate_files([(h.path, h.score) for h in hits])[:k]
    ]


def _print_table(rows: list[dict[str, Any]], files: bool) -> None:
    if not rows:
        out_console.print("[dim]no results[/]")
        return
    table = Table(show_edge=False, pad_edge=False)
    if files:
        for column in ("score", "path", "why"):
            table.add_column(column)
        for row in rows:
            table.add_row(f"{row['score']:.4f}", row["path"], "; ".join(row["reasons"]))
    else:
        for column in ("score", "location", "symbol", "kind", "source"):
            table.add_column(column)
        for row in rows:
            location = f"{row['path']}:{row['start_line']}-{row['end_line']}"
            table.add_row(
                f"{row['score']:.4f}", location, row["symbol"], row["kind"], row["source"]
            )
    print_table(table)


def _preferred_kinds(query: str) -> tuple[FileKind, ...]:
    """Return the kinds of file a query is about (tests or docs tasks want those too)."""
    from engram.graph.profile import profile_task
    from engram.stores.codeindex import kinds_for_task

    return kinds_for_task(profile_task(query).task_type)
