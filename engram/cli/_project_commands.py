"""``engram project``: which project this checkout is, and whether it shares its memory.

``show`` names the identity (the git history's root commit, or the path) and the key memory
is kept under; ``join`` shares this checkout's memory and sessions with every other checkout
of the project (what it learned alone is copied along); ``leave`` keeps them to itself again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

project_app = typer.Typer(
    help="This checkout's project identity and shared memory.", no_args_is_help=True
)
PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
JsonOption = typer.Option(False, "--json", help="Print JSON instead of text.")

JOIN_WARNING = (
    "Joining shares this checkout's memory (project facts, experience, sessions) with every "
    "checkout that has this repository's history, including forks: join only a repository "
    "you trust."
)


def register(app: typer.Typer) -> None:
    """Add the ``project`` commands to the root command."""
    app.add_typer(project_app, name="project")


def _facts(path: Path | None) -> dict[str, Any]:
    from engram.stores.project import joined_identity, memory_key, project_identity

    context = load_context(path)
    identity = project_identity(context.project_path)
    return {
        "path": str(context.project_path),
        "identity": identity.key,
        "source": identity.source,
        "note": identity.note,
        "joined": joined_identity(context.project_path, context.home_path) == identity.key,
        "memory_key": memory_key(context.project_path, context.home_path),
    }


@project_app.command("show")
@handle_errors
def show(path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """Say which project this checkout is and whether its memory is shared."""
    facts = _facts(path)
    if as_json:
        print_json(facts)
        return
    say = out_console.print
    say(f"project: {escape(facts['path'])}")
    if facts["source"] == "history":
        say(f"identity: {escape(facts['identity'])} (from its git history)")
        say(
            "memory: shared with the project's other checkouts"
            if facts["joined"]
            else "memory: kept for this folder only (`engram project join` shares it)"
        )
    else:
        say(f"identity: this folder ({escape(facts['note'])}); its memory is its own")


@project_app.command("join")
@handle_errors
def join(
    path: Path | None = PathOption,
    yes: bool = typer.Option(False, "--yes", "-y", help="Join without asking (no terminal)."),
    as_json: bool = JsonOption,
) -> None:
    """Share this checkout's memory and sessions with the project's other checkouts."""
    from engram.cli._action_prompt import has_terminal
    from engram.stores.memory import copy_project_memory
    from engram.stores.project import join_project, project_identity, project_key
    from engram.stores.sqlite import database_url, open_memory_store

    context = load_context(path)
    identity = project_identity(context.project_path)
    if not identity.shared:
        err_console.print(
            f"this checkout has no history to share by ({escape(identity.note)}); "
            "its memory stays its own",
            markup=True,
        )
        raise typer.Exit(EXIT_USER_ERROR)
    if not yes:
        if not has_terminal():
            err_console.print(f"{JOIN_WARNING}\nnot joined: run `engram project join --yes`")
            raise typer.Exit(EXIT_USER_ERROR)
        err_console.print(JOIN_WARNING)
        if not typer.confirm("Join this checkout to its project?", default=False, err=True):
            raise typer.Exit(EXIT_USER_ERROR)
    own = project_key(context.project_path)
    with open_memory_store(context.home_path, database_url()) as store:
        copied = copy_project_memory(store, own, identity.key)
    join_project(context.project_path, context.home_path)
    record = {"joined": identity.key, "facts_copied": copied.facts, **copied.experience}
    if as_json:
        print_json(record)
        return
    out_console.print(
        f"joined {identity.key}: {copied.facts} facts of this folder copied to the project",
        markup=False,
    )


@project_app.command("leave")
@handle_errors
def leave(path: Path | None = PathOption, as_json: bool = JsonOption) -> None:
    """Keep this checkout's memory to itself again (the project's memory is left as it is)."""
    from engram.stores.project import leave_project

    context = load_context(path)
    was = leave_project(context.project_path, context.home_path)
    if as_json:
        print_json({"left": was})
        return
    out_console.print("left the project: memory is this folder's own" if was else "was not joined")
