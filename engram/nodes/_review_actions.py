"""Node ``review_actions``: ask a human before each edit, command or MCP call the policy holds."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from engram.graph import (
    ActionReview,
    Context,
    Deps,
    State,
    StateUpdate,
    project_settings,
    sandbox_label,
)
from engram.graph.profile import is_high_risk
from engram.graph.tools import (
    PlannedFiles,
    action_kind,
    approval_request,
    ask_human,
    malformed_reason,
    needs_approval,
    parse_review,
    propose,
)
from engram.stores.project import ProjectSettings, SettingsError


def review_actions(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Decide every edit and command of the last assistant message, asking where needed.

    Each question is a LangGraph ``interrupt`` carrying the diff or the command; resume with
    ``Command(resume={"action": "approve" | "reject" | "edit" | "approve_all", "reason": ...,
    "args": {...}})``. Edits are previewed in order, each seeing the ones approved before it.
    The node only decides (it changes nothing), so replaying it on resume is harmless.
    """
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage):
        raise ValueError("review_actions was reached without pending tool calls")
    context = runtime.context
    notes: list[str] = []
    try:
        settings = project_settings(context)
    except SettingsError as exc:
        settings = ProjectSettings()
        notes.append(f"{exc}; no command or MCP tool is allowlisted until it is fixed")
    high_risk = is_high_risk(state.task_profile)
    approved = list(state.approved_kinds)
    files = PlannedFiles(context.project_path)
    reviews: dict[str, ActionReview] = {}
    for call in last.tool_calls:
        kind = action_kind(call["name"])
        if kind is None or malformed_reason(last, str(call["id"])) is not None:
            continue  # not an action, or one that will not run: its arguments were unreadable
        before = dict(files.pending)
        proposal = propose(files, dict(call))
        asks = "error" not in proposal and needs_approval(
            kind,
            policy=context.policy,
            high_risk=high_risk,
            approved_kinds=approved,
            command=str(proposal.get("command", "")),
            allow=settings.allow_commands,
            mcp_tool=str(proposal.get("mcp_tool", "")),
            mcp_allow=settings.allow_mcp,
            root=context.project_path,
        )
        if not asks:
            reviews[str(call["id"])] = {"action": "approve", "reason": "", "args": {}, "auto": True}
            continue
        review = ask_human(
            approval_request(proposal, context.policy, high_risk, sandbox=sandbox_label(context)),
            parse_review,
        )
        reviews[str(call["id"])] = review
        if review["action"] == "approve_all" and kind not in approved:
            approved.append(kind)
        if review["action"] in ("reject", "edit"):
            files.pending = before
        if review["action"] == "edit":
            propose(files, {**call, "args": {**call["args"], **review["args"]}})
    return {
        "action_reviews": reviews,
        "approved_kinds": [k for k in approved if k not in state.approved_kinds],
        "notes": notes,
    }
