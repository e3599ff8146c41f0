"""The confirmation interrupt through the LangGraph API: ``langgraph dev`` + ``langgraph_sdk``.

The server serves a small Phase 0 graph (retrieve_memory → confirm_task → finish) written to a
scratch folder, with the server's own store injected (so the nodes' store calls run against
the API server's store). Experience is seeded through the SDK's store API; a high-risk run
stops at the interrupt, shows the profile and warnings, and resumes with
``Command(resume=...)`` sent by the standard client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from engram.stores.memory import TIMESTAMP_KEY, Pattern, Trigger, record_to_dict
from engram.stores.project import namespace_label, project_key
from tests.support.servers import langgraph_dev, tail

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

RUN_TIMEOUT_S = 120
HIGH_TASK = "Run the schema migration for the orders table on production"
GRAPH_MODULE = '''
"""Phase 0 slice served by langgraph dev in a test."""
from functools import partial
from typing import Literal

from langgraph.graph import END, START, StateGraph

from engram.graph._context import Context
from engram.graph._deps import Deps
from engram.graph._state import InputState, State
from engram.nodes._confirm_task import confirm_task
from engram.nodes._retrieve_memory import retrieve_memory


async def finish(state: State) -> dict:
    return {"notes": ["finished"]}


def after_memory(state: State) -> Literal["confirm_task", "finish"]:
    return "confirm_task" if state.task_profile.get("risk") == "high" and not state.approval \\
        else "finish"


def after_confirm(state: State) -> Literal["finish", "__end__"]:
    return "finish" if state.approval.get("approved") else END


deps = Deps()
builder = StateGraph(State, context_schema=Context, input_schema=InputState)
builder.add_node("retrieve_memory", partial(retrieve_memory, deps=deps, recall=None))
builder.add_node("confirm_task", partial(confirm_task, deps=deps))
builder.add_node("finish", finish)
builder.add_edge(START, "retrieve_memory")
builder.add_conditional_edges("retrieve_memory", after_memory, ["confirm_task", "finish"])
builder.add_conditional_edges("confirm_task", after_confirm, ["finish", END])
builder.add_edge("finish", END)
graph = builder.compile()
'''


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    workdir = tmp_path / "server"
    workdir.mkdir()
    (workdir / "phase0_graph.py").write_text(GRAPH_MODULE, encoding="utf-8")
    (workdir / "langgraph.json").write_text(
        '{"dependencies": ["."], "graphs": {"phase0": "./phase0_graph.py:graph"}, '
        '"python_version": "3.11"}',
        encoding="utf-8",
    )
    log = tmp_path / "langgraph-dev.log"
    with langgraph_dev(workdir, log, {}) as url:
        yield url, log


async def _exercise(url: str, project: Path) -> dict[str, Any]:
    client = get_client(url=url)
    pattern = Pattern(
        id="pat-lock",
        name="Migration locks a hot table",
        trigger=Trigger(features=("schema",)),
        prevention="batch the backfill",
        confidence=4,
    )
    value = {**record_to_dict(pattern), TIMESTAMP_KEY: pattern.created.timestamp()}
    namespace = ["experience", "patterns", namespace_label(project_key(project))]
    await client.store.put_item(namespace, key=pattern.id, value=value, index=False)
    thread = await client.threads.create()
    context = {"project": str(project), "engram_home": str(project.parent / "home")}
    first = await asyncio.wait_for(
        client.runs.wait(
            thread["thread_id"],
            "phase0",
            input={"messages": [{"role": "user", "content": HIGH_TASK}]},
            context=context,
            raise_error=False,
        ),
        RUN_TIMEOUT_S,
    )
    paused = await client.threads.get_state(thread["thread_id"])
    final = await asyncio.wait_for(
        client.runs.wait(
            thread["thread_id"],
            "phase0",
            command={"resume": {"action": "constrain", "constraints": "off-peak only"}},
            context=context,
            raise_error=False,
        ),
        RUN_TIMEOUT_S,
    )
    return {
        "first": first,
        "paused": paused,
        "final": final,
        "done": await client.threads.get_state(thread["thread_id"]),
    }


def test_interrupt_round_trip_through_the_api(server, tmp_path):
    url, log = server
    project = tmp_path / "project"
    project.mkdir()
    found = asyncio.run(_exercise(url, project))
    paused = found["paused"]
    assert paused["next"] == ["confirm_task"], tail(log)
    interrupts = [i for task in paused["tasks"] for i in task.get("interrupts", [])]
    payload = interrupts[0]["value"]
    assert payload["profile"]["risk"] == "high"
    assert [w["id"] for w in payload["warnings"]] == ["pat-lock"]
    assert "batch the backfill" in payload["memory_block"]

    done = found["done"]
    assert done["next"] == [], tail(log)
    values = done["values"]
    assert values["approval"]["action"] == "constrain"
    assert "off-peak only" in values["memory_block"]
    assert "finished" in values["notes"]
