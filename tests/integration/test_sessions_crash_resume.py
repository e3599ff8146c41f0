"""A session survives ``kill -9``: resume, history, replay and fork through the real CLI.

``engram run`` talks to a real OpenAI-compatible HTTP server that holds the second model
request open; once the first tool result is in the SQLite checkpoint database the process is
killed, and the ``engram sessions`` commands take it from there.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.openai_stub import OpenAIStub, history_problems

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

ENGRAM = Path(sys.executable).parent / "engram"
CLI_TIMEOUT_S = 180
WAIT_TIMEOUT_S = 120
POLL_S = 0.2
THREAD = "crash-me"
FORK = "crash-me-copy"
TASK = "Which function parses the settings file?"
ANSWER = "`load_settings` in app/settings.py parses the settings file."
GREP_ID = "call_grep_1"
READ_ID = "call_read_1"


class HoldingScript:
    """Scripted model that holds its first answer after the grep result until released."""

    def __init__(self, *, hold: bool = True) -> None:
        self.holding = threading.Event()
        self.release = threading.Event()
        self._held = not hold

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if not is_agent_request(body):
            return {"content": "[]"}
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "tool" and last.get("tool_call_id") == GREP_ID:
            if not self._held:
                self._held = True
                self.holding.set()
                self.release.wait(WAIT_TIMEOUT_S)
            return {
                "content": "",
                "tool_calls": [
                    {"id": READ_ID, "name": "read_file", "args": {"path": "app/settings.py"}}
                ],
            }
        if last.get("role") == "tool" and last.get("tool_call_id") == READ_ID:
            return {"content": ANSWER}
        return {
            "content": "",
            "tool_calls": [
                {"id": GREP_ID, "name": "grep_code", "args": {"pattern": "def load_settings"}}
            ],
        }


def is_agent_request(body: dict[str, Any]) -> bool:
    """True for the agent loop's requests (those offering the project tools)."""
    return "grep_code" in {t["function"]["name"] for t in body.get("tools") or []}


def agent_requests(stub: OpenAIStub) -> list[dict[str, Any]]:
    """The agent loop's requests the server received so far, in order."""
    return [body for body in stub.requests if is_agent_request(body)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project with a settings loader for the scripted model to find."""
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "settings.py").write_text(
        "import tomllib\n\n\n"
        "def load_settings(path):\n"
        "    with open(path, 'rb') as handle:\n"
        "        return tomllib.load(handle)\n",
        encoding="utf-8",
    )
    (root / "app" / "main.py").write_text(
        "from app.settings import load_settings\n\nSETTINGS = load_settings('app.toml')\n",
        encoding="utf-8",
    )
    (root / "app.toml").write_text("debug = false\n", encoding="utf-8")
    return root


def engram_env(base_url: str) -> dict[str, str]:
    """The test's environment (its own ENGRAM_HOME) pointed at the scripted model server."""
    env = dict(os.environ)
    env.update(
        {
            "ENGRAM_MODEL": "stub-model",
            "ENGRAM_BASE_URL": base_url,
            "OPENAI_API_KEY": "test-key",
            "COLUMNS": "200",
            "NO_COLOR": "1",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
        }
    )
    return env


def engram_json(args: list[str], env: dict[str, str], project: Path) -> Any:
    """Run an ``engram`` command with ``--json``, check it succeeded and parse its output."""
    done = subprocess.run(
        [str(ENGRAM), *args, "--path", str(project), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"engram {' '.join(args)} failed:\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def checkpointed_tool_results(home: Path, thread_id: str) -> int:
    """Return how many tool results the newest checkpoints of a thread hold (read-only use)."""
    path = home / "checkpoints.sqlite"
    if not path.exists():
        return 0
    conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        counts = [
            sum(
                isinstance(m, ToolMessage)
                for m in item.checkpoint["channel_values"].get("messages", [])
            )
            for item in saver.list({"configurable": {"thread_id": thread_id}})
        ]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()
    return max(counts, default=0)


def wait_for(condition: Any, what: str, proc: subprocess.Popen[str]) -> None:
    """Poll ``condition`` until true; fail early if the run exits or time runs out."""
    deadline = time.monotonic() + WAIT_TIMEOUT_S
    while not condition():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"engram run exited ({proc.returncode}) before {what}:\n{err}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(POLL_S)


def run_until_killed(env: dict[str, str], project: Path, script: HoldingScript) -> None:
    """Start ``engram run``, wait for the first tool result to be checkpointed, kill -9 it."""
    home = Path(env["ENGRAM_HOME"])
    proc = subprocess.Popen(
        [str(ENGRAM), "run", TASK, "--path", str(project), "--thread", THREAD, "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for(script.holding.is_set, "the second model request", proc)
        wait_for(
            lambda: checkpointed_tool_results(home, THREAD) >= 1,
            "the first tool result to be checkpointed",
            proc,
        )
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=CLI_TIMEOUT_S)
        script.release.set()
    assert proc.returncode == -signal.SIGKILL


def roles(data: dict[str, Any]) -> list[str]:
    return [m["role"] for m in data["messages"]]


def test_killed_run_resumes_and_its_history_replays_and_forks(project: Path) -> None:
    script = HoldingScript()
    with OpenAIStub(script) as stub:
        env = engram_env(stub.base_url)
        run_until_killed(env, project, script)
        held_request = agent_requests(stub)[-1]

        crashed = engram_json(["sessions", "show", THREAD], env, project)
        assert roles(crashed) == ["human", "ai", "tool"]
        assert crashed["next"] and "run_tools" not in crashed["next"]
        assert crashed["messages"][2]["tool_call_id"] == GREP_ID

        resumed = engram_json(["sessions", "resume", THREAD], env, project)
        assert resumed["thread_id"] == THREAD
        assert resumed["answer"] == ANSWER
        assert stub.rejected == []
        assert all(history_problems(body["messages"]) == [] for body in stub.requests)
        calls = agent_requests(stub)
        assert len(calls) == 4
        assert calls[2]["messages"] == held_request["messages"]
        assert calls[3]["messages"][-1]["tool_call_id"] == READ_ID

        finished = engram_json(["sessions", "show", THREAD], env, project)
        assert roles(finished) == ["human", "ai", "tool", "ai", "tool", "ai"]
        assert finished["next"] == []
        assert finished["messages"][-1]["content"] == ANSWER
        assert [m.get("tool_call_id") for m in finished["messages"] if m["role"] == "tool"] == [
            GREP_ID,
            READ_ID,
        ]

        history = engram_json(["sessions", "history", THREAD], env, project)
        assert len(history) >= 6
        assert history[0]["next"] == [] and history[0]["messages"] == 6
        steps = [row["step"] for row in history]
        assert steps == sorted(steps, reverse=True)
        before_tools = [r for r in history if "run_tools" in r["next"] and r["messages"] == 2]
        assert len(before_tools) == 1

        sent = len(agent_requests(stub))
        replayed = engram_json(
            ["sessions", "replay", THREAD, before_tools[0]["checkpoint_id"]], env, project
        )
        assert replayed["answer"] == ANSWER
        new_requests = agent_requests(stub)[sent:]
        assert len(new_requests) == 2
        assert [b["messages"][-1]["tool_call_id"] for b in new_requests] == [GREP_ID, READ_ID]
        assert stub.rejected == []
        after_replay = engram_json(["sessions", "history", THREAD], env, project)
        assert len(after_replay) > len(history)

        forked = engram_json(["sessions", "fork", THREAD, "--to", FORK], env, project)
        assert forked["thread_id"] == FORK and forked["forked_from"] == THREAD
        original = engram_json(["sessions", "show", THREAD], env, project)
        copy = engram_json(["sessions", "show", FORK], env, project)
        assert [(m["role"], m["content"], m.get("tool_call_id")) for m in copy["messages"]] == [
            (m["role"], m["content"], m.get("tool_call_id")) for m in original["messages"]
        ]
        assert copy["next"] == []

        listed = engram_json(["sessions", "list"], env, project)
        by_id = {row["thread_id"]: row for row in listed}
        assert {THREAD, FORK} <= set(by_id)
        assert by_id[THREAD]["checkpoints"] >= len(after_replay)


def test_fork_at_an_earlier_checkpoint_continues_from_that_point(project: Path) -> None:
    script = HoldingScript(hold=False)
    with OpenAIStub(script) as stub:
        env = engram_env(stub.base_url)
        done = engram_json(["run", TASK, "--thread", THREAD], env, project)
        assert done["answer"] == ANSWER
        assert len(agent_requests(stub)) == 3
        history = engram_json(["sessions", "history", THREAD], env, project)
        after_grep = [r for r in history if r["messages"] == 3][-1]
        assert after_grep["next"]

        forked = engram_json(
            ["sessions", "fork", THREAD, "--checkpoint", after_grep["checkpoint_id"], "--to", FORK],
            env,
            project,
        )
        assert forked["thread_id"] == FORK
        copy = engram_json(["sessions", "show", FORK], env, project)
        assert roles(copy) == ["human", "ai", "tool"]
        assert copy["next"] == after_grep["next"]

        continued = engram_json(["sessions", "resume", FORK], env, project)
        assert continued["answer"] == ANSWER
        calls = agent_requests(stub)
        assert len(calls) == 5
        assert calls[3]["messages"] == calls[1]["messages"]
        assert stub.rejected == []

        original = engram_json(["sessions", "show", THREAD], env, project)
        assert roles(original) == ["human", "ai", "tool", "ai", "tool", "ai"]
        branch = engram_json(["sessions", "show", FORK], env, project)
        assert roles(branch) == roles(original)
        assert branch["next"] == []
