"""Read a project's ``.engram/settings.toml``: allowed commands and MCP tools, verification."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.stores._errors import StoreError

SETTINGS_FILE = Path(".engram") / "settings.toml"
"""Where a project keeps its engram settings, relative to its root."""


class SettingsError(StoreError, ValueError):
    """``.engram/settings.toml`` cannot be read or holds a value of the wrong shape."""


@dataclass(frozen=True)
class ProjectSettings:
    """The project's choices about commands.

    Example::

        [commands]
        allow = ["pytest*", "ruff check*"]   # run without asking (no shell operators)

        [verify]
        commands = ["pytest -q"]             # replaces the discovered test/lint commands

        [mcp]
        allow = ["docs__search", "tracker__get_*"]  # MCP tools called without asking
    """

    allow_commands: tuple[str, ...] = ()
    """Glob patterns of commands that run without asking under every policy but high risk."""
    verify_commands: tuple[str, ...] | None = None
    """Commands that verify a change; None discovers them from the project's files."""
    allow_mcp: tuple[str, ...] = ()
    """Glob patterns of ``server__tool`` names called without asking (but under high risk)."""


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(
            f"{SETTINGS_FILE}: {where}.{key} must be a list of strings",
            hint=f'write it as {key} = ["pytest -q"]',
        )
    return tuple(v.strip() for v in value if v.strip())


def load_project_settings(root: Path) -> ProjectSettings:
    """Return the settings of the project at ``root`` (defaults when the file is absent).

    Raises:
        SettingsError: The file is not valid TOML or a value has the wrong shape.
    """
    path = root / SETTINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ProjectSettings()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(
            f"cannot read {SETTINGS_FILE}: {exc}", hint="fix the file or remove it"
        ) from None
    commands = data.get("commands") or {}
    verify = data.get("verify") or {}
    mcp = data.get("mcp") or {}
    if not all(isinstance(t, dict) for t in (commands, verify, mcp)):
        raise SettingsError(f"{SETTINGS_FILE}: [commands], [verify] and [mcp] must be tables")
    return ProjectSettings(
        allow_commands=_strings(commands, "allow", "commands") or (),
        verify_commands=_strings(verify, "commands", "verify"),
        allow_mcp=_strings(mcp, "allow", "mcp") or (),
    )
