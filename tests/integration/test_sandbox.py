"""Commands in the bubblewrap sandbox: writes stay in the project, no network, nothing left behind.

Real ``bwrap``; skipped, with the reason, only where it cannot make a sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from engram.graph import SandboxUnavailableError, find_sandbox
from engram.graph.tools import run_shell, scrubbed_environment
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

SANDBOX = find_sandbox("auto")
needs_bwrap = pytest.mark.skipif(
    SANDBOX.kind != "bubblewrap", reason=f"no sandbox here: {SANDBOX.reason}"
)


def _run(project: Path, command: str, *, network: bool = False, hidden: tuple[Path, ...] = ()):
    sandbox = find_sandbox("require", network=network)
    return run_shell(
        project, command, 30, scrubbed_environment(os.environ), sandbox=sandbox, hidden=hidden
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@needs_bwrap
def test_writes_stay_inside_the_project_and_its_private_tmp(project: Path, tmp_path: Path):
    beside = tmp_path / "beside.txt"  # under /tmp: the sandbox's /tmp is its own
    elsewhere = Path("/var/tmp") / f"engram-sandbox-probe-{os.getpid()}"  # read-only inside
    result = _run(
        project,
        f"echo in > inside.txt; echo tmp > /tmp/t && cat /tmp/t; echo x > {beside}; "
        f"echo out > {elsewhere}; echo code=$?",
    )
    assert (project / "inside.txt").read_text() == "in\n"
    assert not beside.exists() and not elsewhere.exists()
    assert "Read-only file system" in result.output and "code=0" not in result.output
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "tmp\n"


@needs_bwrap
def test_the_network_is_cut_unless_allowed(project: Path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        probe = (
            f'{sys.executable} -c "import socket; socket.create_connection('
            f"('127.0.0.1', {port}), 2); print('connected')\""
        )
        cut = _run(project, probe)
        allowed = _run(project, probe, network=True)
    assert cut.exit_code != 0 and "connected" not in cut.output
    assert allowed.exit_code == 0 and "connected" in allowed.output


@needs_bwrap
def test_a_setsid_child_does_not_outlive_the_command(project: Path):
    result = _run(
        project, "setsid sh -c 'sleep 2; echo late > late.txt' >/dev/null 2>&1 & echo started"
    )
    assert result.exit_code == 0 and "started" in result.output
    time.sleep(3)
    assert not (project / "late.txt").exists()


@needs_bwrap
def test_engram_home_is_hidden_from_commands(project: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.sqlite").write_text("facts")
    result = _run(project, f"ls {home}; cat {home}/memory.sqlite; echo done", hidden=(home,))
    assert "facts" not in result.output and "done" in result.output


def test_require_refuses_when_there_is_no_sandbox(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailableError, match="bubblewrap is not installed"):
        find_sandbox("require")
    assert find_sandbox("auto").kind == "none"
    assert find_sandbox("off").label == "none (sandbox = off)"


@needs_bwrap
def test_an_allowlisted_test_runner_cannot_write_outside_the_project(project: Path, tmp_path: Path):
    """Under auto-edit the model writes a test and an allowlisted runner runs it: bounded."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine\n")
    (project / ".engram").mkdir()
    (project / ".engram" / "settings.toml").write_text('[commands]\nallow = ["python3 *"]\n')

    def script(body):
        messages = body.get("messages") or []
        done = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        if "w" not in done:
            return {
                "content": "",
                "tool_calls": [
                    {
                        "id": "w",
                        "name": "write_file",
                        "args": {
                            "path": "test_x.py",
                            "content": f"import shutil\nshutil.rmtree({str(victim)!r})\n",
                        },
                    }
                ],
            }
        if "r" not in done:
            return {
                "content": "",
                "tool_calls": [
                    {"id": "r", "name": "run_command", "args": {"command": "python3 test_x.py"}}
                ],
            }
        return {"content": "done"}

    with OpenAIStub(script) as stub:
        ran = run_engram(
            project,
            tmp_path / "home",
            stub.base_url,
            "run",
            "add a test",
            "--policy",
            "auto-edit",
            "--json",
            env={"ENGRAM_TRUST_PROJECT": "1"},
        )
    result = json.loads(ran.stdout)
    # the allowlisted runner ran (only the discovered checks after it were refused: exit 3)
    assert ran.returncode in (0, 3), ran.stderr
    assert "run_command" not in [b["tool"] for b in result["blocked"]]
    assert (victim / "keep.txt").read_text() == "mine\n"
    assert result["answer"] == "done"


def test_a_command_that_floods_its_output_is_stopped_before_the_disk_fills(project: Path):
    from engram.graph.tools._command import MAX_SPOOL_BYTES

    started = time.monotonic()
    result = run_shell(project, "yes engram", 60, scrubbed_environment(os.environ))
    assert result.stopped == "output" and result.exit_code is None
    assert time.monotonic() - started < 30
    assert len(result.output) <= 2_000_000 < MAX_SPOOL_BYTES
