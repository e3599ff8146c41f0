"""The commands the warm server runs: the one list the client and the server both check.

Standard library only: the console script imports it before anything else.
"""

from __future__ import annotations

FORWARDED = frozenset({"context", "search", "graph", "slice", "profile"})
"""Commands the warm server runs: read-only, and slow to start cold."""

FORWARDED_SUBCOMMANDS = frozenset({("memory", "search")})
"""Subcommands of a group the warm server runs (the rest of the group writes, or is quick)."""


def is_forwarded(args: list[str]) -> bool:
    """Return True when ``args`` (argv without the program) names a command the server runs."""
    if not args:
        return False
    return args[0] in FORWARDED or tuple(args[:2]) in FORWARDED_SUBCOMMANDS
