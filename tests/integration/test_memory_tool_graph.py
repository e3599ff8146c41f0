"""The save_memory conflict round trip through the engram graph and a real HTTP model server.

The scripted model asks to save a fact that conflicts with one the user saved before; the
tool result it receives must list both facts and tell it to ask the user, and the store must
be unchanged. Skipped until the tool is part of the run's tool set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps
from engram.graph.tools import build_tools
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

ENGRAM = Path(sys.executable).parent / "engram"
CALL_ID = "call_save_1"
ANSWER = "That conflicts with the remembered Java 17: should I replace it, keep both, or neither?"


def script(body: dict[str, Any]) -> dict[str, Any]:
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return {"content": ANSWER}
    return {
        "content": "",
        "tool_calls": [
            {"id": CALL_ID, "name": "save_memory", "args": {"text": "This project uses Java 21"}}
        ],
    }


def engram(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ENGRAM), *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_conflicting_save_memory_comes_back_to_the_model(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    deps = Deps(store=InMemoryStore())
    tools = {t.name for t in build_tools(Context(project=str(project)), deps)}
    if "save_memory" not in tools:
        pytest.skip("save_memory is not in the run's tool set yet")
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200", OPENAI_API_KEY="test-key")
    saved = engram(["memory", "save", "This project uses Java 17", "--path", str(project)], env)
    assert saved.returncode == 0, saved.stderr
    with OpenAIStub(script) as stub:
        env.update(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=stub.base_url)
        done = engram(["run", "Remember that we moved to Java 21", "--path", str(project)], env)
    assert done.returncode == 0, done.stderr
    tool_messages = [
        m
        for body in stub.requests
        for m in body.get("messages", [])
        if m.get("role") == "tool" and m.get("tool_call_id") == CALL_ID
    ]
    assert tool_messages
    content = tool_messages[-1]["content"]
    assert "NOT SAVED" in content and "Java 17" in content and "Java 21" in content
    assert "ask them" in content
    listed = engram(["memory", "list", "--path", str(project), "--json"], env)
    assert [f["text"] for f in json.loads(listed.stdout)] == ["This project uses Java 17"]
