"""A project's identity comes from its git history: the same for every clone, never forged."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import pytest

from engram.stores.project import (
    join_project,
    leave_project,
    memory_key,
    project_identity,
    project_key,
)

pytestmark = pytest.mark.integration

GIT_ID = ["-c", "user.email=dev@example.com", "-c", "user.name=dev"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def repository(folder: Path, first: str = "first") -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "app.py").write_text("x = 1\n")
    git(folder, "add", "app.py")
    git(folder, "commit", "-q", "-m", first)
    (folder / "app.py").write_text("x = 2\n")
    git(folder, "commit", "-q", "-am", "second")
    return folder


def test_clones_at_other_paths_and_branches_share_one_identity(tmp_path: Path):
    origin = repository(tmp_path / "origin")
    root = git(origin, "rev-list", "--max-parents=0", "HEAD")
    clone = tmp_path / "elsewhere" / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    (clone / "app.py").write_text("x = 3\n")
    git(clone, "commit", "-q", "-am", "on a branch")
    worktree = tmp_path / "worktree"
    git(origin, "worktree", "add", "-q", str(worktree))
    keys = {project_identity(p).key for p in (origin, clone, worktree)}
    assert keys == {f"git:{root}"}
    assert project_identity(origin).shared


def test_merging_another_history_keeps_the_identity(tmp_path: Path):
    origin = repository(tmp_path / "origin")
    before = project_identity(origin).key
    other = repository(tmp_path / "other", first="another project")
    git(origin, "fetch", "-q", str(other), "main:other")
    git(origin, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", "other", "-X", "ours")
    assert len(git(origin, "rev-list", "--max-parents=0", "HEAD").split()) == 2
    assert project_identity(origin).key == before


def test_a_folder_inside_a_repository_is_its_own_project(tmp_path: Path):
    origin = repository(tmp_path / "origin")
    (origin / "pkg").mkdir()
    assert project_identity(origin / "pkg").key == project_identity(origin).key + "/pkg"


@pytest.mark.parametrize("kind", ["no git", "no commit", "shallow"])
def test_without_a_whole_history_the_path_is_the_identity(tmp_path: Path, kind: str):
    project = tmp_path / "p"
    if kind == "no git":
        project.mkdir()
    elif kind == "no commit":
        project.mkdir()
        git(project, "init", "-q")
    else:
        origin = repository(tmp_path / "origin")
        git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(project))
    identity = project_identity(project)
    assert identity.source == "path" and identity.key == project_key(project)
    assert identity.note


def test_a_planted_object_under_a_known_root_name_is_not_that_project(tmp_path: Path):
    """A repository naming the victim's root commit without holding it gets its own path."""
    victim = repository(tmp_path / "victim")
    root = git(victim, "rev-list", "--max-parents=0", "HEAD")
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    git(hostile, "init", "-q", "-b", "main")
    # A parentless commit stored under the victim's root name: git does not check the hash.
    tree = git(hostile, "hash-object", "-t", "tree", "-w", "--stdin")  # the empty tree
    body = f"tree {tree}\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\nforged\n".encode()
    loose = hostile / ".git" / "objects" / root[:2] / root[2:]
    loose.parent.mkdir(parents=True, exist_ok=True)
    loose.write_bytes(zlib.compress(f"commit {len(body)}\0".encode() + body))
    (hostile / ".git" / "refs" / "heads" / "main").write_text(root + "\n")
    assert git(hostile, "rev-list", "--max-parents=0", "HEAD") == root  # git believes it
    identity = project_identity(hostile)
    assert identity.source == "path" and "hash" in identity.note


def test_memory_is_shared_only_by_a_joined_checkout(tmp_path: Path):
    home = tmp_path / "home"
    origin = repository(tmp_path / "origin")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert memory_key(clone, home) == project_key(clone)  # a fresh clone keeps to itself
    identity = join_project(clone, home)
    assert memory_key(clone, home) == identity.key
    assert memory_key(origin, home) == project_key(origin)  # joining is per checkout
    join_project(origin, home)
    assert memory_key(origin, home) == memory_key(clone, home)
    # Another repository put at the joined path does not inherit the join.
    subprocess.run(["rm", "-rf", str(clone)], check=True)
    repository(clone, first="another project")
    assert memory_key(clone, home) == project_key(clone)
    assert leave_project(origin, home) and memory_key(origin, home) == project_key(origin)
    assert not leave_project(origin, home)
