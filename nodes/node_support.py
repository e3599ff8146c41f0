"""Small helpers shared by nodes: the current thread id and the project ledger."""

from __future__ import annotations

from langchain_core.messages import BaseMessage
from langgraph.config import get_config

from engram.graph.context import Context
from engram.stores.ledger import Ledger

__all__ = ["current_thread_id", "record_messages"]


def current_thread_id() -> str:
    """Return the thread id of the running graph, or "default" outside a checkpointed run."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return "default"
    return str(configurable.get("thread_id") or "default")


def record_messages(context: Context, messages: list[BaseMessage]) -> None:
    """Append messages to the project's audit ledger for the current thread (blocking).

    Async nodes call it through ``asyncio.to_thread``, which keeps LangGraph's config visible.
    """
    if messages:
        Ledger.for_project(context.project_path).append_messages(current_thread_id(), messages)
