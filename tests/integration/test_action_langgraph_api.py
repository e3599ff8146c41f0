"""An edit's approval through the LangGraph API: ``langgraph dev`` + ``langgraph_sdk``.

The server serves engram's Studio graph; the model (the HTTP stub) asks for ``edit_file``; the
run stops at the ``approve_action`` interrupt with the diff, and the standard client resumes
it with ``Command(resume=...)``.
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

from tests.support.openai_stub import OpenAIStub
from tests.support.servers import langgraph_dev, tail

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 180
TASK = "Fix the typo in the greeting of app.py"
EDIT_ID = "call_edit_1"


def edit_script(body: dict[str, Any]) -> dict[str, Any]:
    """Ask for one edit, then answer once its result is in the history."""
    if not body.get("tools"):
        return {"content": "[]"}
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool" and last.get("tool_call_id") == EDIT_ID:
        return {"content": "Fixed the greeting."}
    return {
        "content": "",
        "tool_calls": [
            {
                "id": EDIT_ID,
                "name": "edit_file",
                "args": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
            }
        ],
    }


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(edit_script) as running:
        yield running


@pytest.fixture
def server(tmp_path: Path, stub: OpenAIStub) -> Iterator[tuple[str, Path]]:
    workdir = tmp_path / "server"
    workdir.mkdir()
    shutil.copyfile(REPO / "langgraph.json", workdir / "langgraph.json")
    (workdir / "studio").symlink_to(REPO / "studio", target_is_directory=True)
    log = tmp_path / "langgraph-dev.log"
    env = {
        "ENGRAM_MODEL": "stub-model",
        "ENGRAM_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "test-key",
    }
    with langgraph_dev(workdir, log, env) as url:
        yield url, log


async def _approve_through_the_api(url: str, project: Path, stub: OpenAIStub) -> dict[str, Any]:
    client = get_client(url=url)
    thread_id = (await client.threads.create())["thread_id"]
    context = {
        "project": str(project),
        "model": "stub-model",
        "base_url": stub.base_url,
        "engram_home": os.environ["ENGRAM_HOME"],
        "embedding_provider": "hash",
    }
    await asyncio.wait_for(
        client.runs.wait(
            thread_id,
            "engram",
            input={"messages": [{"role": "user", "content": TASK}]},
            context=context,
            raise_error=False,
        ),
        RUN_TIMEOUT_S,
    )
    paused = await client.threads.get_state(thread_id)
    before = (project / "app.py").read_text()
    final = await asyncio.wait_for(
        client.runs.wait(
            thread_id,
            "engram",
            command={"resume": {"action": "approve"}},
            context=context,
            raise_error=False,
        ),
        RUN_TIMEOUT_S,
    )
    return {"paused": paused, "before": before, "final": final}


def test_edit_waits_for_approval_through_the_sdk(server, stub, tmp_path):
    url, log = server
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def greet():\n    return 'helo'\n")
    found = asyncio.run(_approve_through_the_api(url, project, stub))
    interrupts = found["paused"].get("interrupts") or [
        i for task in found["paused"].get("tasks", []) for i in task.get("interrupts", [])
    ]
    assert interrupts, tail(log)
    payload = interrupts[0]["value"]
    assert payload["kind"] == "approve_action" and payload["tool"] == "edit_file"
    assert "+    return 'hello'" in payload["diff"]
    assert found["before"] == "def greet():\n    return 'helo'\n"
    final = found["final"]
    assert isinstance(final, dict) and "__error__" not in final, tail(log)
    assert final["messages"][-1]["content"] == "Fixed the greeting.", tail(log)
    assert final["files_changed"] == ["app.py"]
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
