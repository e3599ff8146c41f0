"""Run one tool call with a time limit, so no tool can hang a run or an MCP server."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from engram.graph._errors import ToolError

T = TypeVar("T")


class ToolTimeoutError(ToolError, TimeoutError):
    """A tool call ran longer than its time limit."""

    hint = "narrow the request: a smaller line range, a more specific pattern or glob"


def _settle(future: asyncio.Future[Any], value: Any, failed: bool) -> None:
    if future.done():  # the caller already gave up on it
        return
    if failed:
        future.set_exception(value)
    else:
        future.set_result(value)


async def call_with_timeout(name: str, func: Callable[[], T], timeout_s: float) -> T:
    """Run the blocking ``func`` in a daemon thread and wait at most ``timeout_s`` for it.

    A daemon thread rather than the loop's executor: a call stuck in the kernel cannot be
    cancelled, and a daemon thread does not keep the process from exiting afterwards. The
    caller's context variables (LangGraph's run config) travel with the call.

    Raises:
        ToolTimeoutError: ``func`` did not return within ``timeout_s`` seconds.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        outcome: object
        try:
            outcome, failed = context.run(func), False
        except BaseException as exc:  # handed to the awaiting caller, which re-raises it
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(_settle, future, outcome, failed)
        except RuntimeError:  # the loop closed after the caller timed out
            return

    threading.Thread(target=work, name=f"tool-{name}", daemon=True).start()
    try:
        return await asyncio.wait_for(future, timeout_s)
    except TimeoutError:
        raise ToolTimeoutError(f"{name} did not finish within {timeout_s:g} s") from None
