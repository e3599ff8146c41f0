"""Commit the files one finished task changed, and nothing else, on the current git branch.

The commit is made with ``git commit --only -- PATHS``: the task's files are taken from the
working tree, while whatever the user staged for other files stays staged and uncommitted.
The user's hooks, signing and identity settings apply as for any commit.

Errors: ``CommitRefusedError(StoreError)`` — not a git work tree, a detached HEAD, a merge,
rebase, cherry-pick or revert in progress, or git refused the commit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engram.stores._errors import StoreError
from engram.stores.files import (
    PLUMBING_CONFIG,
    filter_overrides,
    git_environment,
    is_protected_or_secret,
)

SUBJECT_CHARS = 72
"""Longest first line of a commit message."""
BUSY_STATES = {
    "MERGE_HEAD": "a merge",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
}
"""Files in the git folder that mean an operation is under way, and its name."""


class CommitRefusedError(StoreError):
    """The task's changes cannot be committed here (the message says why)."""

    def __init__(self, message: str, hint: str = "") -> None:
        """Keep the reason and what to do next."""
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class TaskCommit:
    """A commit made for a task."""

    sha: str
    branch: str
    subject: str
    files: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """Return the commit for ``--json`` and the ledger."""
        return {**asdict(self), "files": list(self.files)}


def _git(
    root: Path, *args: str, data: str | None = None, hooks: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run git without secrets in its environment, its hooks, fsmonitor and filters off.

    With ``hooks`` (the commit itself) the user's own hooks and filters run.
    """
    try:
        environ = git_environment()
        config = () if hooks else (*PLUMBING_CONFIG, *filter_overrides(root, environ))
        return subprocess.run(
            ["git", *config, *args],
            cwd=root,
            input=data,
            capture_output=True,
            text=True,
            env=environ,
            check=False,
        )
    except OSError as exc:  # git is not installed
        raise CommitRefusedError(
            f"cannot run git: {exc}", hint="install git, or drop --commit"
        ) from exc


def current_branch(root: Path) -> str:
    """Return the branch a task's commit would go on.

    Raises:
        CommitRefusedError: Not a git work tree, a detached HEAD, or an operation under way.
    """
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        raise CommitRefusedError(
            f"--commit needs a git repository, and {root} is not in one",
            hint="run `git init` there first, or drop --commit",
        )
    names = [arg for name in BUSY_STATES for arg in ("--git-path", name)]
    found = _git(root, "rev-parse", *names).stdout.splitlines()
    for path, operation in zip(found, BUSY_STATES.values(), strict=False):
        if path and (root / path).exists():
            raise CommitRefusedError(
                f"--commit refused: {operation} is in progress",
                hint=f"finish or abort {operation} first, or drop --commit",
            )
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch.returncode != 0:
        raise CommitRefusedError(
            "--commit refused: HEAD is detached (no branch to commit on)",
            hint="check out a branch (`git switch -c NAME`), or drop --commit",
        )
    return branch.stdout.strip()


def _refuse_hook_changes(root: Path, paths: Sequence[str]) -> None:
    """Refuse to commit when the task changed a file in the hooks folder the commit would run.

    Raises:
        CommitRefusedError: One of ``paths`` lies in the effective hooks folder.
    """
    # the user's effective hooks path (the plumbing settings would hide core.hooksPath)
    found = _git(root, "rev-parse", "--git-path", "hooks", hooks=True).stdout.strip()
    if not found:
        return
    hooks = (root / found).resolve()
    touched = [p for p in paths if (root / p).resolve().is_relative_to(hooks)]
    if touched:
        raise CommitRefusedError(
            f"--commit refused: the task changed {', '.join(touched)}, in the hooks folder "
            "a commit runs",
            hint="review the hook change and commit it yourself",
        )


def _subject(task: str) -> str:
    words = " ".join(task.strip().splitlines()[0].split()) if task.strip() else "engram task"
    if len(words) <= SUBJECT_CHARS:
        return words
    cut = words[: SUBJECT_CHARS - 1].rsplit(" ", 1)[0] or words[: SUBJECT_CHARS - 1]
    return cut.rstrip(" ,;:.") + "…"


def commit_message(
    task: str, files: Sequence[str], tests: str, commands: Sequence[str] = ()
) -> str:
    """Return the message: the task as subject, then the files and the checks' outcome."""
    ran = f" ({', '.join(commands)})" if commands else ""
    outcome = {"passed": "passed", "failed": "failed", "not-run": "not run"}.get(tests, tests)
    listed = "\n".join(f"- {path}" for path in files)
    return f"{_subject(task)}\n\nFiles changed:\n{listed}\n\nTests: {outcome}{ran}\n"


def _committable(paths: Sequence[str]) -> list[str]:
    return sorted({p for p in paths if p and not is_protected_or_secret(p)})


def _listed(root: Path, *args: str, paths: Sequence[str]) -> list[str]:
    specs = [f":(literal){p}" for p in paths]
    out = _git(root, *args, "-z", "--", *specs).stdout
    return [p for p in out.split("\0") if p]


def commit_task(
    root: Path, task: str, paths: Sequence[str], tests: str, commands: Sequence[str] = ()
) -> TaskCommit | None:
    """Commit ``paths`` (project-relative) as the task left them; None when none changed.

    Secrets files and ``.git``/``.engram`` paths are never committed, nor ignored files.

    Raises:
        CommitRefusedError: See ``current_branch``; or git refused (a hook, no identity).
    """
    branch = current_branch(root)
    wanted = _committable(paths)
    if not wanted:
        return None
    _refuse_hook_changes(root, wanted)
    new = _listed(root, "ls-files", "--others", "--exclude-standard", paths=wanted)
    known = set(new) | set(_listed(root, "ls-files", paths=wanted))
    files = [p for p in wanted if p in known]
    if new:
        _git(root, "add", "--intent-to-add", "--", *(f":(literal){p}" for p in new))
    changed = (
        _listed(root, "diff", "--name-only", "--relative", "HEAD", paths=files)
        if _git(root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0
        else files
    )
    files = [p for p in files if p in set(changed)]
    if not files:
        return None
    message = commit_message(task, files, tests, commands)
    done = _git(
        root,
        "commit",
        "--only",
        "--quiet",
        "--no-edit",
        "-F",
        "-",
        "--",
        *(f":(literal){p}" for p in files),
        data=message,
        hooks=True,  # the user's own hooks run, with the scrubbed environment
    )
    if done.returncode != 0:
        if new:
            _git(root, "reset", "--quiet", "--", *(f":(literal){p}" for p in new))
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise CommitRefusedError(
            f"git refused the commit: {' '.join(detail[-3:])}",
            hint="fix the cause (a hook, user.name/user.email) and commit the files yourself",
        )
    sha = _git(root, "rev-parse", "HEAD").stdout.strip()
    return TaskCommit(sha, branch, message.splitlines()[0], tuple(files))
