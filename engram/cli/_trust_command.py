"""``engram trust``: show exactly what a project's shipped files would enable, and trust them.

``run`` and ``chat`` ask the same question once in a terminal (``confirm_trust``); without one,
an untrusted project's files are ignored and the run says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from engram.cli._command_support import (
    EXIT_USER_ERROR,
    err_console,
    handle_errors,
    load_context,
    out_console,
    print_json,
)

if TYPE_CHECKING:
    from engram.graph import Context
    from engram.stores.project import ShippedFile

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")


def register(app: typer.Typer) -> None:
    """Add the ``trust`` command to the root command."""
    app.command("trust")(trust_command)


def proposal(context: Context, files: list[ShippedFile]) -> dict[str, Any]:
    """Return what trusting ``files`` would enable: commands, verify commands, servers, rules."""
    from engram.stores.project import SettingsError, load_mcp_servers, load_project_settings

    found: dict[str, Any] = {
        "files": [{"path": f.path, "bytes": f.size} for f in files],
        "allow_commands": [],
        "verify_commands": [],
        "allow_mcp_tools": [],
        "mcp_servers": [],
        "rules_files": [{"path": f.path, "bytes": f.size} for f in files if f.path.endswith(".md")],
        "problems": [],
    }
    try:
        settings = load_project_settings(context.project_path)
    except SettingsError as exc:
        found["problems"].append(str(exc))
    else:
        found["allow_commands"] = list(settings.allow_commands)
        found["verify_commands"] = list(settings.verify_commands or ())
        found["allow_mcp_tools"] = list(settings.allow_mcp)
    user, _ = load_mcp_servers(context.project_path, context.home_path, project_trusted=False)
    mine = {s.name for s in user}
    servers, notes = load_mcp_servers(context.project_path, context.home_path, project_trusted=True)
    found["problems"] += notes
    found["mcp_servers"] = [
        {
            "name": s.name,
            "transport": s.transport,
            "command": [s.command, *s.args] if s.command else [],
            "url": s.url,
            "env": sorted(s.env),
            "headers": sorted(s.headers),
        }
        for s in servers
        if s.name not in mine
    ]
    return found


def _show(found: dict[str, Any], status: str) -> None:
    say = err_console.print
    say(f"[bold]This project ships files that change what engram does[/] ({status}):")
    for item in found["files"]:
        size = (
            "a link or not a regular file: never read"
            if item["bytes"] < 0
            else f"{item['bytes']} bytes"
        )
        say(f"  {escape(item['path'])} ({size})")
    say("Trusting it would:")
    rows = [
        ("run these commands without asking", found["allow_commands"]),
        ("run these checks after each change", found["verify_commands"]),
        ("call these MCP tools without asking", found["allow_mcp_tools"]),
    ]
    for label, values in rows:
        if values:
            say(f"  {label}: " + ", ".join(f"[cyan]{escape(v)}[/]" for v in values))
    for server in found["mcp_servers"]:
        where = " ".join(server["command"]) if server["command"] else server["url"]
        extra = (f" (env {', '.join(server['env'])})" if server["env"] else "") + (
            f" (headers {', '.join(server['headers'])})" if server["headers"] else ""
        )
        verb = "start" if server["command"] else "connect to"
        say(
            f"  {verb} MCP server [cyan]{escape(server['name'])}[/]: "
            f"[cyan]{escape(where)}[/]{escape(extra)}"
        )
    for rules in found["rules_files"]:
        if rules["bytes"] >= 0:
            say(f"  follow {escape(rules['path'])} ({rules['bytes']} bytes) as instructions")
    for problem in found["problems"]:
        say(f"  [yellow]note:[/] {escape(problem)}")


def confirm_trust(context: Context) -> Context:
    """In a terminal, ask once whether to trust an untrusted project; return the run settings.

    Without a terminal, or when the user says no, the settings are returned unchanged (the run
    then ignores the project's files and notes it).
    """
    from dataclasses import replace

    from engram.cli._action_prompt import has_terminal
    from engram.stores.project import record_trust, shipped_files, trust_status

    if context.trust_project or not has_terminal():
        return context
    status = trust_status(context.project_path, context.home_path)
    if status in ("trusted", "nothing"):
        return context
    files = shipped_files(context.project_path)
    _show(proposal(context, files), status)
    if not typer.confirm("Trust this project's files as shown?", default=False, err=True):
        err_console.print(
            "[dim]not trusted: they are ignored for this run (`engram trust` asks again)[/]"
        )
        return context
    record_trust(context.project_path, context.home_path, files)
    return replace(context, trust_project=True)


@handle_errors
def trust_command(
    path: Path | None = PathOption,
    yes: bool = typer.Option(False, "--yes", "-y", help="Trust without asking (no terminal)."),
    revoke: bool = typer.Option(False, "--revoke", help="Make the project untrusted again."),
    as_json: bool = typer.Option(False, "--json", help="Print what trust enables as JSON."),
) -> None:
    """Show what the project's settings, MCP servers and rules would enable; trust them."""
    from engram.cli._action_prompt import has_terminal
    from engram.stores.project import forget_trust, record_trust, shipped_files, trust_status

    context = load_context(path)
    if revoke:
        was = forget_trust(context.project_path, context.home_path)
        (
            print_json({"revoked": was})
            if as_json
            else out_console.print("no longer trusted" if was else "was not trusted")
        )
        return
    status = trust_status(context.project_path, context.home_path)
    files = shipped_files(context.project_path)
    found = proposal(context, files)
    if status == "nothing":
        (
            print_json({"status": status, **found})
            if as_json
            else out_console.print(
                "this project ships no settings, MCP servers or rules: nothing to trust"
            )
        )
        return
    if not as_json:
        _show(found, status)
    if status != "trusted" and not yes:
        if as_json or not has_terminal():
            if as_json:
                print_json({"status": status, **found})
            err_console.print("not trusted: run `engram trust --yes` to trust exactly this content")
            raise typer.Exit(EXIT_USER_ERROR)
        if not typer.confirm("Trust this project's files as shown?", default=False, err=True):
            raise typer.Exit(EXIT_USER_ERROR)
    if status != "trusted":
        record_trust(context.project_path, context.home_path, files)
        status = "trusted"
    if as_json:
        print_json({"status": status, **found})
    else:
        out_console.print("trusted: these files take effect until one of them changes")
