"""The graph's nodes, one per module; ``engram.builder`` wires them."""

from __future__ import annotations

__all__: list[str] = []
