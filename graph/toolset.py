"""Assemble the tools the model may call in a run."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from graph.context import Context
from graph.deps import Deps
from graph.tools import build_core_tools

__all__ = ["build_tools"]


def build_tools(context: Context, deps: Deps) -> list[BaseTool]:
    """Return the read-only project tools plus the retrieval and memory tools."""
    return build_core_tools(context)
