"""The graph's nodes, one per module; ``engram.builder`` wires them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.nodes._call_model import STEP_LIMIT_NOTE, call_model
    from engram.nodes._check_budget import check_budget
    from engram.nodes._compact_history import SUMMARY_CHARS_PER_TOKEN, compact_history
    from engram.nodes._confirm_task import confirm_task
    from engram.nodes._expand_relations import expand_relations
    from engram.nodes._learn_from_task import learn_from_task
    from engram.nodes._load_rules import load_rules
    from engram.nodes._pack_context import pack_context
    from engram.nodes._record_feedback import record_feedback
    from engram.nodes._retrieve_memory import retrieve_memory
    from engram.nodes._review_actions import review_actions
    from engram.nodes._run_tools import run_tools
    from engram.nodes._search_exact import search_exact
    from engram.nodes._search_semantic import search_semantic
    from engram.nodes._verify_changes import verify_changes

__all__ = [
    "STEP_LIMIT_NOTE",
    "SUMMARY_CHARS_PER_TOKEN",
    "call_model",
    "check_budget",
    "compact_history",
    "confirm_task",
    "expand_relations",
    "learn_from_task",
    "load_rules",
    "pack_context",
    "record_feedback",
    "retrieve_memory",
    "review_actions",
    "run_tools",
    "search_exact",
    "search_semantic",
    "verify_changes",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.nodes._call_model": ("STEP_LIMIT_NOTE", "call_model"),
        "engram.nodes._check_budget": ("check_budget",),
        "engram.nodes._compact_history": ("SUMMARY_CHARS_PER_TOKEN", "compact_history"),
        "engram.nodes._confirm_task": ("confirm_task",),
        "engram.nodes._expand_relations": ("expand_relations",),
        "engram.nodes._learn_from_task": ("learn_from_task",),
        "engram.nodes._load_rules": ("load_rules",),
        "engram.nodes._pack_context": ("pack_context",),
        "engram.nodes._record_feedback": ("record_feedback",),
        "engram.nodes._retrieve_memory": ("retrieve_memory",),
        "engram.nodes._review_actions": ("review_actions",),
        "engram.nodes._run_tools": ("run_tools",),
        "engram.nodes._search_exact": ("search_exact",),
        "engram.nodes._search_semantic": ("search_semantic",),
        "engram.nodes._verify_changes": ("verify_changes",),
    },
)
