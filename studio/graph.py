"""LangGraph Studio / ``langgraph dev`` entry: compile the engram graph for the server.

The server injects its own checkpointer and store, so none is passed here. The chat model and
project come from each run's context (the Studio form) or the ``ENGRAM_*`` environment.
"""

from __future__ import annotations

from engram.graph.builder import build_graph
from engram.graph.deps import make_default_deps

graph = build_graph(make_default_deps())
