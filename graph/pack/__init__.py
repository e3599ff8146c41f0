"""The context pack: its budget, evidence fusion, filling and assembly from graph state."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "assemble_pack": "engram.graph.pack.pack_assembly",
}

__all__ = [
    "assemble_pack",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
