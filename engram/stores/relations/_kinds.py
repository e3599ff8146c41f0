"""The relations a code-graph question can ask about (no graph library needed to name them)."""

from __future__ import annotations

from typing import Literal, get_args

Relation = Literal[
    "callers", "callees", "subclasses", "implementations", "dependencies", "dependents", "impact"
]
RELATIONS: tuple[str, ...] = (*get_args(Relation), "path")
"""Every relation a question may name: the graph relations, then ``path`` (between two symbols)."""
