"""Approval of file edits and commands: the policies, the proposal shown, the answers understood."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from langgraph.types import interrupt

from engram.graph._errors import ToolError
from engram.graph._state_values import ActionReview
from engram.graph.tools._command import COMMAND_TOOL_NAME
from engram.graph.tools._mcp import is_mcp_tool, mcp_call_target
from engram.graph.tools._text_edits import render_diff
from engram.graph.tools._write import EDIT_TOOL_NAMES, PlannedFiles, plan_edit
from engram.stores import StoreError

ReviewAction = Literal["approve", "reject", "edit", "approve_all"]
"""What a review can decide."""
T = TypeVar("T")
"""What ``ask_human``'s parser makes of an answer."""

ActionKind = Literal["edit", "command", "mcp"]
ACTION_KINDS: dict[str, ActionKind] = {
    **{name: "edit" for name in EDIT_TOOL_NAMES},
    COMMAND_TOOL_NAME: "command",
}
"""Tools that change something, by the kind of approval they need (MCP tools: ``action_kind``)."""
ANSWERS = ("approve", "reject", "edit", "approve_all")
_SYNONYMS: dict[str, ReviewAction] = {
    "approve": "approve",
    "approved": "approve",
    "yes": "approve",
    "y": "approve",
    "ok": "approve",
    "reject": "reject",
    "rejected": "reject",
    "no": "reject",
    "n": "reject",
    "deny": "reject",
    "edit": "edit",
    "e": "edit",
    "approve_all": "approve_all",
    "approve-all": "approve_all",
    "all": "approve_all",
    "always": "approve_all",
    "a": "approve_all",
}
SHELL_OPERATORS = re.compile(r"[;&|`<>\n\r]|\$\(")
"""Command text that chains, pipes, substitutes or redirects: never matched by the allowlist."""
PROPOSAL_DIFF_CHARS = 20_000
"""Characters of a proposed diff put in the approval request."""


def action_kind(name: str) -> ActionKind | None:
    """Return the approval kind of a tool call, or None for a read-only tool.

    An MCP server's tool may do anything its server does, so each call is an ``mcp`` action.
    """
    if name in ACTION_KINDS:
        return ACTION_KINDS[name]
    return "mcp" if is_mcp_tool(name) else None


def command_allowed(command: str, patterns: Iterable[str], root: Path | None = None) -> bool:
    """Return True when ``command`` matches an allowlist glob and stays inside the project.

    ``pytest*`` allows ``pytest -q tests/`` but not ``pytest; rm -rf ~``: a command with shell
    operators (``; & | ` $( < >``) always asks, and so does one with an argument that names a
    path outside ``root`` (absolute, ``~``, ``..``, ``$VAR``, or a flag's value such as
    ``--basetemp=/tmp/x`` or ``-o cache_dir=/abs``).
    """
    text = command.strip()
    if not text or SHELL_OPERATORS.search(text):
        return False
    if root is not None and reaches_outside(text, root):
        return False
    return any(fnmatch.fnmatchcase(text, pattern.strip()) for pattern in patterns)


def reaches_outside(command: str, root: Path) -> bool:
    """Return True when an argument of ``command`` names a path outside ``root`` (or may)."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: cannot tell, so it asks
        return True
    program_seen = False
    for word in words:
        assignment = _ASSIGNMENT.match(word)
        if not program_seen and not assignment:
            program_seen = True  # the program itself may live anywhere (it is only run)
            continue
        for value in {word, word.rsplit("=", 1)[-1]}:
            if _outside(value, root):
                return True
    return False


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _outside(value: str, root: Path) -> bool:
    if not value or value.startswith("-") and "=" not in value:
        return False
    if value.startswith(("~", "$")) or "$" in value:
        return True
    if not (value.startswith("/") or ".." in Path(value).parts):
        return False
    target = Path(os.path.normpath(value if value.startswith("/") else root / value))
    return not target.is_relative_to(root)


def needs_approval(
    kind: ActionKind,
    *,
    policy: str,
    high_risk: bool,
    approved_kinds: Iterable[str],
    command: str = "",
    allow: Iterable[str] = (),
    mcp_tool: str = "",
    mcp_allow: Iterable[str] = (),
    root: Path | None = None,
) -> bool:
    """Decide whether an action waits for a human.

    Approving a kind for the session always holds; then a high-risk task asks for everything;
    ``yolo`` asks for nothing; allowlisted commands and MCP tools (``server__tool`` globs)
    pass (a command only while it stays inside ``root``); ``auto-edit`` lets edits pass and
    ``ask`` asks for the rest.
    """
    if kind in set(approved_kinds):
        return False
    if high_risk:
        return True
    if policy == "yolo":
        return False
    if kind == "command":
        return not command_allowed(command, allow, root)
    if kind == "mcp":
        return not any(fnmatch.fnmatchcase(mcp_tool, p.strip()) for p in mcp_allow)
    return policy != "auto-edit"


def propose(files: PlannedFiles, call: Mapping[str, Any]) -> dict[str, Any]:
    """Return what an action would do: the diff of an edit, or the command line.

    An edit that cannot be carried out gets ``error`` instead of a diff (there is nothing to
    approve: the tool reports the error when it runs).
    """
    name = str(call["name"])
    args = dict(call.get("args") or {})
    proposal: dict[str, Any] = {
        "tool": name,
        "category": action_kind(name),
        "call_id": str(call.get("id") or ""),
        "args": args,
    }
    if is_mcp_tool(name):
        proposal["mcp_tool"] = mcp_call_target(name, args)
        return proposal
    if name == COMMAND_TOOL_NAME:
        proposal["command"] = str(args.get("command", ""))
        return proposal
    try:
        changes = plan_edit(files, name, args)
    except (ToolError, StoreError, OSError, KeyError) as exc:
        proposal["error"] = str(exc)
        return proposal
    diff = render_diff(changes)
    if len(diff) > PROPOSAL_DIFF_CHARS:
        diff = diff[:PROPOSAL_DIFF_CHARS] + f"\n[… diff cut at {PROPOSAL_DIFF_CHARS:,} chars]"
    proposal["files"] = list(dict.fromkeys(c.path for c in changes))
    proposal["diff"] = diff
    return proposal


def parse_review(answer: Any) -> ActionReview:
    """Normalize a resume value into ``{"action", "reason", "args"}``.

    Accepts ``{"action": "approve" | "reject" | "edit" | "approve_all", "reason": ...,
    "args": {...}}``, a bare word ("y", "no", "always", …), ``True``/``False``, or other text,
    which rejects with that text as the reason.

    Raises:
        ValueError: An unknown action in a mapping, or an edit without new arguments.
    """
    reason = ""
    args: dict[str, Any] = {}
    if isinstance(answer, Mapping):
        raw = str(answer.get("action", "")).strip().lower()
        action = _SYNONYMS.get(raw)
        if action is None:
            raise ValueError(f"unknown action {raw!r}; use one of {', '.join(ANSWERS)}")
        reason = str(answer.get("reason") or "").strip()
        edited = answer.get("args")
        args = dict(edited) if isinstance(edited, Mapping) else {}
    elif isinstance(answer, bool):
        action = "approve" if answer else "reject"
    else:
        text = str(answer or "").strip()
        action = _SYNONYMS.get(text.lower(), "reject")
        reason = "" if text.lower() in _SYNONYMS else text
    if action == "edit" and not args:
        raise ValueError("edit needs the new arguments: {'action': 'edit', 'args': {...}}")
    return {"action": action, "reason": reason, "args": args}


QUESTIONS = {
    "edit": "Apply this change?",
    "command": "Run this command?",
    "mcp": "Call this MCP server tool?",
}


def approval_request(
    proposal: dict[str, Any], policy: str, high_risk: bool, *, sandbox: str = ""
) -> dict[str, Any]:
    """Return the interrupt payload for one proposed action.

    ``sandbox`` says what a command or an MCP server would run in (``Sandbox.label``).
    """
    where = {"sandbox": sandbox} if sandbox and proposal["category"] in ("command", "mcp") else {}
    return {
        "kind": "approve_action",
        "question": QUESTIONS[proposal["category"]],
        **proposal,
        **where,
        "policy": policy,
        "high_risk": high_risk,
        "actions": list(ANSWERS),
        "resume_format": {
            "action": " | ".join(ANSWERS),
            "reason": "why (for reject)",
            "args": "new tool arguments (for edit)",
        },
    }


def ask_human(request: dict[str, Any], parse: Callable[[Any], T]) -> T:
    """Ask with a LangGraph ``interrupt`` until ``parse`` understands the answer."""
    while True:
        try:
            return parse(interrupt(request))
        except ValueError as exc:
            # Ask again, saying what was wrong; earlier answers replay in order on resume.
            request = {**request, "error": str(exc)}
