"""CLI command ``engram context TASK``: build the context pack offline and show or print it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from engram.cli._command_support import (
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
    print_table,
    words,
)

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
MAP_ROWS = 15
"""Code-map rows shown in the readable output (the JSON has them all)."""


def register(app: typer.Typer) -> None:
    """Add the ``context`` command to the root command."""
    app.command("context")(context_command)


@handle_errors
def context_command(
    task_words: Annotated[
        list[str],
        typer.Argument(metavar="TASK", help="The task to gather context for (quotes optional)."),
    ],
    path: Path | None = PathOption,
    budget: int | None = typer.Option(
        None, "--budget", "-b", help="Pack budget in tokens (default: derived from the window)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the pack as JSON."),
    as_text: bool = typer.Option(False, "--text", help="Print only the pack text (to paste)."),
) -> None:
    """Assemble the smallest context the task needs (rules, memory, code map, code slices)."""
    task = words(task_words)
    if not task.strip():
        fail("the task is empty", 'describe the task, e.g. engram context "fix the login bug"')
    # Imported here: the graph and its stores cost a second to import, which every other
    # engram command would otherwise pay at start-up.
    from engram.api import context_pack_value, pack_settings
    from engram.cli._auto_index import ensure_index

    context = load_context(path)
    ensure_index(context)
    settings = pack_settings(budget=budget, context=context)
    pack: dict[str, Any] = dict(context_pack_value(task, settings))
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
        sections.add_row(
            section["name"],
            str(section["tokens"]),
            str(section["budget"]),
            str(len(section["items"])),
            str(section.get("dropped", 0)),
        )
    print_table(sections)
    by_name = {s["name"]: s for s in pack["sections"]}
    sliced = {item["path"] for item in by_name.get("slices", {}).get("items", [])}
    files = Table(title="code map (why each file is in)")
    files.add_column("#")
    files.add_column("file", overflow="fold")  # the path matters most: never cut it
    files.add_column("score")
    files.add_column("sliced")
    files.add_column("why")
    for number, item in enumerate(by_name.get("code_map", {}).get("items", [])[:MAP_ROWS], 1):
        files.add_row(
            str(number),
            escape(item["path"]),
            f"{item['score']:.4f}",
            "yes" if item["path"] in sliced else "",
            escape(short_why(item["reasons"])),
        )
    print_table(files)
    for item in by_name.get("slices", {}).get("items", []):
        symbol = f" {item['symbol']}" if item["symbol"] else ""
        runs = item.get("shown")
        shown = f" (lines {', '.join(f'{a}-{b}' for a, b in runs)})" if runs else ""
        out_console.print(
            f"[dim]slice[/] {escape(item['path'])}:{item['start_line']}-"
            f"{item['end_line']}{escape(symbol)}{shown}"
        )
    for note in pack.get("notes", []):
        out_console.print(f"[yellow]note:[/] {escape(note)}")


def short_why(reasons: list[str]) -> str:
    """Return a file's reasons as one line: the rankings that found it, then what they matched.

    ``["localizer #1: Doc.load(self, path)", "bm25 #10: Doc.load(self, path)"]`` reads
    ``localizer #1, bm25 #10: Doc.load``.
    """
    sources = [reason.split(":", 1)[0].strip() for reason in reasons]
    matched = dict.fromkeys(
        reason.split(":", 1)[1].split("(", 1)[0].strip() for reason in reasons if ":" in reason
    )
    names = ", ".join(name for name in matched if name)
    return ", ".join(dict.fromkeys(sources)) + (f": {names}" if names else "")
