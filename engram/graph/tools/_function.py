"""A model tool before it becomes a LangChain tool: name, description, function, arguments.

The MCP server lists and calls tools from these without importing LangChain; a run's graph
turns them into LangChain tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


@dataclass(frozen=True)
class ToolFunction:
    """One tool: the plain function behind it and what the model is told about it."""

    name: str
    description: str
    func: Callable[..., str]
    args_schema: type[BaseModel]

    def to_tool(self) -> BaseTool:
        """Return the LangChain tool a run's graph binds to the model."""
        from langchain_core.tools import StructuredTool

        return StructuredTool.from_function(
            func=self.func,
            name=self.name,
            description=self.description,
            args_schema=self.args_schema,
        )
