"""engram from Python: the public names of ``engram.graph.api``, under a short import.

``from engram.api import build_context, create_graph, CodeRetriever, engram_tools, …``; each
name is imported on first use. See the README, "Use engram from Python".
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from engram.graph.api import __all__

__all__ = list(__all__)


def __getattr__(name: str) -> Any:
    """Return the public name from ``engram.graph.api`` (imported on first use)."""
    if name in __all__:
        return getattr(import_module("engram.graph.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
