"""High-risk tasks through `engram run`: the terminal confirmation round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")
RISKY = "Drop the legacy sessions table in the production database with a migration"


def _run(project: Path, home: Path, base_url: str, *args: str, answer: str | None = None):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    env.update(
        {
            "ENGRAM_HOME": str(home),
            "ENGRAM_MODEL": "stub-model",
            "OPENAI_API_KEY": "x",
            "ENGRAM_BASE_URL": base_url,
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    return subprocess.run(
        [ENGRAM, "run", "--path", str(project), *args, RISKY],
        input=answer,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "migrations.py").write_text("def drop_sessions(db):\n    db.drop('sessions')\n")
    return root


def test_approve_reject_constrain_and_yes(project: Path, engram_home: Path):
    with OpenAIStub(lambda body: {"content": "migration written"}) as stub:
        rejected = _run(project, engram_home, stub.base_url, answer="reject\n")
        assert rejected.returncode == 3, rejected.stderr  # the rejected task: blocked
        assert "confirmation needed" in rejected.stderr and "risk high" in rejected.stderr
        assert "task: " in rejected.stderr and "{'" not in rejected.stderr  # read, not a repr
        assert "['" not in rejected.stderr and "resume_format" not in rejected.stderr
        assert "migration written" not in rejected.stdout
        assert stub.requests == []

        approved = _run(project, engram_home, stub.base_url, answer="approve\n")
        assert approved.returncode == 0, approved.stderr
        assert "migration written" in approved.stdout
        assert len(stub.requests) == 1

        constrained = _run(
            project,
            engram_home,
            stub.base_url,
            answer="constrain\nkeep a backup of the table first\n",
        )
        assert "migration written" in constrained.stdout
        sent = json.dumps(stub.requests[-1]["messages"])
        assert "keep a backup of the table first" in sent

        scripted = _run(project, engram_home, stub.base_url, "--yes")
        assert "confirmation needed" not in scripted.stderr
        assert "migration written" in scripted.stdout

        no_terminal = _run(project, engram_home, stub.base_url, answer="")
        assert "rerun with --yes" in no_terminal.stderr
        assert "Traceback" not in no_terminal.stderr
