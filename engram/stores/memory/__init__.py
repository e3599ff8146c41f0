"""Long-term memory: scoped facts and experience (strategies, patterns, episodes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.memory._admin import (
        MemoryCopyReport,
        all_facts,
        copy_project_memory,
        delete_fact,
        export_jsonl,
        facts_markdown,
        find_fact,
        import_jsonl,
        replace_fact,
        verify_fact,
    )
    from engram.stores.memory._block import provenance_mark, render_fact_line
    from engram.stores.memory._experience_markdown import export_markdown, import_markdown
    from engram.stores.memory._experience_records import (
        Episode,
        Kind,
        Outcome,
        Pattern,
        Record,
        Strategy,
        Trigger,
        new_id,
        record_to_dict,
    )
    from engram.stores.memory._experience_store import (
        TIMESTAMP_KEY,
        ExperienceStore,
        apply_outcome,
        pick_winner,
        record_verdict,
        same_trigger_groups,
    )
    from engram.stores.memory._migration import migrate_facts
    from engram.stores.memory._pack_feedback import (
        BaseStorePackFeedback,
        Feedback,
        PackFeedbackStore,
    )
    from engram.stores.memory._recall import FactRecall, auto_extract, recall_facts
    from engram.stores.memory._records import (
        MEMORY_CAP_MAX,
        MEMORY_CAP_MIN,
        MEMORY_CAP_WINDOW_DIVISOR,
        Fact,
        Scope,
        ScoredFact,
    )
    from engram.stores.memory._store import FactConflictError, FactStore

__all__ = [
    "BaseStorePackFeedback",
    "Episode",
    "ExperienceStore",
    "Fact",
    "FactConflictError",
    "FactRecall",
    "FactStore",
    "Feedback",
    "Kind",
    "MEMORY_CAP_MAX",
    "MEMORY_CAP_MIN",
    "MEMORY_CAP_WINDOW_DIVISOR",
    "MemoryCopyReport",
    "Outcome",
    "PackFeedbackStore",
    "Pattern",
    "Record",
    "Scope",
    "ScoredFact",
    "Strategy",
    "TIMESTAMP_KEY",
    "Trigger",
    "all_facts",
    "apply_outcome",
    "auto_extract",
    "copy_project_memory",
    "delete_fact",
    "export_jsonl",
    "export_markdown",
    "facts_markdown",
    "find_fact",
    "import_jsonl",
    "import_markdown",
    "migrate_facts",
    "new_id",
    "pick_winner",
    "provenance_mark",
    "recall_facts",
    "record_to_dict",
    "record_verdict",
    "render_fact_line",
    "replace_fact",
    "same_trigger_groups",
    "verify_fact",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.memory._admin": (
            "MemoryCopyReport",
            "all_facts",
            "copy_project_memory",
            "delete_fact",
            "export_jsonl",
            "facts_markdown",
            "find_fact",
            "import_jsonl",
            "replace_fact",
            "verify_fact",
        ),
        "engram.stores.memory._block": ("provenance_mark", "render_fact_line"),
        "engram.stores.memory._experience_markdown": ("export_markdown", "import_markdown"),
        "engram.stores.memory._experience_records": (
            "Episode",
            "Kind",
            "Outcome",
            "Pattern",
            "Record",
            "Strategy",
            "Trigger",
            "new_id",
            "record_to_dict",
        ),
        "engram.stores.memory._experience_store": (
            "ExperienceStore",
            "TIMESTAMP_KEY",
            "apply_outcome",
            "pick_winner",
            "record_verdict",
            "same_trigger_groups",
        ),
        "engram.stores.memory._migration": ("migrate_facts",),
        "engram.stores.memory._pack_feedback": (
            "BaseStorePackFeedback",
            "Feedback",
            "PackFeedbackStore",
        ),
        "engram.stores.memory._recall": ("FactRecall", "auto_extract", "recall_facts"),
        "engram.stores.memory._records": (
            "Fact",
            "MEMORY_CAP_MAX",
            "MEMORY_CAP_MIN",
            "MEMORY_CAP_WINDOW_DIVISOR",
            "Scope",
            "ScoredFact",
        ),
        "engram.stores.memory._store": ("FactConflictError", "FactStore"),
    },
)
