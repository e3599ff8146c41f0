"""The context pack: its budget, evidence fusion, filling and assembly from graph state."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "assemble_pack": "engram.graph.pack.pack_assembly",
}

__all__ = [
    "assemble_pack",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
