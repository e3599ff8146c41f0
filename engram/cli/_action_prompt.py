"""Ask in the terminal before an edit or command runs: show the diff or command, read the answer."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import typer
from rich.markup import escape

from engram.cli._command_support import err_console, escape_controls
from engram.cli._live_view import diff_syntax

CHOICES = "[a]pprove / [r]eject / [e]dit / approve [all] of this kind for the session"
_EDITED_FIELD = {
    "run_command": "command",
    "edit_file": "new_string",
    "write_file": "content",
    "apply_patch": "patch",
}


def has_terminal() -> bool:
    """Return True when a person can answer on stdin."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def _show(payload: dict[str, Any]) -> None:
    risk = " · high-risk task: every action asks" if payload.get("high_risk") else ""
    err_console.rule(
        f"[bold yellow]{payload.get('question', 'approve?')}[/] "
        f"[dim](policy {payload.get('policy', 'ask')}{risk})[/]"
    )
    if payload.get("command") is not None and payload.get("tool") == "run_command":
        err_console.print(f"[bold]$[/] {escape(str(payload['command']))}", highlight=False)
    elif payload.get("category") == "mcp":
        err_console.print(
            f"[bold]{escape(str(payload.get('mcp_tool')))}[/] "
            f"{escape(json.dumps(payload.get('args') or {}, ensure_ascii=False))}",
            highlight=False,
        )
    else:
        err_console.print(diff_syntax(str(payload.get("diff", ""))))
    if payload.get("sandbox"):
        err_console.print(f"[dim]sandbox: {escape(str(payload['sandbox']))}[/]")
    if payload.get("error"):
        err_console.print(f"[yellow]{escape(str(payload['error']))}[/]")


def _edited_args(payload: dict[str, Any]) -> dict[str, Any] | None:
    tool = str(payload.get("tool"))
    key = _EDITED_FIELD.get(tool)
    args = dict(payload.get("args") or {})
    if key is None:
        return None
    current = str(args.get(key, ""))
    if tool == "run_command":
        # click echoes a default as is: one with control characters is shown only above, escaped
        plain = escape_controls(current) == current
        question = "command to run instead" + ("" if plain else " (Enter keeps the one above)")
        return {key: typer.prompt(question, default=current, show_default=plain, err=True)}
    edited = click.edit(current)
    return None if edited is None or edited == current else {key: edited}


def no_terminal_reason(policy: str, high_risk: bool = False) -> str:
    """Why an action that asks was refused with no terminal, and how to let it through."""
    if high_risk:
        return (
            "refused: there is no terminal to ask for approval, and a high-risk task asks "
            "under every policy. Run it in a terminal to approve each action"
        )
    more = (
        "--policy yolo"
        if policy == "auto-edit"
        else "--policy auto-edit (edits pass) or --policy yolo"
    )
    return (
        f"refused: there is no terminal to ask for approval under the policy '{policy}'. "
        f"Rerun with {more}, or allow the command or MCP tool in .engram/settings.toml "
        "([commands] allow = [...], [mcp] allow = [...])"
    )


def ask_action(payload: dict[str, Any]) -> dict[str, Any]:
    """Show one proposed edit or command and return the user's answer as a resume value."""
    if not has_terminal():
        reason = no_terminal_reason(
            str(payload.get("policy") or "ask"), bool(payload.get("high_risk"))
        )
        err_console.print(f"[yellow]{escape(str(payload.get('tool')))}: {escape(reason)}[/]")
        return {"action": "reject", "reason": reason}
    _show(payload)
    try:
        answer = typer.prompt(CHOICES, default="a", err=True).strip().lower()
        if answer in {"all", "approve all", "approve_all", "always"}:
            return {"action": "approve_all"}
        if answer.startswith("e"):
            args = _edited_args(payload)
            if args is not None:
                return {"action": "edit", "args": args}
            err_console.print("[yellow]nothing changed: asking again[/]")
            return ask_action(payload)
        if answer.startswith("r") or answer.startswith("n"):
            reason = typer.prompt("reason (goes to the model)", default="", err=True)
            return {"action": "reject", "reason": reason}
        return {"action": "approve"}
    except (EOFError, typer.Abort, click.Abort):
        return {"action": "reject", "reason": "no answer from the user"}
