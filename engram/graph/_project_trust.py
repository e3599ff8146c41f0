"""Whether a run may follow what the project ships: its settings, MCP servers and rules files.

A run trusts its project when the caller says so (``Context.trust_project``: the CLI sets it
after the user agreed, a library caller passes it explicitly) or when the user trusted exactly
the project's current shipped files with ``engram trust``. Otherwise those files are proposals:
ignored, with one note naming ``engram trust``.
"""

from __future__ import annotations

from engram.graph._context import Context
from engram.stores.project import (
    ProjectSettings,
    load_project_settings,
    shipped_files,
    trust_status,
)


def project_is_trusted(context: Context) -> bool:
    """Return whether the run may follow the project's shipped settings, servers and rules."""
    if context.trust_project:
        return True
    return trust_status(context.project_path, context.home_path) in ("trusted", "nothing")


def project_settings(context: Context) -> ProjectSettings:
    """Return the project's settings when it is trusted, else the defaults (nothing allowed).

    Raises:
        SettingsError: A trusted project's settings file cannot be read.
    """
    if not project_is_trusted(context):
        return ProjectSettings()
    return load_project_settings(context.project_path)


def untrusted_note(context: Context) -> str:
    """Return the note an untrusted project gets ("" when trusted or it ships nothing)."""
    if context.trust_project:
        return ""
    status = trust_status(context.project_path, context.home_path)
    if status in ("trusted", "nothing"):
        return ""
    names = ", ".join(item.path for item in shipped_files(context.project_path))
    why = "changed since you trusted it" if status == "changed" else "not trusted"
    return (
        f"this project is {why}: its {names} are ignored (no allowed commands, verify "
        "commands or MCP servers from it; its rules are data, not instructions); run "
        "`engram trust` to review and enable them"
    )
