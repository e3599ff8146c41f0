"""engram's model tools as LangChain tools for other agents: errors as text, results wrapped.

Each tool is the one engram's own agent gets (``read_file``, ``glob_files``, ``grep_code``,
``search_code``, ``relation_index`` and, with a memory store, ``save_memory``), wrapped so that it
behaves as the ``run_tools`` node does: an expected failure comes back as a tool message with
``status="error"`` instead of an exception, a large output is spilled to the project, and every
result reaches the model as ``<tool_result … trust="untrusted-data">`` with forged tags escaped.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.store.base import BaseStore
from pydantic import ValidationError

from engram.api._pack import ensure_openers, settings_for
from engram.graph import Context, Deps
from engram.graph.tools import (
    TOOL_ERRORS,
    build_tools,
    deliver_tool_output,
    reads_code,
    tool_error_text,
)
from engram.stores.project import ProjectState


def untrusted_tool(tool: BaseTool, state: ProjectState) -> BaseTool:
    """Return ``tool`` with engram's delivery: errors as tool messages, results wrapped.

    Invoked with a tool call (as agents do) it returns a ``ToolMessage`` whose status is
    ``"error"`` for a failed call; invoked with plain arguments it returns the wrapped text.
    Large outputs are spilled to the project's state folder (``state``, under ENGRAM_HOME).
    """

    def deliver(raw: str, code: bool = False) -> str:
        text, _ = deliver_tool_output(state, tool.name, uuid.uuid4().hex[:12], raw, code=code)
        return text

    def run(**arguments: Any) -> str:
        try:
            result = tool.invoke(arguments)
        except TOOL_ERRORS as exc:
            raise ToolException(deliver(tool_error_text(exc))) from exc
        return deliver(str(result), code=reads_code(tool.name, arguments))

    def invalid(error: ValidationError) -> str:
        return deliver(tool_error_text(ValueError(f"invalid arguments for {tool.name}: {error}")))

    return StructuredTool.from_function(
        func=run,
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        handle_tool_error=True,
        handle_validation_error=invalid,
    )


def engram_tools(
    project: str | Path | None = None,
    *,
    context: Context | None = None,
    store: BaseStore | None = None,
    deps: Deps | None = None,
) -> list[BaseTool]:
    """Return engram's model tools for a project, ready for ``create_agent(tools=...)``.

    The read, search, graph and memory tools only: the edit and command tools wait for
    engram's own approval step, which a foreign agent does not have.

    Args:
        project: Project root the tools are confined to (default: the settings' project).
        context: Settings (embedder, Chroma URL, home); default from ``ENGRAM_*``.
        store: Memory store; with one, ``save_memory`` is included.
        deps: Live handles (code index and graph openers); default opens them on demand.
    """
    settings = settings_for(project, context)
    handles = ensure_openers(deps or Deps())
    return [
        untrusted_tool(tool, settings.state)
        for tool in build_tools(settings, handles, store, actions=False)
    ]
