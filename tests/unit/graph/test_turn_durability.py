"""A turn whose checkpointer fails stops before its next step (engram.cli._turn_runner)."""

from __future__ import annotations

import asyncio
import io
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from rich.console import Console

from engram.cli._turn_runner import run_turn
from engram.graph import Context
from engram.stores import BackendUnavailableError


class Steps(TypedDict, total=False):
    done: list[str]


class LosesTheServer(InMemorySaver):
    """Saves the first ``saves`` checkpoints, then the server is gone."""

    def __init__(self, saves: int) -> None:
        super().__init__()
        self.saves = saves

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.saves <= 0:
            raise BackendUnavailableError("cannot reach Postgres at db:5432/team")
        self.saves -= 1
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)


def test_a_lost_checkpointer_stops_the_turn_before_the_action_runs(tmp_path):
    acted: list[str] = []

    def propose(state: Steps) -> Steps:
        return {"done": ["proposed"]}

    def act(state: Steps) -> Steps:
        acted.append("act")  # an edit or a command: must not run unsaved
        return {"done": [*state.get("done", []), "acted"]}

    builder = StateGraph(Steps)
    builder.add_node("propose", propose)
    builder.add_node("act", act)
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "act")
    builder.add_edge("act", END)
    graph = builder.compile(checkpointer=LosesTheServer(saves=2))  # the input, then no more
    config = {"configurable": {"thread_id": "t1"}}
    context = Context(project=str(tmp_path))
    console = Console(file=io.StringIO())
    with pytest.raises(BackendUnavailableError) as info:
        asyncio.run(run_turn(graph, config, context, {"done": []}, console=console, quiet=True))
    assert acted == []
    message = str(info.value)
    assert message.count("cannot reach Postgres") == 1
    assert "the turn stopped there: no further step (edit, command) runs unsaved" in message
    assert "`engram sessions resume t1`" in info.value.hint
