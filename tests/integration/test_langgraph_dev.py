"""The LangGraph API server: ``langgraph dev`` serving the ``engram`` graph as the README says.

The server runs from a scratch folder holding a byte-for-byte copy of the repository's
``langgraph.json`` and a link to ``studio/`` (so its ``.langgraph_api/`` state stays out of the
working tree), on a free port, without ``--allow-blocking``: the dev server's blocking-call
detector stays on, and every node (files, SQLite, embedded Chroma, the bundled embedder,
ripgrep) must keep blocking work off its event loop. The settings come from the server's
``ENGRAM_*`` environment, pointing at a real HTTP OpenAI-compatible stub, a fresh
``ENGRAM_HOME`` and an indexed project. The real ``langgraph_sdk`` client runs the graph end
to end and checks the settings order (run context > server environment > defaults, empty
strings meaning "not set") and the errors a run with unusable settings ends with.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from engram.nodes._pack_context import NO_MODEL_NOTE
from engram.stores.codeindex import index_is_complete
from tests.support.openai_stub import OpenAIStub, history_problems
from tests.support.servers import LANGGRAPH, langgraph_dev, tail
from tests.support.state import state_of

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
ENGRAM = LANGGRAPH.parent / "engram"
RUN_TIMEOUT_S = 180
TASK = "Which function renders the invoice total?"
ANSWER = "`render_total` in billing/invoice.py renders the invoice total."
GREP_ID = "call_grep_1"
WRAP_GREP = '<tool_result tool="grep_code" trust="untrusted-data">'
REMEMBER = "Remember that deploys go through the staging cluster."
SAVE_ID = "call_save_1"
PLAIN_TASK = "the value added tax comes out too high for food"
"""Plain words: no name, path or quoted text that exact search could find."""
FRESH_CODE = (
    "def vat_for(category, amount):\n"
    '    """Return the value added tax of an amount of a category (food is reduced)."""\n'
    '    rate = 0.2 if category == "food" else 0.2\n'
    "    return amount * rate\n"
)
STUDIO_CONTEXT = json.loads((REPO / "studio" / "sample_context.json").read_text("utf-8"))
STUDIO_INPUT = json.loads((REPO / "studio" / "sample_input.json").read_text("utf-8"))


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
        return {
            "content": "",
            "tool_calls": [
                {
                    "id": SAVE_ID,
                    "name": "save_memory",
                    "args": {"text": "Deploys go through the staging cluster"},
                }
            ],
        }
    return {
        "content": "",
        "tool_calls": [
            {"id": GREP_ID, "name": "grep_code", "args": {"pattern": "def render_total"}}
        ],
    }


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def log_problems(log: Path) -> list[str]:
    """Return the server log's warning and error lines (its colours taken out)."""
    text = ANSI.sub("", log.read_text(encoding="utf-8", errors="replace"))
    return [
        line
        for line in text.splitlines()
        if re.search(r"\[(warning|error|critical)\s*\]|Traceback", line, re.IGNORECASE)
    ]


def _server_home(tmp_path: Path) -> Path:
    """The server's ENGRAM_HOME, which also holds the project's index (its state folder)."""
    return tmp_path / "server-engram-home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project, indexed (Chroma, BM25, code graph) with the default embedder.

    The index lives in the project's state folder under an ENGRAM_HOME, so it is built under
    the home the server is then given.
    """
    root = tmp_path / "project"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "invoice.py").write_text(
        'def render_total(lines):\n    return f"{sum(line.amount for line in lines):.2f}"\n',
        encoding="utf-8",
    )
    (root / "billing" / "__init__.py").write_text("", encoding="utf-8")
    index_home = _server_home(tmp_path)
    done = subprocess.run(
        [str(ENGRAM), "index"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "ENGRAM_HOME": str(index_home)},
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The indexing filled the embedding cache in that home: drop it, so the cache the
    # server's runs write is seen apart from it.
    for cached in index_home.glob("embeddings.sqlite*"):
        cached.unlink()
    return root


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(agent_script) as running:
        yield running


def _workdir(tmp_path: Path) -> Path:
    workdir = tmp_path / "server"
    workdir.mkdir()
    shutil.copyfile(REPO / "langgraph.json", workdir / "langgraph.json")
    (workdir / "studio").symlink_to(REPO / "studio", target_is_directory=True)
    return workdir


def _server_env(tmp_path: Path, **engram: str) -> dict[str, str]:
    """The server's environment: its own HOME (to catch writes to ~/.engram) and ENGRAM_*."""
    fake_home = tmp_path / "user-home"
    fake_home.mkdir(exist_ok=True)
    return {
        "HOME": str(fake_home),
        "OPENAI_API_KEY": "test-key",
        # Generous, so a first open of Chroma on a loaded machine does not time out.
        "ENGRAM_BRANCH_TIMEOUT_MS": "60000",
        **{f"ENGRAM_{name.upper()}": value for name, value in engram.items()},
    }


async def _run(client: Any, task: str, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one task on a new thread; return its final values and thread state."""
    thread = await client.threads.create()
    values = await asyncio.wait_for(
        client.runs.wait(
            thread["thread_id"],
            "engram",
            input={"messages": [{"role": "user", "content": task}]},
            raise_error=False,
            **kwargs,
        ),
        RUN_TIMEOUT_S,
    )
    return values, await client.threads.get_state(thread["thread_id"])


async def _exercise_configured(url: str, project: Path) -> dict[str, Any]:
    client = get_client(url=url)
    found: dict[str, Any] = {}
    [assistant] = await client.assistants.search(graph_id="engram")
    found["schemas"] = await client.assistants.get_schemas(assistant["assistant_id"])
    # No context at all: every setting comes from the server's environment.
    found["env"], found["env_state"] = await _run(client, TASK)
    thread_id = found["env_state"]["checkpoint"]["thread_id"]
    found["history"] = await client.threads.get_history(thread_id, limit=50)
    found["runs"] = await client.runs.list(thread_id)
    # The run context wins; its empty strings mean "not set" (base_url stays the server's).
    found["override"], _ = await _run(
        client,
        TASK,
        context={"model": "model-from-context", "base_url": "", "project": "", "engram_home": ""},
    )
    # A relative project is the server's folder (resolved off the event loop too).
    found["relative"], _ = await _run(client, TASK, context={"project": "."})
    # Studio's sample files pasted as they are: the placeholder project is refused clearly.
    found["sample"], found["sample_state"] = await _run(
        client, STUDIO_INPUT["messages"][0]["content"], context=STUDIO_CONTEXT
    )
    found["saved"], _ = await _run(client, REMEMBER, context={"project": str(project)})
    found["facts"] = await client.store.search_items(("facts",), limit=50)
    return found


def test_langgraph_dev_runs_the_graph_with_the_servers_settings(
    tmp_path: Path, stub: OpenAIStub, project: Path
) -> None:
    server_home = _server_home(tmp_path)
    env = _server_env(
        tmp_path,
        model="stub-model",
        base_url=stub.base_url,
        home=str(server_home),
        project=str(project),
    )
    log = tmp_path / "langgraph-dev.log"
    with langgraph_dev(_workdir(tmp_path), log, env) as url:
        found = asyncio.run(_exercise_configured(url, project))

    values = found["env"]
    if not isinstance(values, dict) or "__error__" in values:
        pytest.fail(f"the run failed: {values}\nserver log:\n{tail(log)}")
    assert "BlockingError" not in log.read_text(encoding="utf-8", errors="replace")
    assert log_problems(log) == []
    # Studio's forms: input, output and context schemas, each generated by the server.
    schemas = found["schemas"]
    for key in ("input_schema", "output_schema", "context_schema"):
        assert isinstance(schemas[key], dict) and schemas[key].get("properties"), key
    assert {"messages", "context_pack", "outcome"} <= set(schemas["output_schema"]["properties"])
    messages = values["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"], tail(log)
    assert messages[0]["content"].startswith(TASK)
    assert [c["id"] for c in messages[1]["tool_calls"]] == [GREP_ID]
    assert messages[2]["tool_call_id"] == GREP_ID
    assert messages[2]["content"].startswith(WRAP_GREP)
    assert "billing/invoice.py:1:" in messages[2]["content"]
    assert messages[3]["content"] == ANSWER
    # The pack was built from the project named only by ENGRAM_PROJECT, semantic branch
    # included (embedded Chroma and the bundled embedder, opened under the server).
    assert values["error"] == ""
    assert "billing/invoice.py" in values["context_pack"]["text"]
    assert not [n for n in values["notes"] if "semantic search" in n or "timed out" in n]
    assert [r["status"] for r in found["runs"]] == ["success"]
    assert found["env_state"]["next"] == []
    history = found["history"]
    assert ["run_tools"] in [h["next"] for h in history]

    # Each run made two model calls, all to the stub: ENGRAM_MODEL unless the context named
    # another model; the empty base_url kept ENGRAM_BASE_URL.
    calls = [b for b in stub.requests if TASK in str(b["messages"]) and b.get("tools")]
    assert [b["model"] for b in calls] == (
        ["stub-model"] * 2 + ["model-from-context"] * 2 + ["stub-model"] * 2
    )
    assert stub.rejected == []
    assert all(history_problems(b["messages"]) == [] for b in calls)
    assert found["override"]["messages"][-1]["content"] == ANSWER
    assert found["relative"]["error"] == ""
    assert found["relative"]["messages"][-1]["content"] == ANSWER

    # Files land under ENGRAM_HOME (the query embedding cache), never under ~/.engram.
    assert (server_home / "embeddings.sqlite").is_file()
    assert not (tmp_path / "user-home" / ".engram").exists()

    assert list(state_of(project, server_home).path("ledger").glob("*.jsonl"))
    assert not (project / ".engram").exists()

    sample = found["sample"]
    assert isinstance(sample, dict) and "__error__" not in sample, tail(log)
    assert "/path/to/your/project" in sample["error"] and "does not exist" in sample["error"]
    assert sample["messages"][-1]["type"] == "ai"
    assert sample["messages"][-1]["content"].startswith("Stopped before starting:")
    assert sample["error"] in sample["notes"]
    assert found["sample_state"]["next"] == []
    assert not [
        b for b in stub.requests if STUDIO_INPUT["messages"][0]["content"] in str(b["messages"])
    ]

    saved = found["saved"]
    assert isinstance(saved, dict) and "__error__" not in saved, tail(log)
    assert saved["messages"][-1]["content"] == "Saved."
    texts = [item["value"].get("text") for item in found["facts"]["items"]]
    assert "Deploys go through the staging cluster" in texts


async def _exercise_unconfigured(
    url: str, project: Path, fresh: Path, home: Path
) -> dict[str, Any]:
    client = get_client(url=url)
    found: dict[str, Any] = {}
    found["agent"], found["agent_state"] = await _run(
        client, TASK, context={"project": str(project)}
    )
    found["context"], _ = await _run(
        client, TASK, context={"project": str(project), "mode": "context"}
    )
    # A project never indexed: the first run starts its index in the server's background.
    unindexed = {"project": str(fresh), "mode": "context"}
    found["first_use"], _ = await _run(client, PLAIN_TASK, context=unindexed)
    deadline = asyncio.get_running_loop().time() + RUN_TIMEOUT_S
    state = state_of(fresh, home)
    while not index_is_complete(state) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)  # the relation index is updated after the code index
    found["after_first_use"], _ = await _run(client, PLAIN_TASK, context=unindexed)
    return found


def test_agent_mode_without_a_model_ends_with_a_clear_note(tmp_path: Path, project: Path) -> None:
    server_home = _server_home(tmp_path)
    env = _server_env(tmp_path, home=str(server_home), auto_index="on")
    fresh = tmp_path / "fresh"
    (fresh / "tax").mkdir(parents=True)
    (fresh / "tax" / "rates.py").write_text(FRESH_CODE, encoding="utf-8")
    log = tmp_path / "langgraph-dev.log"
    with langgraph_dev(_workdir(tmp_path), log, env) as url:
        found = asyncio.run(_exercise_unconfigured(url, project, fresh, server_home))

    agent = found["agent"]
    assert isinstance(agent, dict) and "__error__" not in agent, tail(log)
    assert log_problems(log) == []
    assert "billing/invoice.py" in agent["context_pack"]["text"]
    assert NO_MODEL_NOTE in agent["notes"]
    assert [m["type"] for m in agent["messages"]] == ["human", "ai"]
    assert agent["messages"][-1]["content"] == NO_MODEL_NOTE
    assert found["agent_state"]["next"] == []

    # Asking for the pack only is not an error.
    context = found["context"]
    assert "billing/invoice.py" in context["context_pack"]["text"]
    assert NO_MODEL_NOTE not in context["notes"]
    assert [m["type"] for m in context["messages"]] == ["human"]
    assert (server_home / "embeddings.sqlite").is_file()
    assert not (tmp_path / "user-home" / ".engram").exists()

    # Studio's path indexes a project on first use, in the background; a project this small
    # is waited for, so even the first pack finds the code by plain words, as the next does.
    first, after = found["first_use"], found["after_first_use"]
    assert isinstance(first, dict) and "__error__" not in first, tail(log)
    assert any("indexing its 1 file in the background" in n for n in first["notes"])
    assert any(n.startswith("pack: waited") for n in first["notes"]), first["notes"]
    assert "def vat_for" in first["context_pack"]["text"]
    assert isinstance(after, dict) and "__error__" not in after, tail(log)
    assert "def vat_for" in after["context_pack"]["text"], after["notes"]
    assert not [n for n in after["notes"] if "semantic search" in n]
