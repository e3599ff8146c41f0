"""Describe the next model request of a run (system prompt, tools, turn context) for estimates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from engram.graph._prompts import render_turn_context
from engram.graph._state import State
from engram.graph._tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    Counter,
    content_text,
    estimate_message,
)
from engram.graph._turn_context import attached_context
from engram.graph.compaction import Request

RULES_MARKER = "\n\nProject and team rules"
"""Where the rules files start in the system prompt (see ``engram.graph._prompts``)."""


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
            done = attached_context(message) or extra in content_text(message.content)
            return "" if done else extra
    return extra


def request_for(state: State, tools: Sequence[Any], count: Counter) -> Request:
    """Return the ``Request`` (system prompt, tool schemas, turn context) of the next call."""
    schemas = tuple(_schemas(tools))
    return Request(
        system_prompt=state.system_prompt,
        tool_schemas=schemas,
        extra_tokens=count(pending_turn_context(state)),
        count=count,
    )


def budget_partitions(state: State, tools: Sequence[Any], count: Counter) -> dict[str, int]:
    """Split the next request's estimate into parts, in tokens (for ``/status``).

    Parts: system prompt, rules files, tool schemas, memory, code context, history and tool
    results. The memory block and code context are counted where they stand: pending (not
    yet appended to the user turn) or already inside it.
    """
    system, marker, rules = state.system_prompt.partition(RULES_MARKER)
    schemas = _schemas(tools)
    memory = count(state.memory_block)
    code = count(str(state.context_pack.get("text", "")))
    history = tool_results = 0
    for message in state.messages:
        if isinstance(message, ToolMessage):
            tool_results += estimate_message(message, count)
        else:
            history += estimate_message(message, count)
    if not pending_turn_context(state):
        history = max(0, history - memory - code)
    return {
        "system": REQUEST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS + count(system),
        "rules": count(marker + rules) if marker else 0,
        "tools": sum(count(json.dumps(s, ensure_ascii=False, sort_keys=True)) for s in schemas),
        "memory": memory,
        "code_context": code,
        "history": history,
        "tool_results": tool_results,
    }


def _schemas(tools: Sequence[Any]) -> list[dict[str, Any]]:
    return [convert_to_openai_tool(tool) for tool in tools]
