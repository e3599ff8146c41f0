"""``engram profile`` and ``engram memory strategies|patterns|episodes`` commands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
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
from engram.cli._experience_edit_commands import add_commands
from engram.stores.project import memory_key

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from engram.stores.memory import ExperienceStore, Kind, Record

# The commands import the records, the stores, Phase 0 and the token counter (LangGraph,
# LangChain) when they run, not when the CLI starts: `engram --help` and the other commands
# should not pay for them.

PathOption = Annotated[Path | None, typer.Option("--path", "-p", help="Project root.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
GROUPS: dict[str, Kind] = {"strategies": "strategy", "patterns": "pattern", "episodes": "episode"}


@contextmanager
def opened_repo(path: Path | None) -> Iterator[tuple[BaseStore, ExperienceStore]]:
    """Yield the memory store and the experience store of the project at ``path``."""
    from engram.stores.memory import ExperienceStore
    from engram.stores.sqlite import database_url, open_memory_store

    context = load_context(path)
    with open_memory_store(context.home_path, database_url()) as store:
        yield store, ExperienceStore(store, memory_key(context.project_path, context.home_path))


def register(app: typer.Typer, memory_app: typer.Typer) -> None:
    """Add ``profile`` to ``app`` and the experience subgroups to the ``memory`` group."""
    app.command("profile")(handle_errors(profile))
    for group_name, kind in GROUPS.items():
        group = typer.Typer(
            name=group_name, help=f"Experience memory: {group_name}.", no_args_is_help=True
        )
        group.command("list")(handle_errors(_lister(kind)))
        group.command("show")(handle_errors(_shower(kind)))
        group.command("delete")(handle_errors(_deleter(kind)))
        add_commands(group, kind, opened_repo)
        memory_app.add_typer(group, name=group_name)


PROFILE_SKIPPED_LINES = 10
"""Records left out that ``engram profile`` lists in text (``--json`` has them all)."""


def profile(
    task_words: Annotated[
        list[str], typer.Argument(metavar="TASK", help="The task to profile (quotes optional).")
    ],
    path: PathOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the task profile and what Phase 0 would inject, without running the agent."""
    from engram.graph import count_text
    from engram.graph.profile import run_phase0
    from engram.stores.sqlite import database_url, open_memory_store

    task = words(task_words)
    context = load_context(path)
    now = datetime.now(UTC)
    with open_memory_store(context.home_path, database_url()) as store:
        result = run_phase0(store, task, context, count_tokens=count_text, now=now)
    report = result.report(count_text)
    data = {
        **result.profile.to_dict(),
        "injected": [
            {"kind": i.kind, "id": i.id, "reason": i.reason} for i in result.selection.items
        ],
        "facts": report["facts"],
        "tokens": report["tokens"],
        "experience_tokens": result.selection.tokens,
        "budget": result.selection.budget,
        "skipped": report["experience"]["skipped"],  # type: ignore[index]
        "memory_block": result.block,
        "notes": list(result.notes),
    }
    if as_json:
        print_json(data)
        return
    p = result.profile
    out_console.print(
        f"[bold]{p.task_type}[/] task, [bold]{p.risk}[/] risk "
        f"({p.files_affected} file(s); tests: {p.has_tests}; "
        f"features: {', '.join(p.features) or 'none'})"
    )
    for reason in p.reasons:
        out_console.print(f"  - {reason}", markup=False)
    out_console.print(
        f"injects {len(result.selection.items)} experience item(s), "
        f"{data['tokens']} tokens (experience budget {data['budget']})"
    )
    if result.block:
        out_console.print(result.block, markup=False)
    left_out = [
        {"kind": kind, "id": item_id, "why": why} for kind, item_id, why in result.selection.skipped
    ]
    if left_out:
        out_console.print(f"left out ({len(left_out)}):")
        for item in left_out[:PROFILE_SKIPPED_LINES]:
            label = f"{item['kind']} {item['id']}".strip()
            out_console.print(f"  - {label}: {item['why']}", markup=False)
        if len(left_out) > PROFILE_SKIPPED_LINES:
            out_console.print(
                f"  … {len(left_out) - PROFILE_SKIPPED_LINES} more (`--json` lists them)",
                markup=False,
            )


def _row(record: Record, now: datetime) -> list[str]:
    from engram.stores.memory import Pattern, Strategy

    if isinstance(record, Strategy):
        return [
            record.id,
            record.priority,
            ", ".join(record.applies_to),
            record.scope,
            record.principle,
        ]
    if isinstance(record, Pattern):
        state = record.status + (", re-analyse" if record.needs_reanalysis else "")
        return [record.id, f"{record.confidence}/5", state, record.trigger.describe(), record.name]
    from engram.graph.profile import episode_weight

    weight = episode_weight(record, now)
    return [
        record.id,
        f"{record.date:%Y-%m-%d}",
        record.outcome,
        "archived" if weight is None else str(weight),
        record.summary,
    ]


HEADERS = {
    "strategy": ["id", "priority", "applies to", "scope", "principle"],
    "pattern": ["id", "confidence", "status", "trigger", "name"],
    "episode": ["id", "date", "outcome", "weight", "summary"],
}


def _lister(kind: Kind) -> Any:
    def list_(
        all_: Annotated[bool, typer.Option("--all", help="Include retired patterns.")] = False,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """List the records of this project (strategies include global ones)."""
        from engram.stores.memory import Pattern, record_to_dict

        with opened_repo(path) as (_, repo):
            records = repo.find(kind)
        if kind == "pattern" and not all_:
            records = [r for r in records if isinstance(r, Pattern) and r.status == "active"]
        if as_json:
            print_json([record_to_dict(r) for r in records])
            return
        if not records:
            group = next(name for name, of in GROUPS.items() if of == kind)
            retired = " (retired ones are shown with --all)" if kind == "pattern" else ""
            out_console.print(
                f"no {group} in this project yet{retired}; `engram memory {group} add` records one",
                markup=False,
            )
            return
        table = Table(*HEADERS[kind])
        now = datetime.now(UTC)
        for record in records:
            table.add_row(*_row(record, now))
        print_table(table)

    list_.__doc__ = f"List {kind} records of this project."
    return list_


def _shower(kind: Kind) -> Any:
    def show(
        record_id: Annotated[str, typer.Argument(help="Record id.")],
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show one record in full."""
        from engram.stores.memory import Episode, record_to_dict

        with opened_repo(path) as (_, repo):
            record = repo.get(kind, record_id)
        if record is None:
            fail(
                f"no {kind} {record_id}",
                f"run `engram memory {kind}s list` to see the ids"
                if kind != "strategy"
                else "run `engram memory strategies list`",
            )
        data = record_to_dict(record)
        if isinstance(record, Episode):
            from engram.graph.profile import episode_weight

            data["weight"] = episode_weight(record, datetime.now(UTC))
        if as_json:
            print_json(data)
            return
        for key, value in data.items():
            out_console.print(f"[bold]{key}:[/] {value}")

    return show


def _deleter(kind: Kind) -> Any:
    def delete(
        record_id: Annotated[str, typer.Argument(help="Record id.")],
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Delete one record."""
        with opened_repo(path) as (_, repo):
            existed = repo.delete(kind, record_id)
        if not existed:
            fail(f"no {kind} {record_id}", "check the id with the list command")
        if as_json:
            print_json({"action": "deleted", "kind": kind, "id": record_id})
        else:
            out_console.print(f"deleted {kind} {record_id}", markup=False)

    return delete
