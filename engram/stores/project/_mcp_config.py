"""Read the MCP servers a user and a project configure (``mcp.json``, the ``mcpServers`` shape)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MCP_CONFIG_FILE = Path(".engram") / "mcp.json"
"""A project's MCP servers, relative to its root (the user's are ``ENGRAM_HOME/mcp.json``)."""
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
"""Server names become tool-name prefixes, so they keep to what every provider accepts."""
TRANSPORTS: Mapping[str, str] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}
"""The ``type`` values other agents write, and the transport each means."""
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}`` in a header value: the variable's value (tokens stay out of the file)."""


@dataclass(frozen=True)
class McpServer:
    """One MCP server: a command started over stdio, or a URL (streamable HTTP or SSE)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)
    """Variables set for the server on top of a minimal environment (no API keys leak)."""
    source: str = ""
    """The configuration file the entry came from."""
    url: str = ""
    """A remote server's endpoint (empty for stdio servers)."""
    transport: str = "stdio"
    """``stdio``, ``http`` (streamable HTTP) or ``sse``."""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers sent to a remote server, ``${NAME}`` references already expanded."""

    @property
    def where(self) -> str:
        """The command or URL, for messages."""
        return self.url or self.command


def _server(name: str, entry: Any, source: str, *, expand: bool) -> McpServer:
    """Return one server entry as a ``McpServer``.

    ``${NAME}`` references in headers are expanded only when ``expand`` (the user's own file).

    Raises:
        ValueError: The entry lacks a command or URL, or has a field of the wrong shape.
    """
    if not SERVER_NAME.match(name):
        raise ValueError(f"server name {name!r} must be 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        raise ValueError(f"server {name!r} must be an object with a command or a url")
    url = entry.get("url")
    kind = entry.get("type") or entry.get("transport") or ("http" if url else "stdio")
    transport = TRANSPORTS.get(kind) if isinstance(kind, str) else None
    if transport is None:
        raise ValueError(
            f"server {name!r}: type {kind!r} is not one of {', '.join(sorted(set(TRANSPORTS)))}"
        )
    if transport != "stdio":
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"server {name!r} has no http(s) url ({transport} servers need one)")
        return McpServer(
            name,
            source=source,
            url=url,
            transport=transport,
            headers=_headers(name, entry.get("headers") or {}, expand=expand),
        )
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError(
            f"server {name!r} has no command (stdio servers need one; remote servers need a url)"
        )
    args = entry.get("args") or []
    env = entry.get("env") or {}
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"server {name!r}: args must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError(f"server {name!r}: env must map names to strings")
    return McpServer(name, command, tuple(args), {str(k): v for k, v in env.items()}, source)


def _headers(name: str, headers: Any, *, expand: bool) -> dict[str, str]:
    """Return a remote server's headers, ``${NAME}`` references expanded when ``expand``.

    Raises:
        ValueError: The headers are not a map of strings, name a variable that is not set
            (the message names the variable, never a value), or (not ``expand``) name one at
            all: a project's file never sends the user's environment anywhere.
    """
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError(f"server {name!r}: headers must map names to strings")
    if not expand:
        for value in headers.values():
            found = ENV_REFERENCE.search(value)
            if found:
                raise ValueError(
                    f"server {name!r}: a project's header cannot refer to "
                    f"${{{found.group(1)}}} (only your own mcp.json may); add the "
                    "server to ENGRAM_HOME/mcp.json instead"
                )
        return {str(k): v for k, v in headers.items()}

    def value_of(match: re.Match[str]) -> str:
        value = os.environ.get(match.group(1))
        if value is None:
            raise ValueError(
                f"server {name!r}: header value refers to ${{{match.group(1)}}}, "
                "which is not set in the environment"
            )
        return value

    return {str(k): ENV_REFERENCE.sub(value_of, v) for k, v in headers.items()}


def _read(path: Path, notes: list[str], *, user: bool) -> dict[str, McpServer]:
    """Return the valid servers of one file; each problem becomes one note."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        notes.append(
            f"MCP servers in {path} ignored: cannot read the file ({exc}); fix it or remove it"
        )
        return {}
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        notes.append(
            f"MCP servers in {path} ignored: expected "
            '{"mcpServers": {"name": {"command": ..., "args": [...]}}} '
            '(or {"url": ...} for a remote server)'
        )
        return {}
    servers: dict[str, McpServer] = {}
    for name, entry in entries.items():
        try:
            servers[name] = _server(str(name), entry, str(path), expand=user)
        except ValueError as exc:
            notes.append(f"MCP server ignored: {exc} in {path}; fix the entry to use its tools")
    return servers


def load_mcp_servers(
    project_root: Path, home: Path, *, project_trusted: bool
) -> tuple[list[McpServer], list[str]]:
    """Return the configured servers and notes: the user's, then a trusted project's.

    A project's entries count only when ``project_trusted``; they never replace a user entry
    of the same name, and never expand ``${NAME}`` from the environment. A file that cannot be
    read, or an entry without a command or URL, is left out with one note saying what to fix;
    the other servers still load.
    """
    notes: list[str] = []
    servers = _read(home / "mcp.json", notes, user=True)
    if not project_trusted:
        return list(servers.values()), notes
    for name, server in _read(project_root / MCP_CONFIG_FILE, notes, user=False).items():
        if name in servers:
            notes.append(
                f"MCP server {name!r} of {project_root / MCP_CONFIG_FILE} ignored: your "
                f"own entry of that name in {home / 'mcp.json'} is used"
            )
            continue
        servers[name] = server
    return list(servers.values()), notes
