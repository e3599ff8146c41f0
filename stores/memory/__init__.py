"""Long-term memory: scoped facts and experience (strategies, patterns, episodes)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "Fact": "engram.stores.memory.fact_store",
    "FactStore": "engram.stores.memory.fact_store",
    "ExperienceStore": "engram.stores.memory.experience_store",
}

__all__ = [
    "ExperienceStore",
    "Fact",
    "FactStore",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
