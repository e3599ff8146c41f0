"""``engram sessions resume|replay|fork|compact``: continue, branch or shrink a saved session.

Every command takes a session id or a unique prefix of one, and a checkpoint id or prefix.
A replay or fork writes a marker with its parent checkpoint into the project's ledger; the
session's title and fork origin carry over to every checkpoint written afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from engram.cli._command_support import (
    err_console,
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
    require_model,
    run_async,
)
from engram.graph import SessionError

if TYPE_CHECKING:
    from engram.sessions import App

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON.")
ThreadArgument = typer.Argument(..., help="Session id (or a unique prefix).")
PolicyOption = typer.Option(
    None,
    "--policy",
    help="Approval of edits and commands (default: the policy the session ran with).",
)
YesOption = typer.Option(False, "--yes", "-y", help="Skip confirmation of risky tasks.")


def _keep_policy(engram: App, thread_id: str, policy: str | None, yes: bool) -> None:
    """Run on with the policy the session ran with, unless ``--policy`` names another."""
    from dataclasses import replace

    from engram.stores.sqlite import session_metadata

    saved = session_metadata(engram.checkpointer, thread_id).get("policy")
    chosen: Any = policy or saved or engram.context.policy  # checked just below
    auto = yes or engram.context.auto_approve
    context = replace(engram.context, policy=chosen, auto_approve=auto)
    context.check_runnable()
    engram.context = context


def _continue(engram: App, thread_id: str, checkpoint_id: str | None, as_json: bool) -> None:
    from engram.cli._turn_runner import (
        ask_approval,
        print_turn,
        run_exit_code,
        run_summary,
        run_turn,
        session_config,
    )

    config = session_config(engram.checkpointer, thread_id, engram.context)
    if checkpoint_id:
        config["configurable"]["checkpoint_id"] = checkpoint_id
    result = run_async(
        run_turn(
            engram.graph,
            config,
            engram.context,
            None,
            console=err_console,
            approve=ask_approval,
            quiet=as_json,
        )
    )
    if as_json:
        print_json(run_summary(thread_id, result))
    else:
        print_turn(result, engram.context, thread_id)
    code = run_exit_code(result)
    if code:
        raise typer.Exit(code)


def _repair_finished(engram: App, thread_id: str, snapshot: Any) -> bool:
    """Close unanswered tool calls of a finished session; return whether anything changed."""
    from engram.graph import LAST_NODE
    from engram.graph.compaction import close_unanswered_calls, commit_messages
    from engram.stores import Ledger

    repair = close_unanswered_calls(snapshot.values.get("messages", []))
    if repair is None:
        return False
    engram.graph.update_state(
        {"configurable": {"thread_id": thread_id}},
        {"messages": commit_messages(repair.messages), "notes": [repair.note()]},
        as_node=LAST_NODE,
    )
    Ledger.for_project(engram.context.project_path, engram.context.home_path).append_messages(
        thread_id, repair.closed
    )
    err_console.print(f"[yellow]{repair.note()}[/]")
    return True


@handle_errors
def resume(
    thread_id: str = ThreadArgument,
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
    policy: str | None = PolicyOption,
    yes: bool = YesOption,
) -> None:
    """Finish a session that stopped part-way (crash, Ctrl-C, pending confirmation)."""
    from engram.cli._runtime import open_app
    from engram.sessions import load_snapshot

    context = load_context(path)
    require_model(context)
    with open_app(context) as engram:
        thread_id, snapshot = load_snapshot(engram, thread_id)
        _keep_policy(engram, thread_id, policy, yes)
        if snapshot.next:
            _continue(engram, thread_id, None, as_json)
            return
        if not _repair_finished(engram, thread_id, snapshot):
            fail(
                f"session {thread_id} has nothing pending",
                f"continue it with `engram chat --thread {thread_id}`",
                code=1,
            )
    if as_json:
        print_json({"thread_id": thread_id, "repaired": True})


@handle_errors
def replay(
    thread_id: str = ThreadArgument,
    checkpoint_id: str = typer.Argument(
        ..., help="Checkpoint to replay from, or a unique prefix (see `engram sessions history`)."
    ),
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
    policy: str | None = PolicyOption,
    yes: bool = YesOption,
) -> None:
    """Re-run a session from an earlier checkpoint (the old branch stays in history)."""
    from engram.cli._runtime import open_app
    from engram.sessions import load_snapshot
    from engram.stores import Ledger

    context = load_context(path)
    require_model(context)
    with open_app(context) as engram:
        thread_id, snapshot = load_snapshot(engram, thread_id, checkpoint_id)
        _keep_policy(engram, thread_id, policy, yes)
        checkpoint_id = snapshot.config["configurable"]["checkpoint_id"]
        Ledger.for_project(context.project_path, context.home_path).append(
            thread_id, "replay", _marker(snapshot)
        )
        _continue(engram, thread_id, checkpoint_id, as_json)


def _marker(snapshot: Any) -> dict[str, Any]:
    """Return what a replay or fork marker says about its parent checkpoint."""
    return {
        "checkpoint_id": snapshot.config["configurable"]["checkpoint_id"],
        "step": (snapshot.metadata or {}).get("step"),
        "next": list(snapshot.next),
        "messages": len(snapshot.values.get("messages", [])),
    }


@handle_errors
def fork(
    thread_id: str = ThreadArgument,
    checkpoint_id: str | None = typer.Option(
        None, "--checkpoint", help="Fork point: a checkpoint id or prefix."
    ),
    to: str | None = typer.Option(None, "--to", help="Id of the new session."),
    path: Path | None = PathOption,
    as_json: bool = JsonOption,
) -> None:
    """Copy a session (at its latest or a given checkpoint) into a new session."""
    from engram.cli._runtime import open_app
    from engram.cli._turn_runner import new_thread_id
    from engram.sessions import load_snapshot
    from engram.stores.sqlite import thread_ids

    context = load_context(path)
    with open_app(context) as engram:
        thread_id, snapshot = load_snapshot(engram, thread_id, checkpoint_id)
        new_id = to or new_thread_id()
        if new_id in thread_ids(engram.checkpointer):
            fail(f"session {new_id} already exists", "pick another --to name")
        _copy_checkpoint(engram, snapshot, new_id)
    parent = snapshot.config["configurable"]["checkpoint_id"]
    if as_json:
        print_json({"thread_id": new_id, "forked_from": thread_id, "checkpoint_id": parent})
        return
    out_console.print(
        f"forked {thread_id} at {parent} → [bold]{new_id}[/]; continue with "
        f"`engram chat --thread {new_id}` or `engram run --thread {new_id} TASK`"
    )


def _copy_checkpoint(engram: App, snapshot: Any, new_id: str) -> None:
    """Copy one checkpoint as the first checkpoint of a new thread, and start its ledger.

    The copy keeps the state and which nodes were due next, but not the writes the source
    session made after that checkpoint, so the fork re-runs from exactly that point. Its
    ledger opens with a fork marker and the conversation as it stood there.
    """
    from engram.stores import Ledger
    from engram.stores.sqlite import session_metadata

    saver = engram.checkpointer
    item = saver.get_tuple(snapshot.config)
    if item is None:
        raise SessionError("the checkpoint to fork no longer exists")
    source_id = snapshot.config["configurable"]["thread_id"]
    metadata = {
        **dict(item.metadata or {}),
        **session_metadata(saver, source_id),
        "project": str(engram.context.project_path),
        "forked_from": source_id,
        "fork_checkpoint": snapshot.config["configurable"]["checkpoint_id"],
    }
    target = {"configurable": {"thread_id": new_id, "checkpoint_ns": ""}}
    saver.put(
        target,  # type: ignore[arg-type]
        item.checkpoint,
        metadata,  # type: ignore[arg-type]
        item.checkpoint.get("channel_versions", {}),
    )
    ledger = Ledger.for_project(engram.context.project_path, engram.context.home_path)
    ledger.append(new_id, "fork", {"from_thread": source_id, **_marker(snapshot)})
    ledger.append_messages(new_id, snapshot.values.get("messages", []))


@handle_errors
def compact(
    thread_id: str = ThreadArgument, path: Path | None = PathOption, as_json: bool = JsonOption
) -> None:
    """Summarize a session down to its last request (what /compact does in chat)."""
    from engram.cli._runtime import open_app
    from engram.sessions import compact_session, load_snapshot

    context = load_context(path)
    with open_app(context) as engram:
        thread_id, _ = load_snapshot(engram, thread_id)
        event = run_async(compact_session(engram, thread_id))
    if as_json:
        print_json(event)
        return
    out_console.print(
        f"compaction {event['status']}: {event['tokens_before']:,} → "
        f"{event['tokens_after']:,} tokens; {event['removed_count']} messages "
        f"summarized ({event['source'] or 'nothing'})"
    )
    if event["status"] != "committed":
        out_console.print(f"[yellow]kept the original history:[/] {event['reason']}")
