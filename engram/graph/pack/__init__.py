"""The context pack: its budget, evidence fusion, filling and assembly from graph state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph.pack._assembly import (
        DEEPEN_MODES,
        LOCAL_MODES,
        NO_EVIDENCE_NOTE,
        assemble_pack,
        deepen,
        task_type_of,
    )
    from engram.graph.pack._budget import BudgetPlan, record_hit, record_usage
    from engram.graph.pack._filling import Pack, render_pack
    from engram.graph.pack._rerank import RERANK_TIMEOUT_MS, model_asker

__all__ = [
    "BudgetPlan",
    "DEEPEN_MODES",
    "LOCAL_MODES",
    "NO_EVIDENCE_NOTE",
    "Pack",
    "RERANK_TIMEOUT_MS",
    "assemble_pack",
    "deepen",
    "model_asker",
    "record_hit",
    "record_usage",
    "render_pack",
    "task_type_of",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph.pack._assembly": (
            "DEEPEN_MODES",
            "LOCAL_MODES",
            "NO_EVIDENCE_NOTE",
            "assemble_pack",
            "deepen",
            "task_type_of",
        ),
        "engram.graph.pack._budget": ("BudgetPlan", "record_hit", "record_usage"),
        "engram.graph.pack._filling": ("Pack", "render_pack"),
        "engram.graph.pack._rerank": ("RERANK_TIMEOUT_MS", "model_asker"),
    },
)
