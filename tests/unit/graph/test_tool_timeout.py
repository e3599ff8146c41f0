"""Every tool call has a time limit; a stuck call becomes a clear tool error."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from langchain_core.tools import StructuredTool

from engram.graph.tools import call_with_timeout
from engram.graph.tools._timeout import ToolTimeoutError
from engram.nodes._run_tools import _run_one


def test_a_stuck_call_times_out_quickly_and_leaves_no_blocking_thread():
    release = threading.Event()
    started = time.perf_counter()
    with pytest.raises(ToolTimeoutError, match="read_file did not finish within 0.2 s"):
        asyncio.run(call_with_timeout("read_file", release.wait, 0.2))
    assert time.perf_counter() - started < 5
    stuck = [t for t in threading.enumerate() if t.name == "tool-read_file"]
    assert stuck and all(t.daemon for t in stuck)  # cannot keep the process alive
    release.set()


def test_results_and_errors_pass_through():
    assert asyncio.run(call_with_timeout("t", lambda: 42, 5)) == 42
    with pytest.raises(ValueError, match="bad"):
        asyncio.run(call_with_timeout("t", lambda: int("bad"), 5))


def test_run_tools_reports_a_timeout_to_the_model():
    release = threading.Event()

    def slow(path: str) -> str:
        """Wait until released."""
        release.wait()
        return path

    tool = StructuredTool.from_function(func=slow, name="slow")
    outcome = asyncio.run(
        _run_one(tool, {"name": "slow", "args": {"path": "x"}, "id": "c1"}, None, 0.2)
    )
    release.set()
    assert outcome.failed
    assert "slow did not finish within 0.2 s" in outcome.text
    assert "hint: narrow the request" in outcome.text
