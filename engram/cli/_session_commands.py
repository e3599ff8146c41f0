"""``engram sessions``: list, show and history of checkpointed sessions; registers the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table
from rich.text import Text

from engram.cli._command_support import (
    handle_errors,
    load_context,
    out_console,
    print_json,
    print_table,
)

if TYPE_CHECKING:
    from langchain_core.messages import AnyMessage


# The commands import the session runtime (LangGraph, LangChain, the compiled graph) when they
# run, not when the CLI starts: `engram --help` and the other commands should not pay for it.

sessions_app = typer.Typer(help="Persisted sessions: list, inspect, resume, replay, fork.")
PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON.")
PREVIEW_CHARS = 300
ARG_PREVIEW_CHARS = 120
"""How much of each tool-call argument `sessions show` prints (`--full` shows them whole)."""


def register(app: typer.Typer) -> None:
    """Add the ``sessions`` group to the root command."""
    from engram.cli import _session_branch_commands as branch
    from engram.cli._session_rewind_command import rewind

    for name, command in (
        ("resume", branch.resume),
        ("replay", branch.replay),
        ("fork", branch.fork),
        ("compact", branch.compact),
        ("rewind", rewind),
    ):
        sessions_app.command(name)(command)
    app.add_typer(sessions_app, name="sessions")


def _message_row(message: AnyMessage) -> dict[str, Any]:
    from engram.graph import content_text

    text = content_text(message.content)
    row: dict[str, Any] = {"role": message.type, "id": message.id, "content": text}
    calls = getattr(message, "tool_calls", None)
    if calls:
        row["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in calls]
    call_id = getattr(message, "tool_call_id", None)
    if call_id:
        row["tool_call_id"] = call_id
    return row


@sessions_app.command("list")
@handle_errors
def list_sessions(
    path: Path | None = PathOption,
    all_projects: bool = typer.Option(False, "--all", help="Sessions of every project."),
    as_json: bool = JsonOption,
) -> None:
    """List this project's sessions (and those no project claims), newest first."""
    from engram.stores.project import memory_key
    from engram.stores.sqlite import database_url, open_checkpointer, session_rows

    context = load_context(path)
    project = None if all_projects else str(context.project_path)
    shared = memory_key(context.project_path, context.home_path)
    with open_checkpointer(context.home_path, database_url()) as saver:  # no graph needed to list
        rows = session_rows(saver, project, shared if shared != project else "")
    if as_json:
        print_json(rows)
        return
    if not rows:
        out_console.print("no sessions yet — start one with `engram run TASK` or `engram chat`")
        return
    table = Table()
    # Ids are what the other commands take: never cut them to fit (the title gives way).
    table.add_column("session", no_wrap=True, min_width=max(len(r["thread_id"]) for r in rows))
    for name in ("updated", "checkpoints", "title"):
        table.add_column(name)
    for row in rows:
        title = row["title"] + (f" (fork of {row['forked_from']})" if row["forked_from"] else "")
        table.add_row(row["thread_id"], row["updated"][:19], str(row["checkpoints"]), title)
    print_table(table)


@sessions_app.command("show")
@handle_errors
def show(
    thread_id: str = typer.Argument(..., help="Session id (or a unique prefix)."),
    path: Path | None = PathOption,
    full: bool = typer.Option(False, "--full", help="Every model call's request, in full."),
    as_json: bool = JsonOption,
) -> None:
    """Show a session's messages, usage and notes (``--full``: what the model received)."""
    from engram.cli._runtime import open_app
    from engram.cli._turn_runner import status_line
    from engram.sessions import load_snapshot
    from engram.stores import Ledger

    context = load_context(path)
    with open_app(context) as engram:
        thread_id, snapshot = load_snapshot(engram, thread_id)
    values = snapshot.values
    messages = [_message_row(m) for m in values.get("messages", [])]
    data: dict[str, Any] = {
        "thread_id": thread_id,
        "next": list(snapshot.next),
        "messages": messages,
        "usage": values.get("usage", {}),
        "notes": values.get("notes", []),
        "compaction_log": values.get("compaction_log", []),
        "interrupts": [i.value for i in getattr(snapshot, "interrupts", ()) or ()],
    }
    if full:
        data["model_calls"] = Ledger.for_project(
            context.project_path, context.home_path
        ).model_calls(thread_id)
    if as_json:
        print_json(data)
        return
    if full:
        _print_calls(data["model_calls"], thread_id)
    else:
        for row in messages:
            text = row["content"][:PREVIEW_CHARS]
            calls = ", ".join(_call_line(c) for c in row.get("tool_calls", []))
            out_console.print(
                Text.assemble((row["role"], "bold"), f"{' → ' + calls if calls else ''}: {text}")
            )
    for pending in data["interrupts"]:
        pending = pending if isinstance(pending, dict) else {}
        what = pending.get("command") or ", ".join(pending.get("files") or [])
        out_console.print(
            Text.assemble(
                ("waiting for an answer: ", "yellow"),
                f"{pending.get('kind', 'interrupt')} {what}".rstrip(),
            )
        )
    if snapshot.next:
        out_console.print(
            f"[yellow]paused before {', '.join(snapshot.next)}[/] — "
            f"`engram sessions resume {thread_id}` continues it"
        )
    out_console.print(f"[dim]{status_line(values, context, thread_id)}[/]")


def _call_line(call: dict[str, Any]) -> str:
    """Return a tool call as ``name(key=value, …)``, each value cut to a preview."""
    args = call.get("args") or {}
    shown = ", ".join(
        f"{key}={_preview(json.dumps(value, ensure_ascii=False))}" for key, value in args.items()
    )
    return f"{call['name']}({shown})"


def _preview(text: str) -> str:
    return text if len(text) <= ARG_PREVIEW_CHARS else text[: ARG_PREVIEW_CHARS - 1] + "…"


def _print_calls(calls: list[dict[str, Any]], thread_id: str) -> None:
    from engram.cli._prompt_view import print_request

    if not calls:
        out_console.print(f"no model calls recorded in this project's ledger for {thread_id}")
        return
    for number, call in enumerate(calls, 1):
        title = f"model call {number} · step {call.get('step')} · {str(call.get('ts'))[:19]}"
        print_request(out_console, title, call["messages"], call["tools"])


@sessions_app.command("history")
@handle_errors
def history(
    thread_id: str = typer.Argument(..., help="Session id (or a unique prefix)."),
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
) -> None:
    """List a session's checkpoints, newest first (ids shortened to unique prefixes)."""
    from engram.cli._runtime import open_app
    from engram.sessions import CHECKPOINT_PREFIX_MIN, load_snapshot, unique_prefixes

    context = load_context(path)
    with open_app(context) as engram:
        thread_id, _ = load_snapshot(engram, thread_id)
        rows = [
            {
                "checkpoint_id": s.config["configurable"]["checkpoint_id"],
                "step": s.metadata.get("step") if s.metadata else None,
                "source": s.metadata.get("source") if s.metadata else None,
                "next": list(s.next),
                "messages": len(s.values.get("messages", [])),
                "created": s.created_at,
            }
            for s in engram.graph.get_state_history({"configurable": {"thread_id": thread_id}})
        ]
    if as_json:
        print_json(rows)
        return
    short = unique_prefixes([r["checkpoint_id"] for r in rows], CHECKPOINT_PREFIX_MIN)
    table = Table()
    table.add_column("checkpoint", no_wrap=True, min_width=max(map(len, short.values()), default=0))
    for name in ("step", "next", "messages", "created"):
        table.add_column(name)
    for row in rows:
        table.add_row(
            short[row["checkpoint_id"]],
            str(row["step"]),
            ",".join(row["next"]) or "—",
            str(row["messages"]),
            str(row["created"])[:19],
        )
    print_table(table)
    out_console.print(
        "[dim]checkpoint ids are shown as unique prefixes; every command takes them"
        " (`--json` prints them in full)[/]"
    )
