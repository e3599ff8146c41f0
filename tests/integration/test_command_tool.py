"""``run_command`` starting real shell processes: exit codes, timeouts, scrubbing, bounds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engram.graph import Context
from engram.graph._errors import ToolError
from engram.graph.tools import _command as command_tool
from engram.graph.tools import scrubbed_environment
from engram.graph.tools._command import build_command_tool
from engram.stores.files import spill_if_large
from tests.support.state import state_of

pytestmark = pytest.mark.integration


@pytest.fixture()
def run(tmp_path: Path):
    root = (tmp_path / "proj").resolve()
    root.mkdir()
    tool = build_command_tool(Context(project=str(root)))
    return lambda command, **kw: tool.invoke({"command": command, **kw})


def test_exit_code_output_and_cwd(run, tmp_path):
    out = run("pwd; echo out; echo err >&2; exit 3")
    lines = out.splitlines()
    assert lines[0] == "$ pwd; echo out; echo err >&2; exit 3"
    assert lines[1].startswith("exit code 3 · ")
    assert lines[2:] == [str((tmp_path / "proj").resolve()), "out", "err"]
    assert run("true").splitlines()[1].startswith("exit code 0")
    assert run("true").endswith("(no output)")


def test_stdin_is_empty_so_nothing_waits(run):
    started = time.monotonic()
    assert run('read line; echo "got:[$line]"').endswith("got:[]")
    assert time.monotonic() - started < 10


def test_timeout_stops_the_command_and_its_children(run, tmp_path):
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 1 s") as err:
        run("echo begun; sleep 30", timeout_s=1)
    assert time.monotonic() - started < 10
    assert "begun" in str(err.value)
    # a background child would write its mark a second later; killed with the command, it
    # never does (checked by its effect, not its pid: a sandbox gives it its own pid namespace)
    out = run("(sleep 1; echo late > late.txt) & echo started")
    assert out.splitlines()[1].startswith("exit code 0") and out.endswith("started")
    time.sleep(2.5)
    assert not (tmp_path / "proj" / "late.txt").exists()


def test_secrets_are_scrubbed_from_the_environment(run, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-aaaaaaaaaaaaaaaaaaaaaaaa")
    monkeypatch.setenv("ENGRAM_MODEL", "stub")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("MY_SECRET", "hush")
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    monkeypatch.setenv("MIRROR", "https://user:pa55word@example.com/simple")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    out = run("env")
    for name in (
        "OPENAI_API_KEY",
        "ENGRAM_MODEL",
        "GITHUB_TOKEN",
        "MY_SECRET",
        "DB_PASSWORD",
        "MIRROR",
    ):
        assert f"{name}=" not in out
    assert "HARMLESS_SETTING=kept" in out and "GIT_TERMINAL_PROMPT=0" in out
    assert "PATH=" in out


def test_output_is_capped_then_spilled(run, tmp_path, monkeypatch):
    monkeypatch.setattr(command_tool, "MAX_CAPTURE_BYTES", 100_000)
    out = run("yes 0123456789 | head -c 300000")
    assert out.endswith("[output cut at 100,000 bytes]")
    assert 100_000 < len(out) < 100_300
    state = state_of(tmp_path / "proj")
    spilled = spill_if_large(state, "run_command", "call1", out)
    # the model reads it by its virtual path; the file itself is in the state folder
    assert spilled.path is not None and spilled.path.startswith(".engram/tool-outputs/")
    session, name = Path(spilled.path).parts[2:]
    assert state.path("tool-outputs", session, name).read_text() == out
    assert not (tmp_path / "proj" / ".engram").exists()


def test_empty_command_is_refused(run):
    with pytest.raises(ToolError, match="empty"):
        run("   ")


def test_scrub_is_pure():
    env = scrubbed_environment(
        {
            "PATH": "/bin",
            "ANTHROPIC_API_KEY": "x",
            "AWS_REGION": "eu",
            "NPM_TOKEN": "y",
            "PAGER": "less",
        }
    )
    assert env["PATH"] == "/bin" and env["PAGER"] == "cat"
    assert "ANTHROPIC_API_KEY" not in env and "NPM_TOKEN" not in env and "AWS_REGION" not in env
