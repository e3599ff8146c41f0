"""``engram run`` in a subprocess against a real OpenAI-compatible HTTP server.

The server is scripted to ask for ``grep_code``, then ``read_file``, then to answer; the
assertions are on the request bodies it received, on what ``engram run`` printed, and on how
the command fails when the model is missing, misconfigured or unreachable.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub, history_problems
from tests.support.state import state_of

pytestmark = pytest.mark.integration

ENGRAM = Path(sys.executable).parent / "engram"
RUN_TIMEOUT_S = 180
TASK = "Where is the retry delay of the HTTP client computed?"
ANSWER = "The delay is computed by `backoff_delay` in src/client/retry.py (line 4)."
GREP_ID = "call_grep_1"
READ_ID = "call_read_1"
WRAP_GREP = '<tool_result tool="grep_code" trust="untrusted-data">'
WRAP_READ = '<tool_result tool="read_file" trust="untrusted-data">'

# Scripted usage per step: (prompt tokens, cached prompt tokens, completion tokens).
USAGE = {"grep": (1200, 0, 30), "read": (1500, 1100, 25), "answer": (1900, 1400, 40)}


def _usage(step: str) -> dict[str, Any]:
    prompt, cached, completion = USAGE[step]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def agent_script(body: dict[str, Any]) -> dict[str, Any]:
    """Answer by where the conversation is: grep first, then read, then the final answer."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool" and last.get("tool_call_id") == GREP_ID:
        return {
            "content": "",
            "usage": _usage("read"),
            "tool_calls": [
                {"id": READ_ID, "name": "read_file", "args": {"path": "src/client/retry.py"}}
            ],
        }
    if last.get("role") == "tool" and last.get("tool_call_id") == READ_ID:
        return {"content": ANSWER, "usage": _usage("answer")}
    if last.get("role") == "user":
        return {
            "content": "",
            "usage": _usage("grep"),
            "tool_calls": [
                {"id": GREP_ID, "name": "grep_code", "args": {"pattern": "def backoff_delay"}}
            ],
        }
    return {"content": "(unexpected request)"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project with the function the scripted model looks for."""
    root = tmp_path / "project"
    (root / "src" / "client").mkdir(parents=True)
    (root / "src" / "client" / "__init__.py").write_text("", encoding="utf-8")
    (root / "src" / "client" / "retry.py").write_text(
        '"""Retry policy of the HTTP client."""\n\n\n'
        "def backoff_delay(attempt: int, base: float = 0.5) -> float:\n"
        "    return base * (2 ** attempt)\n",
        encoding="utf-8",
    )
    (root / "src" / "client" / "http.py").write_text(
        "from client.retry import backoff_delay\n\n\ndef get(url):\n    return backoff_delay(1)\n",
        encoding="utf-8",
    )
    (root / "README.md").write_text("# demo client\n", encoding="utf-8")
    return root


def engram_env(**extra: str) -> dict[str, str]:
    """The test's environment (with its own ENGRAM_HOME) plus ``extra``, wide and uncoloured."""
    env = dict(os.environ)
    env.update(
        {
            "COLUMNS": "200",
            "NO_COLOR": "1",
            "OPENAI_API_KEY": "test-key",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
        }
    )
    env.update(extra)
    return env


def run_engram(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the installed ``engram`` console script and capture its output."""
    return subprocess.run(
        [str(ENGRAM), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def agent_requests(stub: OpenAIStub) -> list[dict[str, Any]]:
    """The requests of the agent loop (those offering the project tools)."""

    def tool_names(body: dict[str, Any]) -> set[str]:
        return {t["function"]["name"] for t in body.get("tools") or []}

    return [b for b in stub.requests if "grep_code" in tool_names(b)]


def unused_port() -> int:
    """Return a local port nothing listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_run_sends_paired_wrapped_tool_results_with_a_stable_system_prompt(
    project: Path,
) -> None:
    with OpenAIStub(agent_script) as stub:
        env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=stub.base_url)
        done = run_engram(["run", TASK, "--path", str(project), "--thread", "loop", "--json"], env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert stub.rejected == []
    calls = agent_requests(stub)
    assert len(calls) == 3
    for body in calls:
        assert history_problems(body["messages"]) == []
        assert body["model"] == "stub-model"

    system = [json.dumps(b["messages"][0], sort_keys=True) for b in calls]
    assert calls[0]["messages"][0]["role"] == "system"
    assert system[0] == system[1] == system[2]
    assert "untrusted-data" in calls[0]["messages"][0]["content"]
    tools = [json.dumps(b["tools"], sort_keys=True) for b in calls]
    assert tools[0] == tools[1] == tools[2]
    for earlier, later in zip(calls, calls[1:], strict=False):
        assert later["messages"][: len(earlier["messages"])] == earlier["messages"]

    first, second, third = (b["messages"] for b in calls)
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[1]["content"].startswith(TASK)
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert [c["id"] for c in second[2]["tool_calls"]] == [GREP_ID]
    assert second[2]["tool_calls"][0]["function"]["name"] == "grep_code"
    assert second[3]["tool_call_id"] == GREP_ID
    grep_result = second[3]["content"]
    assert grep_result.startswith(WRAP_GREP)
    assert grep_result.rstrip().endswith("</tool_result>")
    assert "src/client/retry.py:4:" in grep_result
    assert [m["role"] for m in third[4:]] == ["assistant", "tool"]
    assert [c["id"] for c in third[4]["tool_calls"]] == [READ_ID]
    assert third[5]["tool_call_id"] == READ_ID
    assert third[5]["content"].startswith(WRAP_READ)
    assert "return base * (2 ** attempt)" in third[5]["content"]

    out = json.loads(done.stdout)
    assert out["thread_id"] == "loop"
    assert out["answer"] == ANSWER
    usage = out["usage"]
    assert usage["calls"] == 3
    assert usage["input"] == sum(p for p, _, _ in USAGE.values())
    assert usage["output"] == sum(c for _, _, c in USAGE.values())
    assert usage["cache_read"] == sum(h for _, h, _ in USAGE.values())


def test_run_prints_the_answer_and_a_status_line_with_cache_hits(project: Path) -> None:
    with OpenAIStub(agent_script) as stub:
        env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=stub.base_url)
        done = run_engram(["run", TASK, "--path", str(project), "--thread", "plain"], env)
    assert done.returncode == 0, done.stderr
    assert "backoff_delay" in done.stdout
    assert "src/client/retry.py" in done.stdout
    cached = sum(h for _, h, _ in USAGE.values())
    assert f"cache hits {cached:,}" in done.stderr
    assert "session plain" in done.stderr
    ledger = state_of(project).path("ledger")  # under the ENGRAM_HOME the run inherited
    assert not (project / ".engram").exists()
    text = "".join(p.read_text(encoding="utf-8") for p in ledger.rglob("*.jsonl"))
    assert GREP_ID in text and READ_ID in text


def test_run_without_a_model_says_which_variable_to_set(project: Path) -> None:
    env = engram_env()
    env.pop("ENGRAM_MODEL", None)
    done = run_engram(["run", "x", "--path", str(project)], env)
    assert done.returncode != 0
    assert "ENGRAM_MODEL" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert len(done.stderr.splitlines()) <= 6


def test_run_with_a_malformed_context_window_explains_the_value(project: Path) -> None:
    env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_CONTEXT_WINDOW="abc")
    done = run_engram(["run", "x", "--path", str(project)], env)
    assert done.returncode != 0
    assert "ENGRAM_CONTEXT_WINDOW" in done.stderr
    assert "'abc'" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_run_against_an_unreachable_endpoint_names_it_without_a_traceback(
    project: Path,
) -> None:
    base_url = f"http://127.0.0.1:{unused_port()}/v1"
    env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=base_url)
    done = run_engram(["run", "x", "--path", str(project)], env)
    assert done.returncode != 0
    assert base_url in done.stderr
    assert "ENGRAM_BASE_URL" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_run_reports_an_endpoint_error_status_without_a_traceback(project: Path) -> None:
    refuse = {"status": 401, "error": {"message": "invalid api key", "type": "auth_error"}}
    with OpenAIStub(lambda body: refuse) as stub:
        env = engram_env(ENGRAM_MODEL="stub-model", ENGRAM_BASE_URL=stub.base_url)
        done = run_engram(["run", "x", "--path", str(project)], env)
    assert done.returncode != 0
    assert stub.base_url in done.stderr
    assert "401" in done.stderr and "invalid api key" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
