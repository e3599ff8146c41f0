"""The graph core: state, settings, dependencies, budgets, pack, profile, compaction, tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph._budget import (
        KEEP_RECENT_TOOL_RESULTS,
        KEEP_USER_TURNS,
        Decision,
        clear_minimum,
        decide,
        reconcile,
        summary_budget,
        thresholds,
    )
    from engram.graph._budget_request import budget_partitions, request_for
    from engram.graph._context import Context
    from engram.graph._deps import Deps, fact_memory_opener, make_default_deps
    from engram.graph._errors import (
        ConfigError,
        EngramError,
        ModelNotConfiguredError,
        ModelReplyError,
        SessionError,
    )
    from engram.graph._llm import is_context_overflow, usage_of
    from engram.graph._markers import escape_markers
    from engram.graph._node_entry import context_or_env, lazy_node_entry, node_entry, run_coroutine
    from engram.graph._project_trust import project_is_trusted, project_settings, untrusted_note
    from engram.graph._prompts import ENGRAM_AUTHOR, render_system_prompt, render_turn_context
    from engram.graph._routes import (
        LAST_NODE,
        route_after_call_model,
        route_after_check_budget,
        route_after_confirm_task,
        route_after_load_rules,
        route_after_pack_context,
        route_after_retrieve_memory,
        route_after_verify_changes,
    )
    from engram.graph._sandbox import (
        SandboxUnavailableError,
        find_sandbox,
        sandbox_for,
        sandbox_label,
    )
    from engram.graph._state import USAGE_KEYS, InputState, State, StateUpdate
    from engram.graph._state_values import (
        ActionReview,
        ApprovalValue,
        BlockedAction,
        BudgetReport,
        CodeHitValue,
        CommandRun,
        CompactionEvent,
        ContextPackValue,
        InjectedValue,
        LearnedValue,
        MemoryReport,
        PatternOutcome,
        SelectionReport,
        VerificationValue,
        code_hit_value,
        related_symbol_value,
    )
    from engram.graph._tokens import Counter, content_text, count_text, estimate_messages
    from engram.graph._turn_context import as_sent, attach_context, attached_context

__all__ = [
    "ActionReview",
    "ApprovalValue",
    "BlockedAction",
    "BudgetReport",
    "CodeHitValue",
    "CommandRun",
    "CompactionEvent",
    "ConfigError",
    "Context",
    "ContextPackValue",
    "Counter",
    "Decision",
    "Deps",
    "ENGRAM_AUTHOR",
    "EngramError",
    "InjectedValue",
    "InputState",
    "KEEP_RECENT_TOOL_RESULTS",
    "KEEP_USER_TURNS",
    "LAST_NODE",
    "LearnedValue",
    "MemoryReport",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "PatternOutcome",
    "SandboxUnavailableError",
    "SelectionReport",
    "SessionError",
    "State",
    "StateUpdate",
    "USAGE_KEYS",
    "VerificationValue",
    "as_sent",
    "attach_context",
    "attached_context",
    "budget_partitions",
    "clear_minimum",
    "code_hit_value",
    "content_text",
    "context_or_env",
    "count_text",
    "decide",
    "escape_markers",
    "estimate_messages",
    "fact_memory_opener",
    "find_sandbox",
    "is_context_overflow",
    "lazy_node_entry",
    "make_default_deps",
    "node_entry",
    "project_is_trusted",
    "project_settings",
    "reconcile",
    "related_symbol_value",
    "render_system_prompt",
    "render_turn_context",
    "request_for",
    "route_after_call_model",
    "route_after_check_budget",
    "route_after_confirm_task",
    "route_after_load_rules",
    "route_after_pack_context",
    "route_after_retrieve_memory",
    "route_after_verify_changes",
    "run_coroutine",
    "sandbox_for",
    "sandbox_label",
    "summary_budget",
    "thresholds",
    "untrusted_note",
    "usage_of",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph._budget": (
            "Decision",
            "KEEP_RECENT_TOOL_RESULTS",
            "KEEP_USER_TURNS",
            "clear_minimum",
            "decide",
            "reconcile",
            "summary_budget",
            "thresholds",
        ),
        "engram.graph._budget_request": ("budget_partitions", "request_for"),
        "engram.graph._context": ("Context",),
        "engram.graph._deps": ("Deps", "fact_memory_opener", "make_default_deps"),
        "engram.graph._errors": (
            "ConfigError",
            "EngramError",
            "ModelNotConfiguredError",
            "ModelReplyError",
            "SessionError",
        ),
        "engram.graph._llm": ("is_context_overflow", "usage_of"),
        "engram.graph._markers": ("escape_markers",),
        "engram.graph._node_entry": (
            "context_or_env",
            "lazy_node_entry",
            "node_entry",
            "run_coroutine",
        ),
        "engram.graph._project_trust": ("project_is_trusted", "project_settings", "untrusted_note"),
        "engram.graph._prompts": ("ENGRAM_AUTHOR", "render_system_prompt", "render_turn_context"),
        "engram.graph._turn_context": ("as_sent", "attach_context", "attached_context"),
        "engram.graph._routes": (
            "LAST_NODE",
            "route_after_call_model",
            "route_after_check_budget",
            "route_after_confirm_task",
            "route_after_load_rules",
            "route_after_pack_context",
            "route_after_retrieve_memory",
            "route_after_verify_changes",
        ),
        "engram.graph._sandbox": (
            "SandboxUnavailableError",
            "find_sandbox",
            "sandbox_for",
            "sandbox_label",
        ),
        "engram.graph._state": ("InputState", "State", "StateUpdate", "USAGE_KEYS"),
        "engram.graph._state_values": (
            "ActionReview",
            "ApprovalValue",
            "BlockedAction",
            "BudgetReport",
            "CodeHitValue",
            "CommandRun",
            "CompactionEvent",
            "ContextPackValue",
            "InjectedValue",
            "LearnedValue",
            "MemoryReport",
            "PatternOutcome",
            "SelectionReport",
            "VerificationValue",
            "code_hit_value",
            "related_symbol_value",
        ),
        "engram.graph._tokens": ("Counter", "content_text", "count_text", "estimate_messages"),
    },
)
