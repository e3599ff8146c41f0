"""The graph's nodes, one per module; ``engram.graph.builder`` wires them."""

from __future__ import annotations

__all__: list[str] = []
