"""Approving an edit and rejecting a command in a real terminal (tmux) through `engram run`."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

ENGRAM = str(Path(sys.executable).parent / "engram")
WAIT_S = 240


def script(body: dict[str, Any]) -> dict[str, Any]:
    last = (body.get("messages") or [{}])[-1]
    if last.get("tool_call_id") == "e1":
        return {
            "content": "",
            "tool_calls": [
                {"id": "c1", "name": "run_command", "args": {"command": "touch made-by-command"}}
            ],
        }
    if last.get("tool_call_id") == "c1":
        return {"content": "Done."}
    return {
        "content": "",
        "tool_calls": [
            {
                "id": "e1",
                "name": "edit_file",
                "args": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
            }
        ],
    }


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _wait_for(session: str, text: str, times: int = 1) -> str:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)
        if screen.count(text) >= times:
            return screen
        time.sleep(0.5)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")


def test_approve_the_edit_reject_the_command_in_a_terminal(tmp_path, engram_home):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def greet():\n    return 'helo'\n")
    out = tmp_path / "out.json"
    session = f"engram-test-{os.getpid()}"
    with OpenAIStub(script) as stub:
        env = {
            "ENGRAM_HOME": str(engram_home),
            "ENGRAM_MODEL": "stub-model",
            "OPENAI_API_KEY": "x",
            "ENGRAM_BASE_URL": stub.base_url,
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = (
            f"env {exports} {shlex.quote(ENGRAM)} run 'fix the greeting' --json "
            f"--path {shlex.quote(str(project))} > {shlex.quote(str(out))}; "
            f"echo FINISHED-$?; sleep 30"
        )
        _tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command)
        try:
            screen = _wait_for(session, "for the session [a]:")
            assert "Apply this change?" in screen and "policy ask" in screen
            assert "+    return 'hello'" in screen
            _tmux("send-keys", "-t", session, "a", "Enter")
            screen = _wait_for(session, "for the session [a]:", times=2)
            assert "Run this command?" in screen and "$ touch made-by-command" in screen, screen
            _tmux("send-keys", "-t", session, "r", "Enter")
            _wait_for(session, "reason (goes to the model)")
            _tmux("send-keys", "-t", session, "not in this repo", "Enter")
            _wait_for(session, "FINISHED-3")  # a refused action: the run says so
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    result = json.loads(out.read_text())
    assert result["answer"] == "Done." and result["files_changed"] == ["app.py"]
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    assert not (project / "made-by-command").exists()
    assert result["exit_code"] == 3
    assert result["blocked"] == [
        {
            "tool": "run_command",
            "call_id": result["blocked"][0]["call_id"],
            "reason": "not in this repo",
        }
    ]
    sent = json.dumps(stub.requests[-1]["messages"])
    assert "rejected by the user: not in this repo" in sent
