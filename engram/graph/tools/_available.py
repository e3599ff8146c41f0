"""Assemble the tools the model may call in a run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.graph._context import Context
from engram.graph._deps import Deps
from engram.graph.tools._function import ToolFunction
from engram.graph.tools._project import core_tool_functions
from engram.graph.tools._relations_tool import relations_function
from engram.graph.tools._save_memory import save_memory_function
from engram.graph.tools._search_code import search_code_function

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.store.base import BaseStore


def build_tools(
    context: Context,
    deps: Deps,
    store: BaseStore | None = None,
    *,
    spill_folder: str | None = None,
    after: Sequence[str] = (),
    actions: bool = True,
) -> list[BaseTool]:
    """Return the run's tools as LangChain tools: ``tool_functions``' and the actions.

    The actions (file edits, ``run_command`` and the MCP servers' tools) go through the
    graph's approval step; ``actions=False`` leaves them out for callers that have none.
    """
    from engram.graph._tokens import count_text
    from engram.graph.tools._command import build_command_tool
    from engram.graph.tools._mcp import mcp_tools
    from engram.graph.tools._write import build_write_tools

    functions = tool_functions(context, deps, store, spill_folder=spill_folder, after=after)
    tools = [f.to_tool() for f in functions]
    if actions:
        tools += [*build_write_tools(context), build_command_tool(context)]
        toolset = deps.mcp_tools(context)
        if toolset is not None:
            tools += mcp_tools(toolset, context, deps.count_tokens or count_text)
    return tools


def tool_functions(
    context: Context,
    deps: Deps,
    store: BaseStore | None = None,
    *,
    spill_folder: str | None = None,
    after: Sequence[str] = (),
) -> list[ToolFunction]:
    """Return the read-only project tools, semantic search, the relation index and memory saving.

    ``save_memory`` is offered only when a memory store is available: ``store`` (the one a
    LangGraph server injects through the node's runtime) or else ``deps.store``.
    ``spill_folder`` is the session's own spilled-output folder, the only part of
    ``.engram/`` that ``read_file`` opens (None over MCP: no session's outputs are shown).
    ``after`` names the untrusted content read so far; ``save_memory`` quarantines what it
    saves then. The MCP server serves these (it has no approval step for actions).
    """
    memory = store if store is not None else deps.store
    tools = core_tool_functions(context, spill_folder=spill_folder, ignore_check=deps.ignore_files)
    tools += [search_code_function(context, deps), relations_function(context, deps)]
    if memory is not None:
        tools.append(save_memory_function(context, memory, after=after))
    return tools
