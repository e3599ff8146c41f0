"""The LangGraph Studio / ``langgraph dev`` entry (``studio/graph.py``)."""

from __future__ import annotations

__all__: list[str] = []
