"""Long-term memory: scoped facts and experience (strategies, patterns, episodes)."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

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
    return lazy_attribute(__name__, _WHERE, name)
