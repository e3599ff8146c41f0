"""Fork and replay at every checkpoint of a real session, then keep working: nothing breaks.

A scripted 3-tool session runs through the real ``engram run`` process against the HTTP
OpenAI stub, which answers HTTP 400 to any request whose history has an unanswered tool call
(as real endpoints do). Every checkpoint is then forked and replayed, each followed by a new
task, through the same CLI commands in process; the ledger, titles, episodes and the prompt
views are checked against what the stub actually received.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from typer.testing import CliRunner

from engram.builder import build_graph
from engram.cli import app
from engram.cli._turn_runner import EXIT_BLOCKED
from engram.graph import Context, make_default_deps
from engram.graph.compaction._history_rules import TURN_CONTEXT_MARK, validate_history
from engram.sessions import CHECKPOINT_PREFIX_MIN, unique_prefixes
from engram.stores import Ledger
from engram.stores.sqlite import checkpoint_ids, open_checkpointer
from tests.support.openai_stub import OpenAIStub, history_problems

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1500)]

ENGRAM = Path(sys.executable).parent / "engram"
THREAD = "three-tools"
TASK = "Which function parses the settings file?"
ANSWER = "`load_settings` in app/settings.py parses the settings file."
NEW_TASK = "Follow-up:"
NEW_ANSWER = "SETTINGS holds the parsed app.toml."
RISKY = "Drop the legacy sessions table in the production database with a migration"
CALLS = {  # the result that arrives → the next scripted call
    None: ("call_grep", "grep_code", {"pattern": "def load_settings"}),
    "call_grep": ("call_read", "read_file", {"path": "app/settings.py"}),
    "call_read": ("call_glob", "glob_files", {"pattern": "app/*.py"}),
}
ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


def script(body: dict[str, Any]) -> dict[str, Any]:
    """Three tool calls for the task, then the answer; follow-up tasks are answered at once."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "user" and str(last.get("content", "")).startswith(NEW_TASK):
        return {"content": NEW_ANSWER}
    key = last.get("tool_call_id") if last.get("role") == "tool" else None
    if key not in CALLS:
        return {"content": ANSWER}
    call_id, name, args = CALLS[key]
    return {"content": "", "tool_calls": [{"id": call_id, "name": name, "args": args}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "app" / "settings.py").write_text(
        "import tomllib\n\n\ndef load_settings(path):\n"
        "    with open(path, 'rb') as handle:\n        return tomllib.load(handle)\n"
    )
    (root / "app" / "main.py").write_text(
        "from app.settings import load_settings\n\nSETTINGS = load_settings('app.toml')\n"
    )
    return root


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch):
    with OpenAIStub(script) as server:
        for name, value in {
            "ENGRAM_MODEL": "stub-model",
            "ENGRAM_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
        }.items():
            monkeypatch.setenv(name, value)
        yield server


def cli(project: Path, *args: str, code: int = 0) -> Any:
    """Run an ``engram`` command in process with ``--json``; return its parsed output."""
    result = CliRunner().invoke(app, [*args, "--path", str(project), "--json"])
    assert result.exit_code == code, f"engram {' '.join(args)}:\n{result.output}"
    return json.loads(result.stdout) if code == 0 else result


def checkpoints_now(project: Path) -> list[str]:
    """The session's checkpoint ids as they stand (replays keep adding some)."""
    context = Context.from_env(project=str(project))
    with open_checkpointer(context.home_path) as saver:
        return checkpoint_ids(saver, THREAD)


def ledger(project: Path) -> Ledger:
    """The project's ledger, in its state folder under the ENGRAM_HOME the CLI runs with."""
    return Ledger.for_project(project, Context.from_env(project=str(project)).home_path)


def episodes(project: Path) -> int:
    return len(cli(project, "memory", "episodes", "list"))


def test_fork_and_replay_at_every_checkpoint_then_a_new_task(project: Path, stub: OpenAIStub):
    # A remembered fact, so the first request carries an appended memory block.
    cli(project, "memory", "save", "The settings file app.toml is parsed by load_settings")
    done = subprocess.run(
        [str(ENGRAM), "run", TASK, "--thread", THREAD, "--path", str(project), "--json"],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == ANSWER
    first_requests = list(stub.requests)
    assert len(first_requests) == 4 and stub.rejected == []
    assert episodes(project) == 1

    full = cli(project, "sessions", "show", THREAD, "--full")
    assert_ledger_matches(full["model_calls"], first_requests)

    history = cli(project, "sessions", "history", THREAD)
    ids = [row["checkpoint_id"] for row in history]
    assert sum(row["next"] == ["run_tools"] for row in history) == 3
    for number, row in enumerate(history):
        fork_id = f"fork-{number}"
        short = unique_prefixes(checkpoints_now(project), CHECKPOINT_PREFIX_MIN)
        forked = cli(
            project,
            "sessions",
            "fork",
            THREAD[:5],
            "--checkpoint",
            short[row["checkpoint_id"]],
            "--to",
            fork_id,
        )
        assert forked["checkpoint_id"] == row["checkpoint_id"]
        assert (
            cli(project, "run", f"{NEW_TASK} fork {number}", "--thread", fork_id)["answer"]
            == NEW_ANSWER
        )
        cli(project, "sessions", "replay", THREAD, short[row["checkpoint_id"]])
        assert (
            cli(project, "run", f"{NEW_TASK} replay {number}", "--thread", THREAD)["answer"]
            == NEW_ANSWER
        )
        assert stub.rejected == [], f"checkpoint {number} ({row['next']}): {stub.rejected[-1:]}"
    assert all(history_problems(body["messages"]) == [] for body in stub.requests)

    # One episode per real task: the first, and each follow-up; the replays added none.
    assert episodes(project) == 1 + 2 * len(history)
    listed = {row["thread_id"]: row for row in cli(project, "sessions", "list")}
    assert listed[THREAD]["title"] == TASK
    for number, row in enumerate(history):
        fork = listed[f"fork-{number}"]
        assert (fork["title"], fork["forked_from"]) == (TASK, THREAD)
        assert fork["fork_checkpoint"] == row["checkpoint_id"]
        events = list(ledger(project).read(f"fork-{number}"))
        assert events[0]["kind"] == "fork" and events[0]["from_thread"] == THREAD
        assert events[0]["checkpoint_id"] == row["checkpoint_id"]
        inherited = [e for e in events[1 : 1 + row["messages"]] if e["kind"] == "message"]
        assert len(inherited) == row["messages"]
    replays = [e for e in ledger(project).read(THREAD) if e["kind"] == "replay"]
    assert [e["checkpoint_id"] for e in replays] == ids


def assert_ledger_matches(calls: list[dict[str, Any]], requests: list[dict[str, Any]]) -> None:
    """The ledger's rebuilt requests hold exactly the messages the endpoint received."""
    assert len(calls) == len(requests)
    for call, body in zip(calls, requests, strict=True):
        sent = [(m["role"], m.get("content") or "") for m in body["messages"]]
        assert [(ROLES[m["role"]], m["content"]) for m in call["messages"]] == sent
        assert [t["function"]["name"] for t in call["tools"]] == [
            t["function"]["name"] for t in body.get("tools") or []
        ]
    assert TURN_CONTEXT_MARK.strip() in calls[0]["messages"][1]["content"]


def test_prompt_views_python_threads_update_state_and_repair(
    project: Path, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
):
    shown = CliRunner().invoke(
        app, ["run", TASK, "--thread", "shown", "--path", str(project), "--show-prompt"]
    )
    assert shown.exit_code == 0, shown.output
    first = stub.requests[0]["messages"]
    assert "prompt of model call 1" in shown.stderr and "prompt of model call 4" in shown.stderr
    assert first[0]["content"] in shown.stderr and first[1]["content"] in shown.stderr
    assert shown.stderr.index("prompt of model call 1") < shown.stderr.index("call_grep")

    # A thread advanced only through the Python API, into the CLI's own checkpointer.
    context = Context.from_env(project=str(project))
    config = {"configurable": {"thread_id": "from-python"}}
    with open_checkpointer(context.home_path) as saver:
        graph = build_graph(make_default_deps(), checkpointer=saver)
        asyncio.run(
            graph.ainvoke(
                {"messages": [HumanMessage(content=f"{NEW_TASK} api")]}, config, context=context
            )
        )
        graph.update_state(
            config,
            {"messages": [HumanMessage(content="added", id="upd-1")]},
            as_node="check_budget",
        )
    listed = {row["thread_id"]: row for row in cli(project, "sessions", "list")}
    assert listed["from-python"]["title"] == f"{NEW_TASK} api"
    # The history [.., user "added"] is pending at call_model: resume sends it and the ledger
    # records the message that came in through update_state.
    cli(project, "sessions", "resume", "from-py")
    events = list(ledger(project).read("from-python"))
    assert any(e["kind"] == "message" and e["id"] == "upd-1" for e in events)
    assert stub.rejected == []

    approved = cli(project, "run", RISKY, "--thread", "risky", "--yes")
    assert approved["answer"]
    approvals = [e for e in ledger(project).read("risky") if e["kind"] == "approval"]
    assert [(a["action"], a.get("auto")) for a in approvals] == [("approve", True)]
    refused = CliRunner().invoke(app, ["run", RISKY, "--thread", "refused", "--path", str(project)])
    # a run whose high-risk task was rejected says it was blocked (exit 3)
    assert refused.exit_code == EXIT_BLOCKED, refused.output
    assert "the task was rejected at the high-risk confirmation" in refused.output
    events = list(ledger(project).read("refused"))
    assert [e["action"] for e in events if e["kind"] == "approval"] == ["reject"]


def test_an_old_broken_session_resumes_and_a_history_400_says_so(project: Path, stub: OpenAIStub):
    cli(project, "run", TASK, "--thread", "old")
    history = cli(project, "sessions", "history", "old")
    pending = next(r for r in history if r["next"] == ["run_tools"])
    cli(
        project,
        "sessions",
        "fork",
        "old",
        "--checkpoint",
        pending["checkpoint_id"],
        "--to",
        "broken",
    )
    # What an older version did: the new request went after the unanswered calls.
    context = Context.from_env(project=str(project))
    with open_checkpointer(context.home_path) as saver:
        graph = build_graph(make_default_deps(), checkpointer=saver)
        config = {"configurable": {"thread_id": "broken"}}
        graph.update_state(
            config, {"messages": [HumanMessage(content=f"{NEW_TASK} x")]}, as_node="check_budget"
        )
        assert validate_history(graph.get_state(config).values["messages"])
    assert cli(project, "sessions", "resume", "broken")["answer"] == NEW_ANSWER
    assert stub.rejected == []

    stub.script = lambda body: {
        "status": 400,
        "error": {
            "message": "messages[3]: tool calls ['call_x'] were not answered",
            "type": "invalid_request_error",
            "code": "invalid_messages",
        },
    }
    failed = CliRunner().invoke(app, ["run", "anything", "--path", str(project)])
    assert failed.exit_code == 1
    flat = " ".join(failed.output.split())
    assert "the session history was invalid" in flat and "sessions resume" in flat
    assert "ENGRAM_BASE_URL" not in flat
