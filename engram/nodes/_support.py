"""Small helpers shared by nodes: the current thread id and the project ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config

from engram.graph import Context
from engram.stores import Ledger


def current_thread_id() -> str:
    """Return the thread id of the running graph, or "default" outside a checkpointed run."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return "default"
    return str(configurable.get("thread_id") or "default")


def _ledger(context: Context) -> Ledger:
    """Return the project's ledger (blocking: resolving the project path touches the disk)."""
    return Ledger.for_project(context.project_path, context.home_path)


async def record_messages(context: Context, messages: list[BaseMessage]) -> None:
    """Append messages to the project's audit ledger for the current thread, off the event loop."""
    if messages:
        thread = current_thread_id()
        await asyncio.to_thread(lambda: _ledger(context).append_messages(thread, messages))


async def record_event(context: Context, kind: str, data: Mapping[str, Any]) -> None:
    """Append one event (an approval, a marker) to the current thread's ledger, off the loop."""
    thread = current_thread_id()
    await asyncio.to_thread(lambda: _ledger(context).append(thread, kind, data))


async def record_model_call(
    context: Context, request: Sequence[BaseMessage], tools: Sequence[BaseTool], step: int
) -> None:
    """Record exactly what one model request holds: messages in order and the tool schemas."""
    thread = current_thread_id()
    schemas = [convert_to_openai_tool(tool) for tool in tools]
    await asyncio.to_thread(
        lambda: _ledger(context).append_model_call(
            thread, list(request), schemas, step=step, model=context.model
        )
    )
