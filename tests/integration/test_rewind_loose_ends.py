"""Rewind after the verify loop, rewind to the start and then resume, and undo after rewind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.test_rewind_cli import (
    COMMAND_TASK,
    EDIT_TASK,
    _engram,
    _messages,
    _ok,
    _rewind,
    script,
    tree_hashes,
)
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration

CHECK = "printf 'report\\n' > check-report.txt && printf 'x' >> data.txt"
"""A verify command that, like many test runners, writes files of its own."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".engram").mkdir(parents=True)
    (root / "app.py").write_text("ANSWER = 1\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / "data.txt").write_text("1")
    return root


def test_files_the_verify_loop_writes_are_rewound_too(project, engram_home):
    (project / ".engram" / "settings.toml").write_text(f'[verify]\ncommands = ["{CHECK}"]\n')
    start_tree = tree_hashes(project)
    with OpenAIStub(script) as stub:
        done = json.loads(
            _ok(
                _engram(
                    project,
                    engram_home,
                    stub.base_url,
                    "run",
                    EDIT_TASK,
                    "--policy",
                    "yolo",
                    "--json",
                    env={"ENGRAM_TRUST_PROJECT": "1"},
                )
            ).stdout
        )
        assert done["tests"] == "passed"
        assert (project / "check-report.txt").exists()
        assert (project / "data.txt").read_text() == "1x"
        records = [
            json.loads(line)
            for line in state_of(project, engram_home)
            .path("snapshots", "log", f"{done['thread_id']}.jsonl")
            .read_text()
            .splitlines()
        ]
        verify = [r for r in records if r["tool"] == "verify"]
        assert [(r["kind"], r["paths"]) for r in verify] == [
            ("command", ["check-report.txt", "data.txt"])
        ]
        back = _rewind(project, engram_home, stub.base_url, done["thread_id"], "start")
        # the checks' files may hold edits made while they ran: kept and named, unless forced
        assert back["files"] == ["app.py"]
        assert back["held"] == ["check-report.txt", "data.txt"]
        forced = _rewind(project, engram_home, stub.base_url, done["thread_id"], "start", "--force")
    assert sorted(forced["files"]) == ["check-report.txt", "data.txt"]
    assert tree_hashes(project) == start_tree


def test_a_conversation_rewound_to_the_start_queues_nothing(project, engram_home):
    with OpenAIStub(script) as stub:
        first = json.loads(
            _ok(
                _engram(
                    project,
                    engram_home,
                    stub.base_url,
                    "run",
                    EDIT_TASK,
                    "--policy",
                    "yolo",
                    "--json",
                )
            ).stdout
        )
        thread = first["thread_id"]
        _ok(
            _engram(
                project, engram_home, stub.base_url, "sessions", "rewind", thread, "--to", "start"
            )
        )
        calls = len(stub.requests)
        resumed = _engram(project, engram_home, stub.base_url, "sessions", "resume", thread)
        assert resumed.returncode == 1 and "has nothing pending" in resumed.stderr
        assert len(stub.requests) == calls  # the first request did not run again
        assert (project / "app.py").read_text() == "ANSWER = 1\n"
        assert _messages(project, engram_home, stub.base_url, thread) == []
        again = json.loads(
            _ok(
                _engram(
                    project,
                    engram_home,
                    stub.base_url,
                    "run",
                    COMMAND_TASK,
                    "--thread",
                    thread,
                    "--policy",
                    "yolo",
                    "--json",
                )
            ).stdout
        )
    assert again["answer"] == "Regenerated."
    users = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "user"]
    assert len(users) == 1 and users[0].startswith(COMMAND_TASK)  # the old request is gone


def test_undo_after_rewind_goes_on_from_what_the_rewind_kept(project, engram_home):
    start_tree = tree_hashes(project)
    with OpenAIStub(script) as stub:
        chat = _ok(
            _engram(
                project,
                engram_home,
                stub.base_url,
                "chat",
                "--policy",
                "yolo",
                stdin=f"{EDIT_TASK}\n{COMMAND_TASK}\n/rewind --force\n/undo\n/undo\n/exit\n",
            )
        )
    out = chat.stdout
    # /rewind undid the command's turn; /undo then reverts the edit (the change still in
    # effect), not the command the rewind already took back; then nothing is left
    assert "restored 3 file(s)" in out
    assert re.search(r"undid edit_file: app\.py", out), out
    assert "undid run_command" not in out
    assert "no change of this session is left to undo" in out
    assert tree_hashes(project) == start_tree
