"""`engram chat` driven through its standard input against the OpenAI-compatible stub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")


def _env(home: Path, base_url: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    env.update(
        {
            "ENGRAM_HOME": str(home),
            "ENGRAM_MODEL": "stub-model",
            "ENGRAM_BASE_URL": base_url,
            "OPENAI_API_KEY": "x",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    return env


def _chat(
    project: Path, home: Path, stub: OpenAIStub, thread: str, lines: list[str]
) -> subprocess.CompletedProcess[str]:
    """Run ``engram chat`` on ``project`` typing ``lines``, one per line."""
    return subprocess.run(
        [ENGRAM, "chat", "--path", str(project), "--thread", thread],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=240,
        env=_env(home, stub.base_url),
    )


def test_chat_turns_and_slash_commands(tmp_path: Path, engram_home: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    return 'hello'\n")
    script = [
        {"tool_calls": [{"name": "grep_code", "args": {"pattern": "def main"}}]},
        {"content": "main is in app.py"},
        {"content": "second answer"},
    ]
    lines = [
        "where is main?",
        "/status",
        "/save This project uses pytest 8 for tests",
        "/memory list",
        "and now?",
        "/compact",
        "/good",
        "/exit",
    ]
    with OpenAIStub(script) as stub:
        done = _chat(project, engram_home, stub, "c1", lines)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "main is in app.py" in out and "second answer" in out
    assert "cache hits" in out and "history" in out and "tool_results" in out
    assert "uses pytest 8" in out
    assert "compaction committed" in out or "compaction rolled_back" in out
    assert "Traceback" not in out
    # The second turn's request carries the first turn whole; the fact was saved for real.
    second_turn = json.dumps(stub.requests[2]["messages"])
    assert "where is main?" in second_turn and "and now?" in second_turn
    # /compact asked the model for a summary (the scripted replies lack the four sections,
    # so the extractive summary was used instead).
    assert len(stub.requests) > 3
    listed = subprocess.run(
        [ENGRAM, "memory", "list", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(engram_home, stub.base_url),
    )
    facts = json.loads(listed.stdout)
    assert any("pytest 8" in fact["text"] for fact in facts)
    shown = subprocess.run(
        [ENGRAM, "sessions", "show", "c1", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(engram_home, stub.base_url),
    )
    session = json.loads(shown.stdout)
    assert [m["role"] for m in session["messages"]] == ["human", "ai", "tool", "ai", "human", "ai"]
    ledger = state_of(project, engram_home).path("ledger", "c1.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in ledger]
    manual = [e for e in events if e["kind"] == "compaction" and e.get("trigger") == "manual"]
    # Two short turns cannot shrink by the minimum fraction: the original history is kept.
    assert manual and manual[0]["status"] == "rolled_back"


def test_a_failed_turn_is_reported_and_the_chat_goes_on(tmp_path: Path, engram_home: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    unreadable = {"tool_calls": [{"name": "read_file", "raw_arguments": "[1, 2]"}]}
    script = [unreadable, unreadable, {"content": "went on"}]
    with OpenAIStub(script) as stub:
        done = _chat(project, engram_home, stub, "c2", ["first line", "second line", "/exit"])
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "two replies of the model in a row could not be read" in out
    assert "type the next line to go on" in out and "went on" in out
    assert "Traceback" not in out
    assert "first line" in json.dumps(stub.requests[2]["messages"])  # the session kept it
