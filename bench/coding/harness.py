"""Run one scripted fix task through the real ``engram run`` on a temp copy of its fixture.

The model is the HTTP OpenAI stub; the script (``ScriptedModel``) replies by where the
conversation is (tool calls since the last user message, verify reports so far) and hashes
the project's tree at every request, which records the state before each step independently
of engram's own snapshots. After a run, ``check_rewind`` rewinds to a middle checkpoint and to
the start through ``engram sessions rewind`` and compares the trees with those hashes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.coding.tasks import FIXTURES, Task, verify_command
from bench.rewind.bench_snapshots import folder_bytes
from engram.nodes._verify_changes import FEEDBACK_PREFIX
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

__all__ = [
    "POLICIES",
    "RunResult",
    "ScriptedModel",
    "check_rewind",
    "prepare",
    "run_task",
    "tests_pass",
    "tree_difference",
    "tree_hash",
]

POLICIES = ("ask", "auto-edit", "allowlist", "yolo")
"""``allowlist`` is ``--policy auto-edit`` with the test commands allowed in settings."""
ALLOWED_COMMANDS = ("*-m pytest -q*", "npm test*", "make test")
ASKED = "there is no terminal to ask for approval"
OUTCOME_CODES = (0, 3, 4, 5)
"""``engram run`` exits: done, blocked, checks failed, step limit (a run that still finished)."""
TRUSTED = {"ENGRAM_TRUST_PROJECT": "1"}
"""The run follows the fixture's .engram/settings.toml (its verify and allowed commands)."""
TASK_PROMPT = "The tests fail; find the bug and fix it."
IGNORED = "__pycache__/\n.pytest_cache/\nbuild/\n.engram/\n"
"""The fixtures' .gitignore in git mode: what the project's tests leave behind."""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def _visible_files(root: Path) -> list[str]:
    """Files a snapshot covers: git's tracked and untracked-not-ignored, or all but .engram."""
    if (root / ".git").exists():
        listed = _git(root, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
        return sorted(p for p in listed if p and (root / p).is_file())
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".engram/")
    )


Tree = dict[str, str]
"""A project's files: path to a hash of its bytes and executable bit."""


def tree_hash(root: Path) -> Tree:
    """Hash each of the project's files (bytes and executable bit)."""
    found = {}
    for path in _visible_files(root):
        target = root / path
        digest = hashlib.sha256(target.read_bytes())
        digest.update(b"x" if target.stat().st_mode & 0o100 else b"-")
        found[path] = digest.hexdigest()
    return found


def tree_difference(actual: Tree, expected: Tree) -> list[str]:
    """Return the paths whose content differs between two trees, either side."""
    return sorted(p for p in actual.keys() | expected.keys() if actual.get(p) != expected.get(p))


def prepare(task: Task, root: Path, policy: str, git: bool) -> None:
    """Copy the fixture, put the task's bug in, write the settings; commit it in git mode."""
    shutil.copytree(FIXTURES / task.project, root)
    if task.bug is not None:
        (root / task.bug[0]).write_text(task.buggy(task.bug[0]), encoding="utf-8")
    for path, text in task.extra_files.items():
        (root / path).write_text(text, encoding="utf-8")
    settings = []
    command = verify_command(task.project)
    if command:
        settings.append(f"[verify]\ncommands = [{json.dumps(command)}]\n")
    if policy == "allowlist":
        settings.append(f"[commands]\nallow = {json.dumps(list(ALLOWED_COMMANDS))}\n")
    (root / ".engram").mkdir()
    (root / ".engram" / "settings.toml").write_text("\n".join(settings), encoding="utf-8")
    if git:
        (root / ".gitignore").write_text(IGNORED, encoding="utf-8")
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "fixture")


def tests_pass(task: Task, root: Path) -> bool:
    """Run the fixture's tests in a scratch copy (so the project's tree stays as it is)."""
    scratch = root.with_name(root.name + "-check")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".git", ".engram"))
    command = verify_command(task.project) or (
        "npm test --silent" if task.project == "javascript" else "make -s test"
    )
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=scratch,
            capture_output=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        return done.returncode == 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class ScriptedModel:
    """The stub's script for one task; it also records the tree at each request."""

    task: Task
    root: Path
    first_tree: Tree | None = None
    """The project's tree hash when the first request arrived."""
    tool_steps: list[tuple[str, Tree]] = field(default_factory=list)
    """For each reply with a tool call: the tool and the tree it started from."""
    verify_calls: int = 0
    """Requests made after a verify report (the verify loop's extra model calls)."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        """Reply with the script's next tool call, or its answer."""
        tree = tree_hash(self.root)
        if self.first_tree is None:
            self.first_tree = tree
        messages = body.get("messages") or []
        reports = sum(
            1
            for m in messages
            if m.get("role") == "user" and FEEDBACK_PREFIX in str(m.get("content"))
        )
        self.verify_calls += reports > 0
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        position = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant")
        steps = self.task.steps if reports == 0 else self.task.retry
        answer = self.task.answer if reports == 0 else self.task.retry_answer
        if reports > 1 or (reports == 1 and not self.task.retry):
            return {"content": "The checks still fail; stopping here."}
        if position < len(steps):
            tool, args = steps[position]
            self.tool_steps.append((tool, tree))
            return {
                "content": "",
                "tool_calls": [{"id": f"c{reports}_{position}", "name": tool, "args": args}],
            }
        return {"content": answer}


@dataclass
class RunResult:
    """What one task run under one policy gave."""

    task: str
    project: str
    policy: str
    git: bool
    returncode: int
    tests: str
    """The run's own verdict (``passed``/``failed``/``not-run``)."""
    finished: bool
    """The fixture's tests pass on the tree the run left."""
    asked: int
    model_calls: int
    verify_calls: int
    seconds: float
    thread_id: str = ""
    snapshot_records: int = 0
    snapshot_bytes: int = 0
    rewind: dict[str, Any] = field(default_factory=dict)


def run_task(
    task: Task, root: Path, home: Path, policy: str, git: bool, rewind: bool = False
) -> RunResult:
    """Run the task on a fresh copy at ``root``; optionally check rewind afterwards."""
    prepare(task, root, policy, git)
    start = tree_hash(root)
    # git mode writes tree objects into the repository; the rest lives in the state folder
    stores = (root / ".git" / "objects", state_of(root, home).path("snapshots"))
    size_before = folder_bytes(*stores)
    model = ScriptedModel(task, root)
    flag = "auto-edit" if policy == "allowlist" else policy
    with OpenAIStub(model) as stub:
        began = time.perf_counter()
        done = run_engram(
            root, home, stub.base_url, "run", TASK_PROMPT, "--policy", flag, "--json", env=TRUSTED
        )
        seconds = time.perf_counter() - began
        # a blocked run (exit 3), failed checks (4) or the step limit (5) still prints its JSON
        output = json.loads(done.stdout) if done.stdout.lstrip().startswith("{") else {}
        records = _snapshot_records(root, home, str(output.get("thread_id", "")))
        result = RunResult(
            task.name,
            task.project,
            policy,
            git,
            done.returncode,
            str(output.get("tests", "error")),
            tests_pass(task, root),
            done.stderr.count(ASKED),
            len(stub.requests),
            model.verify_calls,
            round(seconds, 2),
            str(output.get("thread_id", "")),
            records,
            folder_bytes(*stores) - size_before,
        )
        if done.returncode not in OUTCOME_CODES:
            result.rewind = {"error": done.stderr[-2000:]}
        elif rewind:
            result.rewind = check_rewind(root, home, stub.base_url, result.thread_id, start, model)
    return result


def _snapshot_records(root: Path, home: Path, thread: str) -> int:
    log = state_of(root, home).path("snapshots", "log")
    return (
        sum(
            1
            for f in log.glob("*.jsonl")
            for line in f.read_text().splitlines()
            if line.strip() and json.loads(line).get("kind") != "rewind"
        )
        if thread
        else 0
    )


def check_rewind(
    root: Path, home: Path, url: str, thread: str, start: Tree, model: ScriptedModel
) -> dict[str, Any]:
    """Rewind to the middle action's checkpoint, then to the start; compare the trees."""
    shown = run_engram(root, home, url, "sessions", "history", thread, "--json")
    history = json.loads(shown.stdout)
    steps = [r["checkpoint_id"] for r in reversed(history) if r["next"] == ["run_tools"]]
    if len(steps) != len(model.tool_steps):
        return {"error": f"{len(steps)} tool checkpoints for {len(model.tool_steps)} tool replies"}
    actions = [
        (checkpoint, tree)
        for checkpoint, (tool, tree) in zip(steps, model.tool_steps, strict=True)
        if tool in ("edit_file", "write_file", "apply_patch", "run_command")
    ]
    if model.first_tree is None:
        return {"error": "the model was never called"}
    report: dict[str, Any] = {"first_request_is_start": model.first_tree == start}
    held: list[str] = []

    def rewind_to(checkpoint: str, expected: Tree) -> str:
        back = run_engram(
            root, home, url, "sessions", "rewind", thread, "--to", checkpoint, "--json"
        )
        kept = json.loads(back.stdout).get("held", []) if back.returncode == 0 else []
        if kept:
            # files a command changed are kept unless forced (they may hold the user's edits
            # made while it ran); the user is told, and --force restores them
            held.extend(kept)
            if set(tree_difference(tree_hash(root), expected)) - set(kept):
                return _compare(back, root, expected)
            back = run_engram(
                root,
                home,
                url,
                "sessions",
                "rewind",
                thread,
                "--to",
                checkpoint,
                "--force",
                "--json",
            )
        return _compare(back, root, expected)

    if actions:
        checkpoint, expected = actions[len(actions) // 2]
        report["middle"] = rewind_to(checkpoint, expected)
    report["start"] = rewind_to("start", start)
    if held:
        report["held"] = sorted(set(held))
    return report


def _compare(done: subprocess.CompletedProcess[str], root: Path, expected: Tree) -> str:
    """Return "exact", or what went wrong: the rewind's error or the differing files."""
    if done.returncode != 0:
        return "refused: " + done.stderr.strip()[-600:]
    differing = tree_difference(tree_hash(root), expected)
    return "exact" if not differing else "differs: " + ", ".join(differing)
