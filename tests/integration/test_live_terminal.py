"""`engram run` in a real terminal (tmux): streamed text, live diffs and output, Ctrl-C."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engram.graph.tools import run_shell
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

ENGRAM = str(Path(sys.executable).parent / "engram")
WAIT_S = 240
ANSWER = (
    "The greeting is fixed and the command printed two lines; this answer is long "
    "enough to arrive in many small pieces."
)
EDIT_AND_COMMAND = [
    {
        "content": "Fixing it.",
        "tool_calls": [
            {
                "id": "e1",
                "name": "edit_file",
                "args": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
            }
        ],
    },
    {
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "name": "run_command",
                "args": {"command": "echo line-one; sleep 1; echo line-two"},
            }
        ],
    },
    {"content": ANSWER, "chunk_delay_s": 0.1},
]


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def greet():\n    return 'helo'\n")
    return project


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _screen(session: str) -> str:
    return _tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)


def _wait_for(session: str, text: str) -> str:
    deadline = time.monotonic() + WAIT_S
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")


def _wait_until(ready: Any) -> None:
    """Wait until ``ready()`` is true (the screen can show a command before it runs)."""
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError("the command never started")
        time.sleep(0.1)


def _start(session: str, project: Path, home: Path, base_url: str, args: str) -> None:
    env = {
        "ENGRAM_HOME": str(home),
        "ENGRAM_MODEL": "stub-model",
        "OPENAI_API_KEY": "x",
        "ENGRAM_BASE_URL": base_url,
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = (
        f"cd {shlex.quote(str(project))} && env -u COLUMNS {exports} "
        f"{shlex.quote(ENGRAM)} run {args}; echo FINISHED-$?; sleep 30"
    )
    _tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command)


@needs_tmux
def test_a_terminal_sees_text_stream_diffs_and_command_output_live(tmp_path, engram_home):
    project = _project(tmp_path)
    session = f"engram-live-{os.getpid()}"
    with OpenAIStub(EDIT_AND_COMMAND) as stub:
        _start(session, project, engram_home, stub.base_url, "'fix the greeting' --policy yolo")
        try:
            _wait_for(session, ANSWER[:15])
            partial = _screen(session)
            screen = _wait_for(session, "FINISHED-")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "FINISHED-0" in screen
    assert ANSWER not in partial, "the answer appeared at once, not as it streamed"
    assert screen.count(ANSWER) == 1  # streamed, not printed again at the end
    assert "+    return 'hello'" in screen and "-    return 'helo'" in screen
    assert "$ echo line-one; sleep 1; echo line-two" in screen
    assert "line-one" in screen and "line-two" in screen
    assert all(body.get("stream") is True for body in stub.requests)
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"


def test_without_a_terminal_the_output_stays_plain(tmp_path, engram_home):
    project = _project(tmp_path)
    with OpenAIStub(EDIT_AND_COMMAND) as stub:
        done = run_engram(
            project,
            engram_home,
            stub.base_url,
            "run",
            "fix the greeting",
            "--policy",
            "yolo",
            env={"TERM": "xterm-256color"},
        )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert done.stdout.strip() == ANSWER
    assert "→ edit_file(path='app.py'" in done.stderr and "✓ run_command:" in done.stderr
    assert "line-one" not in done.stderr.splitlines()  # no live command output
    assert not any(body.get("stream") for body in stub.requests)


def _group_gone(group: int, wait_s: float = 10.0) -> bool:
    """True once no live process is left in ``group`` (killed members may linger as zombies
    until whoever adopted them reaps them: those count as gone)."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == group and fields[0] != "Z":  # fields: state, ppid, pgrp, …
                alive.append(entry.name)
        if not alive:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


@needs_tmux
def test_ctrl_c_stops_a_command_and_the_session_resumes(tmp_path, engram_home):
    project = _project(tmp_path)
    script = [
        {
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "name": "run_command",
                    "args": {"command": "echo started-cmd; echo $$ > cmd.pid; sleep 120"},
                }
            ],
        },
        {"content": "The command was stopped; nothing else to do."},
    ]
    session = f"engram-stop-{os.getpid()}"
    with OpenAIStub(script) as stub:
        _start(session, project, engram_home, stub.base_url, "'run it' --thread s1 --policy yolo")
        try:
            _wait_for(session, "started-cmd")
            _wait_until(
                lambda: (
                    (project / "cmd.pid").exists()
                    and (project / "cmd.pid").read_text().strip() != ""
                )
            )
            _tmux("send-keys", "-t", session, "C-c")
            screen = _wait_for(session, "FINISHED-")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        assert "FINISHED-130" in screen
        assert "stopped the tool step" in screen and "engram sessions resume s1" in screen
        group = int((project / "cmd.pid").read_text())
        assert _group_gone(group)  # the command's process group is gone
        log = state_of(project, engram_home).path("snapshots", "log", "s1.jsonl")
        records = [json.loads(line) for line in log.read_text().splitlines()]
        # what the stopped command changed was snapshotted: it can be undone
        assert [(r["kind"], r["tool"], r["paths"]) for r in records] == [
            ("command", "run_command", ["cmd.pid"])
        ]
        resumed = run_engram(
            project, engram_home, stub.base_url, "sessions", "resume", "s1", "--json"
        )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "The command was stopped; nothing else to do."
    assert stub.rejected == []
    last = stub.requests[-1]["messages"]
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "c1"
    assert "stopped by the user (Ctrl-C)" in last[-1]["content"]


def test_sigint_during_a_slow_model_call_leaves_a_session_that_goes_on(tmp_path, engram_home):
    project = _project(tmp_path)
    script: list[dict[str, Any]] = [
        {"content": "too late", "delay_s": 60},
        {"content": "second answer"},
    ]
    with OpenAIStub(script) as stub:
        environ = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
        }
        environ.update(
            {
                "ENGRAM_HOME": str(engram_home),
                "ENGRAM_MODEL": "stub-model",
                "OPENAI_API_KEY": "x",
                "ENGRAM_BASE_URL": stub.base_url,
                "ENGRAM_EMBEDDING_PROVIDER": "hash",
                "NO_COLOR": "1",
            }
        )
        process = subprocess.Popen(
            [ENGRAM, "run", "first task", "--thread", "s2", "--path", str(project)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        deadline = time.monotonic() + WAIT_S
        while not stub.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert time.monotonic() - started < 20
        assert process.returncode == 130, err
        assert "stopped the model call" in err and "Traceback" not in err
        done = run_engram(
            project, engram_home, stub.base_url, "run", "next task", "--thread", "s2", "--json"
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "second answer"
    assert stub.rejected == []
    users = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "first task" and users[-1].startswith("next task")


def test_run_shell_passes_output_on_while_the_command_runs(tmp_path):
    pieces: list[tuple[float, str]] = []
    result = run_shell(
        tmp_path,
        "printf 'a\\033[31mb\\n'; sleep 1; echo c",
        30,
        dict(os.environ),
        lambda text: pieces.append((time.monotonic(), text)),
    )
    assert result.exit_code == 0 and result.output == "ab\nc\n"
    assert "".join(text for _, text in pieces) == "ab\nc\n"
    assert pieces[-1][0] - pieces[0][0] > 0.5  # the first line came before the command ended


@needs_tmux
def test_ctrl_c_in_chat_stops_the_model_call_and_the_next_turn_works(tmp_path, engram_home):
    project = _project(tmp_path)
    script: list[dict[str, Any]] = [
        {"content": "too late", "delay_s": 60},
        {"content": "the second answer streamed"},
    ]
    session = f"engram-chat-{os.getpid()}"
    env = {
        "ENGRAM_HOME": str(engram_home),
        "ENGRAM_MODEL": "stub-model",
        "OPENAI_API_KEY": "x",
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
    }
    with OpenAIStub(script) as stub:
        exports = " ".join(
            f"{k}={shlex.quote(v)}" for k, v in {**env, "ENGRAM_BASE_URL": stub.base_url}.items()
        )
        command = (
            f"cd {shlex.quote(str(project))} && env {exports} {shlex.quote(ENGRAM)} "
            "chat --thread c1; echo FINISHED-$?; sleep 30"
        )
        _tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command)
        try:
            _wait_for(session, "engram>")
            _tmux("send-keys", "-t", session, "first question", "Enter")
            deadline = time.monotonic() + WAIT_S
            while not stub.requests and time.monotonic() < deadline:
                time.sleep(0.1)
            _tmux("send-keys", "-t", session, "C-c")
            screen = _wait_for(session, "stopped the model call")
            assert "send your next message" in screen
            _tmux("send-keys", "-t", session, "second question", "Enter")
            _wait_for(session, "the second answer streamed")
            _tmux("send-keys", "-t", session, "/exit", "Enter")
            screen = _wait_for(session, "FINISHED-")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "FINISHED-0" in screen and "Traceback" not in screen
    assert stub.rejected == []
    users = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "first question" and users[-1].startswith("second question")


@needs_tmux
def test_ctrl_c_at_an_approval_question_stops_with_the_question_pending(tmp_path, engram_home):
    project = _project(tmp_path)
    session = f"engram-ask-{os.getpid()}"
    with OpenAIStub([EDIT_AND_COMMAND[0], {"content": "Fixed after all."}]) as stub:
        _start(session, project, engram_home, stub.base_url, "'fix the greeting' --thread q1")
        try:
            screen = _wait_for(session, "for the session [a]:")
            assert "+    return 'hello'" in screen  # the question shows the diff
            _tmux("send-keys", "-t", session, "C-c")
            screen = _wait_for(session, "FINISHED-")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        assert "FINISHED-130" in screen and "stopped at the approval question" in screen
        assert (project / "app.py").read_text() == "def greet():\n    return 'helo'\n"
        shown = json.loads(
            run_engram(
                project, engram_home, stub.base_url, "sessions", "show", "q1", "--json"
            ).stdout
        )
        assert shown["interrupts"], shown  # the question waits for the next resume
        resumed = run_engram(
            project,
            engram_home,
            stub.base_url,
            "sessions",
            "resume",
            "q1",
            "--json",
            # the session keeps the policy it ran with ('ask'); --policy names another
            "--policy",
            "auto-edit",
        )
    assert resumed.returncode == 0, resumed.stderr
    assert stub.rejected == [] and len(stub.requests) == 2
    assert json.loads(resumed.stdout)["answer"] == "Fixed after all."
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
