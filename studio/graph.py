"""LangGraph Studio / ``langgraph dev`` entry: compile the engram graph for the server.

The server injects its own checkpointer and store, so none is passed here. Run settings
resolve in one order: the run's context (the Studio form, ``context=`` of an API run) > the
``ENGRAM_*`` environment of the server process > the defaults; the environment becomes the
defaults of the graph's context schema, so a field the run leaves out or empty takes it.
"""

from __future__ import annotations

from engram.builder import build_graph
from engram.graph import Context, make_default_deps

graph = build_graph(make_default_deps(), context_schema=Context.with_defaults(Context.from_env()))
