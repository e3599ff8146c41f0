"""Node ``load_rules``: start a user turn and put the rules files into the stable system prompt."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    ConfigError,
    Context,
    Deps,
    State,
    StateUpdate,
    project_is_trusted,
    render_system_prompt,
    untrusted_note,
)
from engram.graph.compaction import close_unanswered_calls, commit_messages
from engram.nodes._support import current_thread_id
from engram.stores import Ledger
from engram.stores.project import join_note, load_rules_files
from engram.stores.sqlite import database_url


def latest_user_text(state: State) -> str:
    """Return the text of the last human message (the current request)."""
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage):
            content = message.content
            if isinstance(content, str):
                return content
            return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _join_note(context: Context) -> str:
    """On a team database, say once that an unjoined clone keeps its memory to itself."""
    if not database_url():
        return ""
    try:
        folder = context.state.make()
    except OSError:
        return ""
    return join_note(context.project_path, context.home_path, folder)


def load_rules(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Read the rules hierarchy, build the system prompt and reset the per-turn fields.

    Settings a turn cannot run with (a project folder that does not exist, a value out of
    range) end the turn here: the reason goes into ``error``, ``notes`` and a reply.
    """
    context = runtime.context
    try:
        context.check_runnable()
    except ConfigError as exc:
        reason = f"{exc}. To fix: {exc.hint}." if exc.hint else f"{exc}."
        return {
            "task": latest_user_text(state),
            "error": reason,
            "notes": [reason],
            "messages": [AIMessage(content=f"Stopped before starting: {reason}")],
        }
    trusted = project_is_trusted(context)
    rules = load_rules_files(context.project_path, context.home_path, project_rules=trusted)
    notes = [] if trusted else [untrusted_note(context)]
    notes += [note for note in (context.state.legacy_note(), _join_note(context)) if note]
    if rules.truncated:
        notes.append(
            f"rules files total {rules.total_chars} characters; only the first "
            f"{sum(f.included_chars for f in rules.files)} fit the rules budget"
        )
    update: StateUpdate = {}
    history: list[BaseMessage] = list(state.messages)
    # A new request after a fork or replay at a pending tool step would leave those calls
    # unanswered, and the endpoint would refuse the whole history: close them first.
    repair = close_unanswered_calls(history)
    if repair is not None:
        history = repair.messages
        update["messages"] = commit_messages(history)
        notes.append(repair.note())
    # Messages can also enter through ``update_state`` (API, Studio) without any node running;
    # the ledger records every version it has not seen yet when the next turn starts.
    if history:
        Ledger.for_project(context.project_path, context.home_path).append_messages(
            current_thread_id(), history
        )
    return {
        **update,
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
        "blocked": None,
        "verification": {},
        "related_symbols": None,
        "memory_block": "",
        "context_pack": {},
        "error": "",
    }
