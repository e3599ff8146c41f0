"""Smoke test of the LangGraph API server: ``langgraph dev`` serving the ``engram`` graph.

The server runs from a scratch folder holding a byte-for-byte copy of the repository's
``langgraph.json`` and a link to ``studio/`` (so its ``.langgraph_api/`` state stays out of the
working tree), on a free port, as documented in ``studio/README.md``. The real
``langgraph_sdk`` client creates a thread and a run against a scripted OpenAI-compatible
server, then reads the thread's state and history.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.openai_stub import OpenAIStub, history_problems
from tests.support.servers import langgraph_dev, tail

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 180
TASK = "Which function renders the invoice total?"
ANSWER = "`render_total` in billing/invoice.py renders the invoice total."
GREP_ID = "call_grep_1"
WRAP_GREP = '<tool_result tool="grep_code" trust="untrusted-data">'


REMEMBER = "Remember that deploys go through the staging cluster."
SAVE_ID = "call_save_1"


def agent_script(body: dict[str, Any]) -> dict[str, Any]:
    """Ask for one grep (or one save_memory), then answer once its result is in the history."""
    if not body.get("tools"):
        return {"content": "[]"}
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool" and last.get("tool_call_id") == GREP_ID:
        return {"content": ANSWER}
    if last.get("role") == "tool" and last.get("tool_call_id") == SAVE_ID:
        return {"content": "Saved."}
    if any(REMEMBER in str(m.get("content")) for m in messages if m.get("role") == "user"):
        return {"content": "", "tool_calls": [
            {"id": SAVE_ID, "name": "save_memory",
             "args": {"text": "Deploys go through the staging cluster"}}]}
    return {"content": "", "tool_calls": [
        {"id": GREP_ID, "name": "grep_code", "args": {"pattern": "def render_total"}}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project for the graph to search."""
    root = tmp_path / "project"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "invoice.py").write_text(
        "def render_total(lines):\n"
        "    return f\"{sum(line.amount for line in lines):.2f}\"\n",
        encoding="utf-8",
    )
    (root / "billing" / "__init__.py").write_text("", encoding="utf-8")
    return root


@pytest.fixture
def server(tmp_path: Path, stub: OpenAIStub) -> Iterator[tuple[str, Path]]:
    """Run ``langgraph dev`` on a free port; yield its URL and log file; stop it by PID."""
    workdir = tmp_path / "server"
    workdir.mkdir()
    shutil.copyfile(REPO / "langgraph.json", workdir / "langgraph.json")
    (workdir / "studio").symlink_to(REPO / "studio", target_is_directory=True)
    log = tmp_path / "langgraph-dev.log"
    env = {"ENGRAM_MODEL": "stub-model", "ENGRAM_BASE_URL": stub.base_url,
           "OPENAI_API_KEY": "test-key"}
    with langgraph_dev(workdir, log, env) as url:
        yield url, log


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(agent_script) as running:
        yield running


async def _exercise(url: str, project: Path, stub: OpenAIStub, home: str) -> dict[str, Any]:
    client = get_client(url=url)
    thread = await client.threads.create(metadata={"suite": "engram-smoke"})
    thread_id = thread["thread_id"]
    context = {"project": str(project), "model": "stub-model", "base_url": stub.base_url,
               "engram_home": home, "embedding_provider": "hash"}
    graph_input: dict[str, Any] = {"messages": [{"role": "user", "content": TASK}]}
    values = await asyncio.wait_for(
        client.runs.wait(thread_id, "engram",
                         input=graph_input,
                         context=context, raise_error=False),
        RUN_TIMEOUT_S,
    )
    state = await client.threads.get_state(thread_id)
    history = await client.threads.get_history(thread_id, limit=50)
    runs = await client.runs.list(thread_id)
    # save_memory writes into the server's own store (injected through the node runtime).
    other = await client.threads.create()
    saved = await asyncio.wait_for(
        client.runs.wait(other["thread_id"], "engram",
                         input={"messages": [{"role": "user", "content": REMEMBER}]},
                         context=context, raise_error=False),
        RUN_TIMEOUT_S,
    )
    facts = await client.store.search_items(("facts",), limit=50)
    return {"values": values, "state": state, "history": history, "runs": runs,
            "saved": saved, "facts": facts}


def test_langgraph_dev_serves_the_engram_graph(
    server: tuple[str, Path], stub: OpenAIStub, project: Path
) -> None:
    url, log = server
    found = asyncio.run(_exercise(url, project, stub, os.environ["ENGRAM_HOME"]))
    values = found["values"]
    if not isinstance(values, dict) or "__error__" in values:
        pytest.fail(f"the run failed: {values}\nserver log:\n{tail(log)}")

    messages = values["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"], tail(log)
    assert messages[0]["content"].startswith(TASK)
    assert [c["id"] for c in messages[1]["tool_calls"]] == [GREP_ID]
    assert messages[1]["tool_calls"][0]["name"] == "grep_code"
    assert messages[2]["tool_call_id"] == GREP_ID
    assert messages[2]["content"].startswith(WRAP_GREP)
    assert "billing/invoice.py:1:" in messages[2]["content"]
    assert messages[3]["content"] == ANSWER

    assert [r["status"] for r in found["runs"]] == ["success"]
    state = found["state"]
    assert state["next"] == []
    assert [m["id"] for m in state["values"]["messages"]] == [m["id"] for m in messages]
    history = found["history"]
    assert len(history) >= 5
    assert history[0]["next"] == []
    assert ["run_tools"] in [h["next"] for h in history]
    assert len({h["checkpoint"]["checkpoint_id"] for h in history}) == len(history)

    assert stub.rejected == []
    calls = [b for b in stub.requests if b.get("tools") and REMEMBER not in str(b["messages"])]
    assert len(calls) == 2
    assert all(history_problems(b["messages"]) == [] for b in calls)
    assert calls[0]["messages"][0] == calls[1]["messages"][0]
    last = calls[1]["messages"][-1]
    assert last["role"] == "tool" and last["tool_call_id"] == GREP_ID
    assert last["content"].startswith(WRAP_GREP)

    tools = {t["function"]["name"] for t in calls[0]["tools"]}
    assert "save_memory" in tools
    saved = found["saved"]
    assert isinstance(saved, dict) and "__error__" not in saved, tail(log)
    assert saved["messages"][-1]["content"] == "Saved."
    assert "Saved to project memory" in saved["messages"][-2]["content"]
    texts = [item["value"].get("text") for item in found["facts"]["items"]]
    assert "Deploys go through the staging cluster" in texts
