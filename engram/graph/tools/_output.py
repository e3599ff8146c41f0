"""What a tool call returns to the model: its errors as text, large outputs spilled, all wrapped.

The graph's ``run_tools`` node and the LangChain tools offered to other agents
(``engram.api._tools``) both go through here, so a model sees the same thing from
either: expected failures become an ``error: …`` text (never an exception), outputs over the
spill limit are saved in the project's state folder under ENGRAM_HOME, and every result is
wrapped as untrusted data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engram.graph._errors import EngramError
from engram.graph.tools._project import GREP_TOOL_NAME, READ_TOOL_NAME, wrap_tool_result
from engram.stores import StoreError, redact_secrets
from engram.stores.codeindex import is_code_file
from engram.stores.files import spill_if_large
from engram.stores.project import ProjectState

TOOL_ERRORS: tuple[type[BaseException], ...] = (
    EngramError,
    StoreError,
    ValidationError,
    OSError,
    ValueError,
)
"""Failures a tool call may meet that go back to the model as text (others are bugs)."""


def tool_error_text(error: BaseException) -> str:
    """Return the text a model gets for a failed tool call, with the error's hint."""
    hint = getattr(error, "hint", "")
    return f"error: {error}" + (f"\nhint: {hint}" if hint else "")


def reads_code(tool: str, arguments: Mapping[str, Any]) -> bool:
    """Return True when a call's output is redacted as code (``redact_secrets``).

    Credentials in code are quoted literals; read as code, the lines a model must quote to
    edit them (``login(password=password)``) reach it as they are. That is ``read_file`` of
    a source file, and ``grep_code``, which has redacted each file's matching lines itself,
    among their neighbours (a source file's as code, any other's in full:
    ``redacted_matches``).
    """
    if tool == GREP_TOOL_NAME:
        return True
    path = arguments.get("path")
    return tool == READ_TOOL_NAME and isinstance(path, str) and is_code_file(path)


def deliver_tool_output(
    state: ProjectState,
    tool: str,
    call_id: str,
    raw: str,
    *,
    session: str = "default",
    code: bool = False,
) -> tuple[str, str]:
    """Return the wrapped text for the model and a note ("" unless spilling failed).

    Args:
        state: The project's state folder (under ENGRAM_HOME), which takes a large output.
        tool: Name of the tool.
        call_id: The tool call id (names the spill file).
        raw: The tool's output (or error text).
        session: The thread whose spill folder takes it (see ``stores.spill``).
        code: The output is source code (``reads_code``): redacted as code.
    """
    note = ""
    raw, _ = redact_secrets(raw, code=code)  # the model, checkpoints, ledger, spill hold none
    try:
        text = spill_if_large(state, tool, call_id, raw, session=session).text
    except OSError as exc:
        note = f"could not save a large {tool} output: {exc}"
        text = raw
    return wrap_tool_result(tool, text), note
