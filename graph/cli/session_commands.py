"""``engram sessions``: list, show, history, resume, replay and fork checkpointed sessions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from engram.graph.cli.command_support import (
    err_console,
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
    print_table,
    require_model,
    run_async,
)
from engram.graph.errors import SessionError

if TYPE_CHECKING:
    from langchain_core.messages import AnyMessage

    from engram.graph.cli.cli_runtime import App

# The commands import the session runtime (LangGraph, LangChain, the compiled graph) when they
# run, not when the CLI starts: `engram --help` and the other commands should not pay for it.

__all__ = ["register"]

sessions_app = typer.Typer(help="Persisted sessions: list, inspect, resume, replay, fork.")
PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON.")
PREVIEW_CHARS = 300


def register(app: typer.Typer) -> None:
    """Add the ``sessions`` group to the root command."""
    app.add_typer(sessions_app, name="sessions")


def _snapshot(engram: App, thread_id: str, checkpoint_id: str | None = None) -> Any:
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if checkpoint_id:
        config["configurable"]["checkpoint_id"] = checkpoint_id
    snapshot = engram.graph.get_state(config)
    if not snapshot.values and not snapshot.next:
        raise SessionError(f"no session {thread_id!r}" + (
            f" at checkpoint {checkpoint_id}" if checkpoint_id else ""))
    return snapshot


def _message_row(message: AnyMessage) -> dict[str, Any]:
    text = str(message.content)
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
    """List this project's sessions, newest first."""
    from engram.stores.backends import database_url, open_checkpointer
    from engram.stores.session_listing import session_rows

    context = load_context(path)
    project = None if all_projects else str(context.project_path)
    with open_checkpointer(context.home_path, database_url()) as saver:  # no graph needed to list
        rows = session_rows(saver, project)
    if as_json:
        print_json(rows)
        return
    if not rows:
        out_console.print("no sessions yet — start one with `engram run TASK` or `engram chat`")
        return
    table = Table("session", "updated", "checkpoints", "title")
    for row in rows:
        table.add_row(row["thread_id"], row["updated"][:19], str(row["checkpoints"]), row["title"])
    print_table(table)


@sessions_app.command("show")
@handle_errors
def show(thread_id: str, path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """Show a session's messages, usage and notes."""
    from engram.graph.cli.cli_runtime import open_app
    from engram.graph.cli.turn_runner import status_line

    context = load_context(path)
    with open_app(context) as engram:
        snapshot = _snapshot(engram, thread_id)
    values = snapshot.values
    messages = [_message_row(m) for m in values.get("messages", [])]
    data = {
        "thread_id": thread_id,
        "next": list(snapshot.next),
        "messages": messages,
        "usage": values.get("usage", {}),
        "notes": values.get("notes", []),
        "compaction_log": values.get("compaction_log", []),
        "interrupts": [i.value for i in getattr(snapshot, "interrupts", ()) or ()],
    }
    if as_json:
        print_json(data)
        return
    for row in messages:
        text = row["content"][:PREVIEW_CHARS]
        calls = ", ".join(c["name"] for c in row.get("tool_calls", []))
        out_console.print(f"[bold]{row['role']}[/]{' → ' + calls if calls else ''}: {text}")
    for pending in data["interrupts"]:
        what = pending.get("command") or ", ".join(pending.get("files") or []) \
            if isinstance(pending, dict) else ""
        kind = pending.get("kind", "interrupt") if isinstance(pending, dict) else "interrupt"
        out_console.print(f"[yellow]waiting for an answer:[/] {kind} {what}".rstrip(),
                          markup=True, highlight=False)
    if snapshot.next:
        out_console.print(f"[yellow]paused before {', '.join(snapshot.next)}[/] — "
                          f"`engram sessions resume {thread_id}` continues it")
    out_console.print(f"[dim]{status_line(values, context, thread_id)}[/]")


@sessions_app.command("history")
@handle_errors
def history(thread_id: str, path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """List a session's checkpoints, newest first."""
    from engram.graph.cli.cli_runtime import open_app

    context = load_context(path)
    with open_app(context) as engram:
        _snapshot(engram, thread_id)
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
    table = Table("checkpoint", "step", "next", "messages", "created")
    for row in rows:
        table.add_row(row["checkpoint_id"], str(row["step"]), ",".join(row["next"]) or "—",
                      str(row["messages"]), str(row["created"])[:19])
    print_table(table)


def _continue(engram: App, config: dict[str, Any], as_json: bool) -> None:
    from engram.graph.cli.turn_runner import (
        ask_approval,
        print_answer,
        run_summary,
        run_turn,
        status_line,
    )

    result = run_async(run_turn(engram.graph, config, engram.context, None,
                                console=err_console, approve=ask_approval, quiet=as_json))
    thread_id = config["configurable"]["thread_id"]
    if as_json:
        print_json(run_summary(thread_id, result))
        return
    print_answer(out_console, result.answer)
    err_console.print(f"[dim]{status_line(result.values, engram.context, thread_id)}[/]")


@sessions_app.command("resume")
@handle_errors
def resume(thread_id: str, path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """Finish a session that stopped part-way (crash, Ctrl-C, pending confirmation)."""
    from engram.graph.cli.cli_runtime import open_app
    from engram.graph.cli.turn_runner import thread_config

    context = load_context(path)
    require_model(context)
    with open_app(context) as engram:
        snapshot = _snapshot(engram, thread_id)
        if not snapshot.next:
            fail(f"session {thread_id} has nothing pending",
                 f"continue it with `engram chat --thread {thread_id}`", code=1)
        _continue(engram, thread_config(thread_id, context), as_json)


@sessions_app.command("replay")
@handle_errors
def replay(
    thread_id: str,
    checkpoint_id: str = typer.Argument(..., help="Checkpoint to replay from (see history)."),
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
) -> None:
    """Re-run a session from an earlier checkpoint (the old branch stays in history)."""
    from engram.graph.cli.cli_runtime import open_app
    from engram.graph.cli.turn_runner import thread_config

    context = load_context(path)
    require_model(context)
    with open_app(context) as engram:
        _snapshot(engram, thread_id, checkpoint_id)
        config = thread_config(thread_id, context)
        config["configurable"]["checkpoint_id"] = checkpoint_id
        _continue(engram, config, as_json)


@sessions_app.command("fork")
@handle_errors
def fork(
    thread_id: str,
    checkpoint_id: str | None = typer.Option(None, "--checkpoint", help="Fork point."),
    to: str | None = typer.Option(None, "--to", help="Id of the new session."),
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
) -> None:
    """Copy a session (at its latest or a given checkpoint) into a new session."""
    from engram.graph.cli.cli_runtime import open_app
    from engram.graph.cli.turn_runner import new_thread_id

    context = load_context(path)
    with open_app(context) as engram:
        snapshot = _snapshot(engram, thread_id, checkpoint_id)
        new_id = to or new_thread_id()
        if engram.graph.get_state({"configurable": {"thread_id": new_id}}).values:
            fail(f"session {new_id} already exists", "pick another --to name")
        _copy_checkpoint(engram, snapshot.config, new_id, context)
    if as_json:
        print_json({"thread_id": new_id, "forked_from": thread_id, "checkpoint_id": checkpoint_id})
        return
    out_console.print(f"forked {thread_id} → [bold]{new_id}[/]; continue with "
                      f"`engram chat --thread {new_id}` or `engram run --thread {new_id} TASK`")


def _copy_checkpoint(engram: App, source: dict[str, Any], new_id: str, context: Any) -> None:
    """Copy one checkpoint as the first checkpoint of a new thread.

    The copy keeps the state and which nodes were due next, but not the writes the source
    session made after that checkpoint, so the fork re-runs from exactly that point.
    """
    saver = engram.checkpointer
    item = saver.get_tuple(source)  # type: ignore[arg-type]
    if item is None:
        raise SessionError("the checkpoint to fork no longer exists")
    source_id = source["configurable"]["thread_id"]
    metadata = {**dict(item.metadata or {}), "project": str(context.project_path),
                "title": f"fork of {source_id}", "forked_from": source_id}
    target = {"configurable": {"thread_id": new_id, "checkpoint_ns": ""}}
    saver.put(target, item.checkpoint, metadata,  # type: ignore[arg-type]
              item.checkpoint.get("channel_versions", {}))


@sessions_app.command("compact")
@handle_errors
def compact(thread_id: str, path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """Summarize a session down to its last request (what /compact does in chat)."""
    from engram.graph.cli.cli_runtime import open_app
    from engram.graph.cli.session_actions import compact_session

    context = load_context(path)
    with open_app(context) as engram:
        _snapshot(engram, thread_id)
        event = run_async(compact_session(engram, thread_id))
    if as_json:
        print_json(event)
        return
    out_console.print(f"compaction {event['status']}: {event['tokens_before']:,} → "
                      f"{event['tokens_after']:,} tokens; {event['removed_count']} messages "
                      f"summarized ({event['source'] or 'nothing'})")
    if event["status"] != "committed":
        out_console.print(f"[yellow]kept the original history:[/] {event['reason']}")
