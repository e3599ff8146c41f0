"""engram: a LangGraph coding-agent workflow with budgeted code context and long-term memory.

The public names live in the packages' faces, one path each: ``engram.api`` for applications
(``create_graph``, ``build_pack``, retrievers, tools, middleware), ``engram.graph`` for the
core (``Context``, ``Deps``, ``State``), ``engram.stores`` and its sub-packages for storage, and
``engram.builder.build_graph`` for the LangGraph assembly. Importing ``engram`` loads nothing else.
"""

from __future__ import annotations

__version__ = "0.1.0"
"""engram's version; ``pyproject.toml`` names the same (a unit test holds them equal)."""

__all__ = ["__version__"]
