"""Per-branch timeout: a slow or failing retrieval branch becomes a note, never an error."""

from __future__ import annotations

import asyncio
import time

import pytest
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from engram.graph import Context, State
from engram.graph.retrieval._branch_timeout import (
    COLD_MS_PER_MB,
    COLD_START_MS,
    bounded,
    branch_limit_ms,
    record_branch_time,
    timeout_note,
)
from engram.stores._errors import BackendUnavailableError

SLACK_MS = 100


def runtime(timeout_ms: int = 200, *, warm: bool = True) -> Runtime[Context]:
    """Run settings whose branches ran before in this process (so the setting is the limit)."""
    context = Context(branch_timeout_ms=timeout_ms)
    if warm:
        for name in ("search_exact", "search_semantic", "x"):
            record_branch_time(context, name, 0)
    return Runtime(context=context)


def blocking_branch(state, runtime, **_):
    time.sleep(2)  # blocks its own thread, not the caller's
    return {"notes": ["slow branch finished"]}


def fast_branch(state, runtime, *, deps=None):
    return {"code_hits": [{"path": "a.py", "score": 1.0, "deps": deps}]}


def failing_branch(state, runtime, **_):
    raise BackendUnavailableError("chroma is down", hint="start the Chroma server")


def buggy_branch(state, runtime, **_):
    raise ValueError("a bug")


def test_timeout_returns_note_within_timeout_plus_slack():
    node = bounded(blocking_branch, name="search_semantic")
    started = time.perf_counter()
    update = node(State(), runtime(200))
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert update == {
        "notes": [timeout_note("search_semantic", 200)],
        "degraded_branches": ["search_semantic"],
    }
    assert elapsed_ms < 200 + SLACK_MS


def test_fast_branch_passes_through_with_bound_keywords():
    node = bounded(fast_branch, name="search_exact")
    update = node(State(), runtime(), deps="D")
    assert update == {"code_hits": [{"path": "a.py", "score": 1.0, "deps": "D"}]}
    assert node.__name__ == "search_exact"


def test_store_error_becomes_note():
    update = bounded(failing_branch, name="search_semantic")(State(), runtime())
    (note,) = update["notes"]
    assert "search_semantic failed" in note and "start the Chroma server" in note
    assert update["degraded_branches"] == ["search_semantic"]


def test_other_errors_propagate():
    with pytest.raises(ValueError):
        bounded(buggy_branch, name="x")(State(), runtime())


async def test_no_event_loop_runs_where_a_branch_blocks():
    """The LangGraph server refuses blocking calls wherever an event loop runs."""
    seen = {}

    def probe(state, runtime, **_):
        try:
            asyncio.get_running_loop()
            seen["loop"] = True
        except RuntimeError:
            seen["loop"] = False
        return {}

    graph = StateGraph(State, context_schema=Context)
    graph.add_node("search_exact", bounded(probe, name="search_exact"))
    graph.add_edge(START, "search_exact")
    graph.add_edge("search_exact", END)
    await graph.compile().ainvoke({"messages": []}, context=Context())
    assert seen == {"loop": False}


async def test_parallel_branches_in_a_graph_join_with_notes_and_config_visible():
    seen = {}

    def exact(state: State, runtime: Runtime[Context]) -> dict:
        seen["thread"] = get_config()["configurable"].get("thread_id")
        return {"code_hits": [{"path": "a.py", "start_line": 1, "end_line": 2, "score": 1.0}]}

    def slow(state: State, runtime: Runtime[Context]) -> dict:
        time.sleep(1.5)
        return {"code_hits": [{"path": "b.py", "start_line": 1, "end_line": 2, "score": 1.0}]}

    async def join(state: State) -> dict:
        return {"outcome": ",".join(sorted(h["path"] for h in state.code_hits))}

    graph = StateGraph(State, context_schema=Context)
    graph.add_node("search_exact", bounded(exact, name="search_exact"))
    graph.add_node("search_semantic", bounded(slow, name="search_semantic"))
    graph.add_node("join", join)
    graph.add_edge(START, "search_exact")
    graph.add_edge(START, "search_semantic")
    graph.add_edge(["search_exact", "search_semantic"], "join")
    graph.add_edge("join", END)
    started = time.perf_counter()
    out = await graph.compile().ainvoke(
        {"messages": []},
        {"configurable": {"thread_id": "t1"}},
        context=runtime(300).context,
    )
    assert (time.perf_counter() - started) * 1000 < 300 + SLACK_MS + 200
    assert out["outcome"] == "a.py"
    assert out["notes"] == [timeout_note("search_semantic", 300)]
    assert out["degraded_branches"] == ["search_semantic"]
    assert seen["thread"] == "t1"


def test_call_bounded_returns_raises_or_times_out():
    from engram.graph.retrieval import call_bounded

    assert call_bounded(lambda: 41 + 1, 500) == 42
    with pytest.raises(KeyError):
        call_bounded(lambda: {}["missing"], 500)
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        call_bounded(lambda: time.sleep(2), 100)
    assert (time.perf_counter() - started) * 1000 < 100 + SLACK_MS


def test_a_first_call_has_time_to_open_the_index_and_later_calls_are_sized_by_the_last(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    context = Context(project=str(project), branch_timeout_ms=200)
    assert branch_limit_ms(context, "search_semantic") == 200 + COLD_START_MS

    def opening(state, runtime, **_):
        time.sleep(0.7)  # a cold open: over the setting, well within the first-call limit
        return {"notes": ["opened"]}

    update = bounded(opening, name="search_semantic")(State(), Runtime(context=context))
    assert update == {"notes": ["opened"]}
    warm = branch_limit_ms(context, "search_semantic")
    assert 3 * 700 <= warm < 3 * 700 + 600  # three times what it took, not the cold allowance

    def hung(state, runtime, **_):
        time.sleep(6)
        return {}

    stuck = bounded(hung, name="search_semantic")
    started = time.perf_counter()
    assert stuck(State(), Runtime(context=context))["degraded_branches"] == ["search_semantic"]
    assert (time.perf_counter() - started) * 1000 < warm + SLACK_MS
    # Another project is cold again; a larger index folder earns a longer first call.
    other = tmp_path / "other"
    other.mkdir()
    big = Context(project=str(other), branch_timeout_ms=200)
    index = big.state.make("index", "chroma")
    (index / "data.bin").write_bytes(b"\0" * 20_000_000)
    assert branch_limit_ms(big, "search_semantic") == 200 + COLD_START_MS + 20 * COLD_MS_PER_MB
