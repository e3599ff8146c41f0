"""Assemble the tools the model may call in a run."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.tools.code_graph_tool import build_code_graph_tool
from engram.graph.tools.command_tool import build_command_tool
from engram.graph.tools.project_tools import build_core_tools
from engram.graph.tools.save_memory_tool import build_save_memory_tool
from engram.graph.tools.search_code_tool import build_search_code_tool
from engram.graph.tools.write_tools import build_write_tools

__all__ = ["build_tools"]


def build_tools(
    context: Context,
    deps: Deps,
    store: BaseStore | None = None,
    *,
    spill_folder: str | None = None,
    after: Sequence[str] = (),
    actions: bool = True,
) -> list[BaseTool]:
    """Return the project tools, semantic search, the code graph, memory saving and actions.

    ``save_memory`` is offered only when a memory store is available: ``store`` (the one a
    LangGraph server injects through the node's runtime) or else ``deps.store``.
    ``spill_folder`` is the session's own spilled-output folder, the only part of
    ``.engram/`` that ``read_file`` opens (None over MCP: no session's outputs are shown).
    ``after`` names the untrusted content read so far; ``save_memory`` quarantines what it
    saves then.
    The actions (file edits and ``run_command``) go through the graph's approval step;
    ``actions=False`` leaves them out for callers that have none (the MCP server).
    """
    memory = store if store is not None else deps.store
    tools = build_core_tools(context, spill_folder=spill_folder)
    tools += [build_search_code_tool(context, deps), build_code_graph_tool(context, deps)]
    if memory is not None:
        tools.append(build_save_memory_tool(context, memory, after=after))
    if actions:
        tools += [*build_write_tools(context), build_command_tool(context)]
    return tools
