"""Run engram's whole graph from Python: sync ``invoke``, async ``ainvoke``, and as a subgraph.

Usage: python examples/invoke_graph.py [PROJECT] [TASK]

The model comes from the environment (``ENGRAM_MODEL``, ``ENGRAM_BASE_URL``,
``OPENAI_API_KEY``); without one the graph stops after the context pack and returns it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from engram.api import create_graph
from engram.graph import Context


class HostState(TypedDict):
    """The state of a host app's own graph (no engram context schema)."""

    messages: Annotated[list[AnyMessage], add_messages]


def outcome(state: dict[str, Any]) -> str:
    """Return the final answer, or the pack size when no model is configured."""
    if state.get("context_pack") and state["messages"][-1].type == "human":
        return f"(no model: context pack of {state['context_pack']['tokens']} tokens)"
    return str(state["messages"][-1].content)


def main() -> None:
    """Run one task three ways and print each answer."""
    project = str(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve())
    task = sys.argv[2] if len(sys.argv) > 2 else "Where is the entry point of this project?"
    context = Context.from_env(project=project, auto_approve=True)
    graph = create_graph(store=InMemoryStore(), checkpointer=InMemorySaver())

    state = graph.invoke(
        {"messages": [HumanMessage(task)]}, {"configurable": {"thread_id": "sync"}}, context=context
    )
    print("invoke:", outcome(state))

    state = asyncio.run(
        graph.ainvoke(
            {"messages": [HumanMessage(task)]},
            {"configurable": {"thread_id": "async"}},
            context=context,
        )
    )
    print("ainvoke:", outcome(state))

    # As a subgraph of a host graph that passes no context: engram reads ENGRAM_* instead
    # (ENGRAM_PROJECT names the project; without it, the current folder).
    os.environ.setdefault("ENGRAM_PROJECT", project)
    host = StateGraph(HostState)
    host.add_node("engram", create_graph(store=InMemoryStore()))
    host.add_edge(START, "engram")
    state = host.compile().invoke({"messages": [HumanMessage(task)]})
    print("subgraph:", state["messages"][-1].content)


if __name__ == "__main__":
    main()
