"""Node record_feedback: memory use per task type feeds the pack's memory weight."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps, State
from engram.graph.pack._budget import hit_rate
from engram.nodes import record_feedback
from engram.nodes._record_feedback import injected_markers, memory_used, turn_texts
from engram.stores.memory import BaseStorePackFeedback
from engram.stores.project import project_key

REPORT = {
    "facts": {"ids": ["f-12ab"]},
    "experience": {"injected": [{"kind": "strategy", "id": "s-9", "reason": "x"}]},
}
BLOCK = "[Memory]\n- settings live in conf/app.yml\n- e.g. use tabs"


def test_markers_are_ids_and_paths():
    assert injected_markers(REPORT, BLOCK) == {"f-12ab", "s-9", "conf/app.yml"}


def test_turn_texts_cover_answer_and_tool_args_of_this_turn_only():
    messages = [
        HumanMessage("old"),
        AIMessage("conf/app.yml old answer"),
        HumanMessage("new"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "1"}]),
        AIMessage("done"),
    ]
    texts = turn_texts(messages)
    assert "conf/app.yml old answer" not in texts
    assert any("a.py" in t for t in texts) and "done" in texts


def test_memory_used_matches_whole_tokens():
    assert memory_used({"conf/app.yml"}, ['{"path": "conf/app.yml"}'])
    assert not memory_used({"s-9"}, ["s-90 is another id"])


async def run(messages, store, tmp_path, block=BLOCK):
    s = State(
        messages=messages,
        memory_block=block,
        memory_report=REPORT,
        task_profile={"task_type": "debug"},
    )
    rt = Runtime(context=Context(project=str(tmp_path)), store=store)
    return record_feedback(s, rt, deps=Deps())


async def test_records_hits_and_misses(tmp_path):
    store = InMemoryStore()
    used = [
        HumanMessage("t"),
        AIMessage(
            "", tool_calls=[{"name": "read_file", "args": {"path": "conf/app.yml"}, "id": "1"}]
        ),
        AIMessage("ok"),
    ]
    unused = [HumanMessage("t"), AIMessage("answered from the code alone")]
    assert (await run(used, store, tmp_path))["memory_report"]["used"] is True
    assert (await run(unused, store, tmp_path))["memory_report"]["used"] is False
    feedback = BaseStorePackFeedback(store).get(project_key(tmp_path), "debug")
    assert feedback.hits == (True, False) and hit_rate(feedback) == 0.5


async def test_nothing_injected_records_nothing(tmp_path):
    store = InMemoryStore()
    assert await run([HumanMessage("t"), AIMessage("x")], store, tmp_path, block="") == {}
    assert BaseStorePackFeedback(store).get(project_key(tmp_path), "debug").hits == ()
