"""A cold ``engram run`` loads the project's indexes before its first turn's timed branches."""

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
BRANCH_TIMEOUT_MS = 400
"""Far below a cold index load (importing Chroma alone takes longer), far above a warm search."""


def _engram(
    project: Path, env: dict[str, str], *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ENGRAM, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("command", ["run", "chat"])
def test_first_turn_of_a_cold_session_searches_a_loaded_index(
    command: str, tmp_path: Path, engram_home: Path
):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "auth.py").write_text(
        'def check_token(token):\n    """Accept only the service token."""\n'
        "    return token == 'x'\n"
    )
    (project / "paths.py").write_text("def confine(path, root):\n    return root / path\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    env.update(
        {
            "ENGRAM_HOME": str(engram_home),
            "HF_HUB_OFFLINE": "1",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
        }
    )
    built = _engram(project, env, "index")
    assert built.returncode == 0, built.stderr
    with OpenAIStub(lambda body: {"content": "check_token is in auth.py"}) as stub:
        env.update(
            {
                "ENGRAM_MODEL": "stub-model",
                "ENGRAM_BASE_URL": stub.base_url,
                "OPENAI_API_KEY": "x",
                "ENGRAM_BRANCH_TIMEOUT_MS": str(BRANCH_TIMEOUT_MS),
            }
        )
        if command == "run":
            done = _engram(project, env, "run", "where is the service token checked", "--json")
        else:
            done = _engram(project, env, "chat", stdin="where is the service token checked\n")
    assert done.returncode == 0, done.stderr
    assert "check_token is in auth.py" in done.stdout
    if command == "run":
        notes = json.loads(done.stdout)["notes"]
        assert not [note for note in notes if "timed out" in note], notes
    assert "timed out" not in done.stderr, done.stderr
