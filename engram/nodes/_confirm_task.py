"""Node ``confirm_task``: ask a human to approve, reject or constrain a high-risk task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from engram.graph import ApprovalValue, Context, Deps, State, StateUpdate
from engram.nodes._support import record_event

ACTIONS = ("approve", "reject", "constrain")
_SYNONYMS = {
    "approve": "approve",
    "approved": "approve",
    "yes": "approve",
    "y": "approve",
    "ok": "approve",
    "go": "approve",
    "continue": "approve",
    "reject": "reject",
    "rejected": "reject",
    "no": "reject",
    "n": "reject",
    "stop": "reject",
    "abort": "reject",
    "cancel": "reject",
    "constrain": "constrain",
    "constraints": "constrain",
    "c": "constrain",
}
REJECTED_REPLY = "Stopped before acting: the task was rejected at the high-risk confirmation."


def confirmation_request(state: State) -> dict[str, Any]:
    """Return the interrupt payload: the task, its profile and the injected warnings."""
    injected = state.memory_report.get("experience", {}).get("injected", [])
    return {
        "kind": "confirm_task",
        "question": "This task is graded high risk. Approve, reject, or add constraints?",
        "task": state.task,
        "profile": state.task_profile,
        "warnings": [i for i in injected if i.get("kind") in {"pattern", "episode"}],
        "injected": injected,
        "memory_block": state.memory_block,
        "actions": list(ACTIONS),
        "resume_format": {"action": "approve | reject | constrain", "constraints": "text"},
    }


def parse_decision(answer: Any) -> dict[str, Any]:
    """Normalize a resume value into ``{"action", "approved", "constraints"}``.

    Accepts ``{"action": ..., "constraints": ...}``, a bare action word ("approve", "y",
    "reject", …), or free text, which is taken as constraints.

    Raises:
        ValueError: The value names an unknown action or constrains with no text.
    """
    constraints = ""
    if isinstance(answer, Mapping):
        raw = str(answer.get("action", "")).strip().lower()
        constraints = str(answer.get("constraints") or "").strip()
        action = _SYNONYMS.get(raw) if raw else ("constrain" if constraints else None)
        if action is None:
            raise ValueError(f"unknown action {raw!r}; use one of {', '.join(ACTIONS)}")
    elif isinstance(answer, bool):
        action = "approve" if answer else "reject"
    else:
        text = str(answer or "").strip()
        action = _SYNONYMS.get(text.lower(), "constrain")
        constraints = "" if text.lower() in _SYNONYMS else text
    if action == "constrain" and not constraints:
        raise ValueError("constrain needs the constraints text")
    if action == "approve" and constraints:
        action = "constrain"
    return {"action": action, "approved": action != "reject", "constraints": constraints}


async def confirm_task(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Pause the run with a LangGraph ``interrupt`` until a human decides.

    Resume with ``Command(resume={"action": "approve" | "reject" | "constrain",
    "constraints": "..."})``. Rejection records the decision and a short reply (the
    router then ends the turn); constraints are appended to the memory block so the model
    sees them with the task. An answer that cannot be understood is asked again with the
    reason. ``auto_approve`` skips the question.
    """
    if runtime.context.auto_approve:
        approval: ApprovalValue = {
            "action": "approve",
            "approved": True,
            "constraints": "",
            "auto": True,
        }
        await record_event(runtime.context, "approval", {**approval, "task": state.task})
        return {"approval": approval}
    request = confirmation_request(state)
    while True:
        try:
            decision = parse_decision(interrupt(request))
            break
        except ValueError as exc:
            # Ask again, saying what was wrong; earlier answers replay in order on resume.
            request = {**request, "error": str(exc)}
    await record_event(runtime.context, "approval", {**decision, "task": state.task})
    update: StateUpdate = {"approval": cast(ApprovalValue, decision)}
    if decision["action"] == "reject":
        update["messages"] = [AIMessage(content=REJECTED_REPLY)]
        update["blocked"] = [{"tool": "confirm_task", "reason": "the high-risk task was rejected"}]
    elif decision["action"] == "constrain":
        extra = f"[Constraints from the user for this task]\n{decision['constraints']}"
        update["memory_block"] = f"{state.memory_block}\n\n{extra}".strip()
    return update
