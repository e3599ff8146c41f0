"""A session saved by engram 0.1.0 (before the move to ``engram.…`` import names) still loads.

The fixture was written by ``tests/fixtures/checkpoints/make_fixture.py`` run against the 0.1.0
release: one finished task in which the model called ``grep_code`` and ``read_file``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.test_agent_loop import engram_env, run_engram
from tests.support.openai_stub import OpenAIStub, history_problems

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoints" / "session-0.1.sqlite"


@pytest.fixture
def old_home(engram_home: Path) -> Path:
    shutil.copy(FIXTURE, engram_home / "checkpoints.sqlite")
    return engram_home


def test_a_session_saved_by_the_previous_release_lists_shows_and_continues(
    old_home: Path, tmp_path: Path
) -> None:
    env = engram_env()
    listed = run_engram(["sessions", "list", "--all", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    assert [row["thread_id"] for row in json.loads(listed.stdout)] == ["old-session"]

    shown = run_engram(["sessions", "show", "old-session", "--json", "--path", str(tmp_path)], env)
    assert shown.returncode == 0, shown.stderr
    messages = json.loads(shown.stdout)["messages"]
    assert [m["role"] for m in messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert "backoff_delay" in messages[-1]["content"]

    def answer(body: dict) -> dict:
        problems = history_problems(body.get("messages") or [])
        return {"content": "still fine" if not problems else f"broken: {problems}"}

    with OpenAIStub(answer) as stub:
        env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=stub.base_url)
        done = run_engram(
            [
                "run",
                "And where is it called?",
                "--path",
                str(tmp_path),
                "--thread",
                "old-session",
                "--json",
            ],
            env,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "still fine"
