"""``engram sessions rewind``: put a session's files and/or conversation back to a checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from engram.cli._command_support import (
    fail,
    handle_errors,
    load_context,
    out_console,
    print_json,
)

START = "start"
PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")


def rewind_message(
    files: list[str],
    conversation_checkpoint: str | None,
    target: str,
    held: Sequence[str] = (),
) -> str:
    """Describe a finished rewind in one line (file names escaped: ``display_path``)."""
    from engram.stores.files import display_path

    names = ", ".join(map(display_path, files))
    parts = [f"restored {len(files)} file(s)" + (f": {names}" if files else "")]
    if held:
        parts.append(
            f"kept as they are: {', '.join(map(display_path, held))} (a command changed them "
            "and they may hold "
            "edits made while it ran; --force restores them too)"
        )
    if conversation_checkpoint:
        parts.append(f"conversation back at {target} (new head {conversation_checkpoint[:12]})")
    return "; ".join(parts)


@handle_errors
def rewind(
    thread_id: str = typer.Argument(..., help="Session id (or a unique prefix)."),
    to: str = typer.Option(
        ...,
        "--to",
        help="Checkpoint id or unique prefix (see `engram "
        "sessions history`), or `start` for before the first turn.",
    ),
    code: bool = typer.Option(False, "--code", help="Rewind the files only."),
    conversation: bool = typer.Option(
        False, "--conversation", help="Rewind the conversation only."
    ),
    both: bool = typer.Option(False, "--both", help="Rewind files and conversation (default)."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Overwrite files changed since engram last wrote them, and files a command "
        "changed (they may hold edits made while it ran).",
    ),
    path: Path | None = PathOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Restore the files and/or the conversation as they were at a checkpoint."""
    from engram.cli._runtime import open_app
    from engram.sessions import resolve_checkpoint, resolve_thread, rewind_session

    if sum((code, conversation, both)) > 1:
        fail("--code, --conversation and --both exclude each other", "pick one (default --both)")
    context = load_context(path)
    with open_app(context) as engram:
        thread_id = resolve_thread(engram.checkpointer, thread_id)
        checkpoint = None if to == START else resolve_checkpoint(engram.checkpointer, thread_id, to)
        outcome = rewind_session(
            engram, thread_id, checkpoint, code=not conversation, conversation=not code, force=force
        )
    if as_json:
        print_json(outcome.as_json())
        return
    out_console.print(
        rewind_message(outcome.files, outcome.conversation_checkpoint, to, outcome.held),
        markup=False,
    )
