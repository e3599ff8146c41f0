"""Assemble the tools the model may call in a run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.tools.code_graph_tool import code_graph_function
from engram.graph.tools.project_tools import core_tool_functions
from engram.graph.tools.save_memory_tool import save_memory_function
from engram.graph.tools.search_code_tool import search_code_function
from engram.graph.tools.tool_function import ToolFunction

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.store.base import BaseStore

__all__ = ["build_tools", "tool_functions"]


def build_tools(
    context: Context,
    deps: Deps,
    store: BaseStore | None = None,
    *,
    spill_folder: str | None = None,
    after: Sequence[str] = (),
) -> list[BaseTool]:
    """Return the run's tools as LangChain tools (see ``tool_functions``)."""
    functions = tool_functions(context, deps, store, spill_folder=spill_folder, after=after)
    return [f.to_tool() for f in functions]


def tool_functions(
    context: Context,
    deps: Deps,
    store: BaseStore | None = None,
    *,
    spill_folder: str | None = None,
    after: Sequence[str] = (),
) -> list[ToolFunction]:
    """Return the read-only project tools, semantic search, the code graph and memory saving.

    ``save_memory`` is offered only when a memory store is available: ``store`` (the one a
    LangGraph server injects through the node's runtime) or else ``deps.store``.
    ``spill_folder`` is the session's own spilled-output folder, the only part of
    ``.engram/`` that ``read_file`` opens (None over MCP: no session's outputs are shown).
    ``after`` names the untrusted content read so far; ``save_memory`` quarantines what it
    saves then.
    """
    memory = store if store is not None else deps.store
    tools = core_tool_functions(context, spill_folder=spill_folder)
    tools += [search_code_function(context, deps), code_graph_function(context, deps)]
    if memory is not None:
        tools.append(save_memory_function(context, memory, after=after))
    return tools
