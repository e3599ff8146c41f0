"""Node ``load_rules``: start a user turn and put the rules files into the stable system prompt."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.prompts import render_system_prompt
from engram.graph.state import State
from engram.nodes.node_support import record_messages
from engram.stores.rules import load_rules_files

__all__ = ["latest_user_text", "load_rules"]


def latest_user_text(state: State) -> str:
    """Return the text of the last human message (the current request)."""
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage):
            content = message.content
            if isinstance(content, str):
                return content
            return " ".join(
                part.get("text", "") for part in content if isinstance(part, dict)
            )
    return ""


async def load_rules(state: State, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Read the rules hierarchy, build the system prompt and reset the per-turn fields."""
    context = runtime.context
    rules = load_rules_files(context.project_path, context.home_path)
    notes = []
    if rules.truncated:
        notes.append(
            f"rules files total {rules.total_chars} characters; only the first "
            f"{sum(f.included_chars for f in rules.files)} fit the rules budget"
        )
    if state.messages and isinstance(state.messages[-1], HumanMessage):
        await record_messages(context, [state.messages[-1]])
    return {
        "task": latest_user_text(state),
        "system_prompt": render_system_prompt(rules.text, rules.truncated),
        "rules_report": {
            "files": [f.__dict__ for f in rules.files],
            "truncated": rules.truncated,
            "total_chars": rules.total_chars,
        },
        "notes": notes,
        "steps": 0,
        "tool_errors": 0,
        "outcome": "",
        "code_hits": None,
        "degraded_branches": None,
        "files_changed": None,
        "verification": {},
        "related_symbols": None,
        "memory_block": "",
        "context_pack": {},
    }
