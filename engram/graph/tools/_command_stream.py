"""Send a running command's output to the run's custom stream, for a live terminal view."""

from __future__ import annotations

from collections.abc import Callable

COMMAND_EVENT = "command"
"""Custom stream event sent when a command starts: ``command`` and ``source``."""
OUTPUT_EVENT = "command_output"
"""Custom stream event carrying a piece of a running command's output: ``text``."""


def _ignore(text: str) -> None:
    return None


def command_stream(command: str, source: str) -> Callable[[str], None]:
    """Announce ``command`` on the run's custom stream; return a sender for its output.

    Outside a graph run (the MCP server, a script) and when nobody asked for the custom
    stream, LangGraph's writer drops the events, so this costs nothing there.
    """
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a graph run
        return _ignore
    writer({"event": COMMAND_EVENT, "command": command, "source": source})
    return lambda text: writer({"event": OUTPUT_EVENT, "text": text})
