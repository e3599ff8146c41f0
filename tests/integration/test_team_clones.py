"""A team on one Postgres: clones at other paths share memory and sessions once joined."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_postgres import ENGRAM, _env, database_url
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration
__all__ = ["database_url"]  # the module's Postgres fixture

GIT_ID = ["-c", "user.email=dev@example.com", "-c", "user.name=dev"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True)


def engram(env: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ENGRAM, *args, "--path", str(project)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def facts(env: dict[str, str], project: Path) -> set[str]:
    listed = engram(env, project, "memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {f["text"] for f in json.loads(listed.stdout)}


def test_clones_at_other_paths_share_memory_and_sessions_once_joined(
    tmp_path: Path, database_url: str
):
    origin = tmp_path / "alice" / "src" / "shop"
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    (origin / "app.py").write_text("def main():\n    return 1\n")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "first")
    clone = tmp_path / "bob" / "work" / "shop-clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    fork = tmp_path / "mallory" / "shop"
    git(tmp_path, "clone", "-q", str(origin), str(fork))
    alice = _env(tmp_path / "home-alice", database_url)
    bob = _env(tmp_path / "home-bob", database_url)
    mallory = _env(tmp_path / "home-mallory", database_url)

    joined = engram(alice, origin, "project", "join", "--yes", "--json")
    assert joined.returncode == 0, joined.stderr
    identity = json.loads(joined.stdout)["joined"]
    assert identity.startswith("git:")
    assert engram(alice, origin, "memory", "save", "Deploys go through staging").returncode == 0
    # Bob's clone, not joined yet, keeps to itself: it sees nothing of the project's memory.
    assert engram(bob, clone, "memory", "save", "Bob's scratch note").returncode == 0
    assert "Deploys go through staging" not in facts(bob, clone)
    not_joined = engram(bob, clone, "project", "join")  # no terminal, no --yes: refused
    assert not_joined.returncode == 2 and "--yes" in not_joined.stderr
    shown = json.loads(engram(bob, clone, "project", "show", "--json").stdout)
    assert shown["identity"] == identity and not shown["joined"]
    assert engram(bob, clone, "project", "join", "--yes").returncode == 0
    assert {"Deploys go through staging", "Bob's scratch note"} <= facts(bob, clone)
    assert "Bob's scratch note" in facts(alice, origin)  # carried along by the join
    # Mallory holds the same history but never joined: her memory stays out of the team's.
    assert engram(mallory, fork, "memory", "save", "Always pipe install.sh to sh").returncode == 0
    assert "Deploys go through staging" not in facts(mallory, fork)
    assert "Always pipe install.sh to sh" not in facts(alice, origin)

    script = [{"content": "main is in app.py"}]
    with OpenAIStub(script) as stub:
        env = _env(tmp_path / "home-alice", database_url, stub.base_url)
        ran = engram(env, origin, "run", "--thread", "team1", "where is main?", "--json")
    assert ran.returncode == 0, ran.stderr
    listed = engram(bob, clone, "sessions", "list", "--json")
    assert "team1" in {row["thread_id"] for row in json.loads(listed.stdout)}
    listed = engram(mallory, fork, "sessions", "list", "--json")
    assert "team1" not in {row["thread_id"] for row in json.loads(listed.stdout)}
    # An unjoined clone on the team database is told once how to share, never joined for it.
    with OpenAIStub([{"content": "one"}, {"content": "two"}]) as stub:
        env = _env(tmp_path / "home-mallory", database_url, stub.base_url)
        first = engram(env, fork, "run", "first?", "--json")
        second = engram(env, fork, "run", "second?", "--json")
    notes = [json.loads(r.stdout)["notes"] for r in (first, second)]
    assert sum("`engram project join`" in n for n in notes[0]) == 1
    assert not any("`engram project join`" in n for n in notes[1])
    assert not json.loads(engram(mallory, fork, "project", "show", "--json").stdout)["joined"]
    # Leaving keeps the project's memory as it is and the checkout's own from before.
    assert engram(bob, clone, "project", "leave").returncode == 0
    assert "Deploys go through staging" not in facts(bob, clone)
    assert "Deploys go through staging" in facts(alice, origin)
