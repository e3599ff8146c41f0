"""A whole coding task through `engram run`: grep, read, edit, run the tests, fix, pass.

The model is the HTTP OpenAI stub answering by where the conversation is; the fixture project
has two bugs, so the first test run fails and the model has to fix the second one.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration

TASK = "The calc tests fail; fix calc.py"
TEST_COMMAND = (
    f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q "
    "-p no:cacheprovider test_calc.py"
)
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": call_id, "name": name, "args": args}]}


def _last_tool(body: dict[str, Any]) -> tuple[str, str]:
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") != "tool":
        return "", ""
    content = last.get("content")
    return str(last.get("tool_call_id")), content if isinstance(content, str) else json.dumps(
        content
    )


def coding_script(body: dict[str, Any]) -> dict[str, Any]:
    """Grep, read, fix add, run the tests; on failure fix mul and run again; then answer."""
    call_id, result = _last_tool(body)
    last = (body.get("messages") or [{}])[-1]
    if not call_id and "[engram verify]" in str(last.get("content")):
        if "test_mul" not in str(last.get("content")):
            return {"content": "(the verify feedback did not name the failing test)"}
        return _call(
            "edit_file",
            "edit_mul",
            path="calc.py",
            old_string="def mul(a, b):\n    return a + b",
            new_string="def mul(a, b):\n    return a * b",
        )
    if not call_id:
        return _call("grep_code", "grep", pattern="def add")
    steps = {
        "grep": _call("read_file", "read", path="calc.py"),
        "read": _call(
            "edit_file",
            "edit_add",
            path="calc.py",
            old_string="return a - b",
            new_string="return a + b",
        ),
        "edit_add": _call("run_command", "test1", command=TEST_COMMAND),
        "edit_mul": _call("run_command", "test2", command=TEST_COMMAND),
    }
    if call_id in steps:
        return steps[call_id]
    if call_id == "test1":
        if "exit code 1" in result and "test_mul" in result:
            return _call(
                "edit_file",
                "edit_mul",
                path="calc.py",
                old_string="def mul(a, b):\n    return a + b",
                new_string="def mul(a, b):\n    return a * b",
            )
        return {"content": "The tests could not run: " + result[:200]}
    if call_id == "test2":
        passed = "exit code 0" in result and "2 passed" in result
        return {
            "content": "Fixed add and mul; the tests pass."
            if passed
            else "Still failing: " + result[:300]
        }
    return {"content": "(unexpected)"}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calcproj"
    (root / ".engram").mkdir(parents=True)
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TESTS)
    (root / ".engram" / "settings.toml").write_text(f"[verify]\ncommands = [{TEST_COMMAND!r}]\n")
    return root


def _allow_pytest(project: Path) -> None:
    settings = project / ".engram" / "settings.toml"
    settings.write_text(settings.read_text() + '[commands]\nallow = ["*-m pytest -q*"]\n')


_engram = run_engram
TRUSTED = {"ENGRAM_TRUST_PROJECT": "1"}
"""Follow the project's .engram/settings.toml: its verify and allowed commands."""


def test_scripted_fix_with_auto_edit_and_an_allowlisted_test_command(project, engram_home):
    _allow_pytest(project)
    with OpenAIStub(coding_script) as stub:
        done = _engram(
            project,
            engram_home,
            stub.base_url,
            "run",
            TASK,
            "--policy",
            "auto-edit",
            "--json",
            env=TRUSTED,
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert result["answer"] == "Fixed add and mul; the tests pass."
    assert result["files_changed"] == ["calc.py"]
    assert result["tests"] == "passed"  # the verify step ran the checks after the answer
    assert result["usage"]["calls"] == len(stub.requests)
    assert result["thread_id"] and result["interrupted"] is False
    assert (project / "calc.py").read_text() == FIXED
    assert "no terminal" not in done.stderr  # nothing was asked: edits pass, pytest allowed
    tool_ids = [m.get("tool_call_id") for m in stub.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_ids[:6] == ["grep", "read", "edit_add", "test1", "edit_mul", "test2"]

    shown = _engram(
        project, engram_home, stub.base_url, "sessions", "show", result["thread_id"], "--json"
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["interrupts"] == []
    plain = _engram(project, engram_home, stub.base_url, "sessions", "show", result["thread_id"])
    assert plain.returncode == 0, plain.stderr
    calls = [line for line in plain.stdout.splitlines() if line.startswith("ai → ")]
    assert 'ai → edit_file(path="calc.py", old_string="return a - b"' in plain.stdout, plain.stdout
    assert calls and all("(" in line and "=" in line for line in calls), plain.stdout


def test_policy_ask_without_a_terminal_refuses_instead_of_hanging(project, engram_home):
    with OpenAIStub(coding_script) as stub:
        refused = _engram(
            project, engram_home, stub.base_url, "run", TASK, "--json", env={"ENGRAM_POLICY": "ask"}
        )
    assert refused.returncode == 3, refused.stderr  # blocked: said in the exit code and JSON
    assert (project / "calc.py").read_text() == BUGGY
    # the edit, then the test command the model tried next: each refused, nothing waited
    assert refused.stderr.count("there is no terminal to ask for approval") == 2
    assert "[commands] allow" in refused.stderr
    edit_result = [m for m in stub.requests[-1]["messages"] if m.get("tool_call_id") == "edit_add"][
        0
    ]["content"]
    assert "rejected by the user: refused: there is no terminal" in edit_result
    assert "--policy auto-edit" in edit_result
    result = json.loads(refused.stdout)
    assert result["files_changed"] == [] and result["exit_code"] == 3
    assert [b["tool"] for b in result["blocked"]][:2] == ["edit_file", "run_command"]
    assert all("no terminal" in b["reason"] for b in result["blocked"])


def test_yolo_runs_everything_and_a_bad_policy_is_one_clear_error(project, engram_home):
    with OpenAIStub(coding_script) as stub:
        yolo = _engram(project, engram_home, stub.base_url, "run", TASK, "--policy", "yolo")
        bad = _engram(project, engram_home, stub.base_url, "run", TASK, "--policy", "never")
    assert yolo.returncode == 0, yolo.stderr
    assert (project / "calc.py").read_text() == FIXED
    assert "Fixed add and mul" in yolo.stdout
    assert bad.returncode == 2
    assert "unknown approval policy 'never'" in bad.stderr or "never" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_verify_loop_feeds_the_failure_back_until_the_tests_pass(project, engram_home):
    """The model never runs the tests: engram does, after its answer, and reports the failure."""
    _allow_pytest(project)

    def script(body: dict[str, Any]) -> dict[str, Any]:
        call_id, _ = _last_tool(body)
        if call_id == "edit_add":
            return {"content": "Fixed add."}
        if call_id == "edit_mul":
            return {"content": "Fixed mul too."}
        reply = coding_script(body)
        return reply

    with OpenAIStub(script) as stub:
        done = _engram(
            project,
            engram_home,
            stub.base_url,
            "run",
            TASK,
            "--policy",
            "auto-edit",
            "--json",
            env=TRUSTED,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        episodes = _engram(
            project, engram_home, stub.base_url, "memory", "episodes", "list", "--json"
        )
    assert (project / "calc.py").read_text() == FIXED
    assert result["tests"] == "passed" and result["answer"] == "Fixed mul too."
    feedback = [
        m
        for m in stub.requests[-1]["messages"]
        if m["role"] == "user" and "[engram verify]" in str(m["content"])
    ]
    assert len(feedback) == 1
    assert "round 1 of 3" in feedback[0]["content"] and "test_mul" in feedback[0]["content"]
    spilled = re.search(
        r"\.engram/tool-outputs/([^/ ]+)/(verify-round1-\S+?\.txt)", feedback[0]["content"]
    )
    assert spilled  # the model reads it by that path; the file is in the state folder
    session, name = spilled.groups()
    assert state_of(project, engram_home).path("tool-outputs", session, name).is_file()
    assert not (project / ".engram" / "tool-outputs").exists()
    assert episodes.returncode == 0, episodes.stderr
    recorded = json.loads(episodes.stdout)
    assert recorded[0]["outcome"] == "success" and recorded[0]["files"] == ["calc.py"]
