"""``--commit``: one git commit per finished task that changed files, recorded in the ledger."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from engram.cli._command_support import err_console
from engram.cli._turn_runner import TurnResult
from engram.graph import Context
from engram.stores import CommitRefusedError, Ledger, commit_task


def commit_turn(
    context: Context, thread_id: str, task: str, result: TurnResult
) -> dict[str, Any] | None:
    """Commit what a finished turn changed; return the commit (or its refusal) for ``--json``.

    A turn stopped by Ctrl-C or paused for an approval is not finished: nothing is committed.
    """
    files = list(result.values.get("files_changed") or [])
    if result.stopped or result.interrupted or not files:
        return None
    verification = result.values.get("verification") or {}
    commands = [str(run.get("command")) for run in verification.get("runs") or []]
    try:
        made = commit_task(
            context.project_path,
            task,
            files,
            str(verification.get("status") or "not-run"),
            commands,
        )
    except CommitRefusedError as exc:
        err_console.print(
            f"[yellow]not committed:[/] {escape(str(exc))}"
            + (f" — {escape(exc.hint)}" if exc.hint else "")
        )
        return {"error": str(exc)}
    if made is None:
        return None
    Ledger.for_project(context.project_path, context.home_path).append(
        thread_id, "commit", made.as_json()
    )
    err_console.print(
        f"[green]committed[/] {made.sha[:12]} on {escape(made.branch)}: {escape(made.subject)}"
    )
    return made.as_json()
