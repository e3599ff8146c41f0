"""Describe the next model request of a run (system prompt, tools, turn context) for estimates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from graph.budget import Counter, content_text
from graph.compaction import Request
from graph.prompts import render_turn_context
from graph.state import State

__all__ = ["pending_turn_context", "request_for"]


def pending_turn_context(state: State) -> str:
    """Return the memory and code context not yet appended to the current user message.

    ``call_model`` appends it to the last user message on the first step of a turn; before
    that it still has to be counted, after that it is part of the history.
    """
    extra = render_turn_context(state.memory_block, str(state.context_pack.get("text", "")))
    if not extra:
        return ""
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage):
            return "" if extra in content_text(message.content) else extra
    return extra


def request_for(state: State, tools: Sequence[Any], count: Counter) -> Request:
    """Return the ``Request`` (system prompt, tool schemas, turn context) of the next call."""
    schemas = tuple(convert_to_openai_tool(tool) for tool in tools)
    return Request(
        system_prompt=state.system_prompt,
        tool_schemas=schemas,
        extra_tokens=count(pending_turn_context(state)),
        count=count,
    )
