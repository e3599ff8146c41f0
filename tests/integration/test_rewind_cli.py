"""Rewind and undo through the CLI: files (also those a command made or deleted) and the
conversation go back exactly, in a git project and a plain folder, and the user's own
changes are never overwritten silently.

The model is the HTTP OpenAI stub: the first task edits ``app.py``; the second runs a command
that deletes ``old.txt`` and creates ``gen/new.txt``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")
EDIT_TASK = "Set the answer to 42 in app.py"
COMMAND_TASK = "Regenerate the generated files"
COMMAND = "rm old.txt && mkdir -p gen && printf 'made\\n' > gen/new.txt && printf '9' >> data.txt"


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": call_id, "name": name, "args": args}]}


def script(body: dict[str, Any]) -> dict[str, Any]:
    """Edit app.py for the first task, run the generating command for the second."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return {
            "content": {"edit": "Set it to 42.", "gen": "Regenerated."}.get(
                str(last.get("tool_call_id")), "(unexpected)"
            )
        }
    if COMMAND_TASK in str(last.get("content")):
        return _call("run_command", "gen", command=COMMAND)
    return _call(
        "edit_file", "edit", path="app.py", old_string="ANSWER = 1", new_string="ANSWER = 42"
    )


def tree_hashes(root: Path) -> dict[str, str]:
    """Hash every file of the project but git's own folder.

    ``.engram/`` is included: it holds only the project's own settings now (engram keeps its
    state under ENGRAM_HOME), so a rewind must leave it as it was too.
    """
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(".git/"):
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def git_view(root: Path) -> tuple[str, ...]:
    """What the user sees of git: status, HEAD, branches, the index, stashes and refs."""
    return (
        _git(root, "status", "--porcelain"),
        _git(root, "rev-parse", "HEAD"),
        _git(root, "branch", "-a"),
        _git(root, "ls-files", "-s"),
        _git(root, "stash", "list"),
        _git(root, "symbolic-ref", "HEAD"),
    )


@pytest.fixture(params=["git", "plain"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".engram").mkdir(parents=True)
    (root / "app.py").write_text("ANSWER = 1\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / "data.txt").write_text("1")
    (root / "keep").mkdir()
    (root / "keep" / "same.txt").write_text("unchanged\n")
    if request.param == "git":
        (root / ".gitignore").write_text(".engram/\n")
        for args in (
            ["init", "-q", "-b", "main"],
            ["add", "-A"],
            ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
        ):
            _git(root, *args)
        (root / "app.py").write_text("ANSWER = 1\n# staged later\n")  # the user's own work
        _git(root, "add", "app.py")
        (root / "app.py").write_text("ANSWER = 1\n")  # … and an unstaged change on top
    return root


def _engram(
    project: Path,
    home: Path,
    base_url: str,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    environ.update(
        {
            "ENGRAM_HOME": str(home),
            "ENGRAM_MODEL": "stub-model",
            "OPENAI_API_KEY": "x",
            "ENGRAM_BASE_URL": base_url,
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
            "COLUMNS": "200",
            **(env or {}),
        }
    )
    return subprocess.run(
        [ENGRAM, *args, "--path", str(project)],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


def _two_tasks(project: Path, home: Path, url: str) -> tuple[str, str]:
    """Run the edit task then the command task in one session; return it and the middle."""
    first = json.loads(
        _ok(_engram(project, home, url, "run", EDIT_TASK, "--policy", "yolo", "--json")).stdout
    )
    thread = first["thread_id"]
    history = json.loads(
        _ok(_engram(project, home, url, "sessions", "history", thread, "--json")).stdout
    )
    middle = history[0]["checkpoint_id"]
    _ok(
        _engram(
            project,
            home,
            url,
            "run",
            COMMAND_TASK,
            "--thread",
            thread,
            "--policy",
            "yolo",
            "--json",
        )
    )
    return thread, middle


def _messages(project: Path, home: Path, url: str, thread: str) -> list[dict[str, Any]]:
    shown = _ok(_engram(project, home, url, "sessions", "show", thread, "--json"))
    return list(json.loads(shown.stdout)["messages"])


def _rewind(
    project: Path, home: Path, url: str, thread: str, target: str, *flags: str
) -> dict[str, Any]:
    """Rewind a session from the CLI and return its JSON report."""
    done = _engram(
        project, home, url, "sessions", "rewind", thread, "--to", target, *flags, "--json"
    )
    return dict(json.loads(_ok(done).stdout))


def test_rewind_to_a_middle_checkpoint_and_to_the_start(project, engram_home):
    is_git = (project / ".git").exists()
    start_tree = tree_hashes(project)
    start_git = git_view(project) if is_git else ()
    with OpenAIStub(script) as stub:
        thread, middle = _two_tasks(project, engram_home, stub.base_url)
        after_tree = tree_hashes(project)
        assert "old.txt" not in after_tree and "gen/new.txt" in after_tree
        assert (project / "app.py").read_text() == "ANSWER = 42\n"
        middle_messages = [
            m["content"] for m in _messages(project, engram_home, stub.base_url, thread)[:4]
        ]

        back = _rewind(project, engram_home, stub.base_url, thread[:8], middle[:24])
        # the command's files may hold edits made while it ran: named and kept unless forced
        assert back["files"] == []
        assert back["held"] == ["data.txt", "gen/new.txt", "old.txt"]
        assert (project / "gen" / "new.txt").exists()
        back = _rewind(
            project, engram_home, stub.base_url, thread[:8], middle[:24], "--code", "--force"
        )
        assert sorted(back["files"]) == ["data.txt", "gen/new.txt", "old.txt"]
        middle_tree = tree_hashes(project)
        assert middle_tree == {**start_tree, "app.py": middle_tree["app.py"]}
        assert (project / "app.py").read_text() == "ANSWER = 42\n"
        assert not (project / "gen").exists()
        rewound = _messages(project, engram_home, stub.base_url, thread)
        assert [m["content"] for m in rewound] == middle_messages  # the second task is gone

        _ok(
            _engram(
                project, engram_home, stub.base_url, "sessions", "rewind", thread, "--to", "start"
            )
        )
        assert tree_hashes(project) == start_tree
        assert _messages(project, engram_home, stub.base_url, thread) == []
        if is_git:
            assert git_view(project) == start_git  # index, HEAD and branches untouched

        # the conversation goes on from the rewound point
        again = json.loads(
            _ok(
                _engram(
                    project,
                    engram_home,
                    stub.base_url,
                    "run",
                    EDIT_TASK,
                    "--thread",
                    thread,
                    "--policy",
                    "yolo",
                    "--json",
                )
            ).stdout
        )
    assert again["answer"] == "Set it to 42."
    assert (project / "app.py").read_text() == "ANSWER = 42\n"


def test_rewind_refuses_to_overwrite_the_users_changes_unless_forced(project, engram_home):
    start_tree = tree_hashes(project)
    with OpenAIStub(script) as stub:
        thread, _ = _two_tasks(project, engram_home, stub.base_url)
        (project / "app.py").write_text("ANSWER = 7  # mine\n")
        (project / "notes.md").write_text("the user's own file\n")
        before = tree_hashes(project)
        refused = _engram(
            project,
            engram_home,
            stub.base_url,
            "sessions",
            "rewind",
            thread,
            "--to",
            "start",
            "--code",
        )
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        assert "app.py" in refused.stderr and "--force" in refused.stderr
        assert "data.txt" not in refused.stderr  # only the files the user changed are named
        assert tree_hashes(project) == before  # nothing was written

        _rewind(project, engram_home, stub.base_url, thread, "start", "--code", "--force")
        assert len(_messages(project, engram_home, stub.base_url, thread)) > 0  # code only
    # the session's changes are undone; the user's untouched new file stays
    assert tree_hashes(project) == {**start_tree, "notes.md": before["notes.md"]}


def test_undo_and_rewind_in_chat(project, engram_home):
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
                stdin=f"{EDIT_TASK}\n{COMMAND_TASK}\n/undo\n/undo --force\n/exit\n",
            )
        )
        # a command's files may hold edits made while it ran: undone only when forced
        assert "nothing was undone — /undo --force reverts them anyway" in chat.stdout
        assert "undid run_command" in chat.stdout
        assert (project / "old.txt").exists() and not (project / "gen").exists()
        assert (project / "app.py").read_text() == "ANSWER = 42\n"  # only the last change

        thread = re.search(r"session (\S+)", chat.stdout).group(1)  # type: ignore[union-attr]
        chat = _ok(
            _engram(
                project,
                engram_home,
                stub.base_url,
                "chat",
                "--thread",
                thread,
                "--policy",
                "yolo",
                stdin="/undo\n/undo\n/exit\n",
            )
        )
        assert "undid edit_file: app.py" in chat.stdout
        assert "no change of this session is left to undo" in chat.stdout
        assert tree_hashes(project) == start_tree

        chat = _ok(
            _engram(
                project,
                engram_home,
                stub.base_url,
                "chat",
                "--policy",
                "yolo",
                stdin=f"{COMMAND_TASK}\n/rewind\n/rewind start --force\n/exit\n",
            )
        )
    assert "restored 0 file(s); kept as they are: data.txt, gen/new.txt, old.txt" in chat.stdout
    assert "restored 3 file(s)" in chat.stdout and "conversation back at start" in chat.stdout
    assert tree_hashes(project) == start_tree


SLOW_TASK = "Build the report slowly"


def slow_script(body: dict[str, Any]) -> dict[str, Any]:
    """Run one command that takes a while (the user types meanwhile)."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return {"content": "Built."}
    return _call(
        "run_command", "slow", command="touch started && sleep 2 && printf built > report.txt"
    )


@pytest.mark.parametrize("project", ["plain"], indirect=True)
def test_a_file_the_user_writes_while_a_command_runs_is_never_reverted(project, engram_home):
    import threading
    import time

    with OpenAIStub(slow_script) as stub:
        done: list[subprocess.CompletedProcess[str]] = []
        run = threading.Thread(
            target=lambda: done.append(
                _engram(
                    project,
                    engram_home,
                    stub.base_url,
                    "run",
                    SLOW_TASK,
                    "--policy",
                    "yolo",
                    "--json",
                )
            )
        )
        run.start()
        deadline = time.monotonic() + 60
        while not (project / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (project / "notes.md").write_text("typed while the command ran\n")
        run.join(120)
        thread = json.loads(_ok(done[0]).stdout)["thread_id"]
        assert (project / "report.txt").read_text() == "built"
        undo = _engram(
            project, engram_home, stub.base_url, "chat", "--thread", thread, stdin="/undo\n/exit\n"
        )
        assert "nothing was undone" in undo.stdout and "notes.md" in undo.stdout
        back = _rewind(project, engram_home, stub.base_url, thread, "start")
        assert back["files"] == [] and "notes.md" in back["held"]
        assert (project / "notes.md").read_text() == "typed while the command ran\n"
    assert (project / "notes.md").read_text() == "typed while the command ran\n"


def test_the_rewind_message_escapes_file_names():
    from engram.cli._session_rewind_command import rewind_message

    text = rewind_message(["two\nlines.py", "esc\x1b[2J.py"], None, "start", ["bidi\u202e.py"])
    assert text == (
        "restored 2 file(s): two\\x0alines.py, esc\\x1b[2J.py; kept as they are: bidi\\u202e.py"
        " (a command changed them and they may hold edits made while it ran; --force restores"
        " them too)"
    )
