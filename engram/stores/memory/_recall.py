"""Per-turn uses of the facts memory: recall into the memory block, and auto-extraction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from langgraph.store.base import BaseStore

from engram.stores._errors import ConflictError, SecretRefusedError
from engram.stores.memory._block import memory_cap, render_facts_block
from engram.stores.memory._conflicts import ConflictIndex
from engram.stores.memory._extraction import AUTO_EXTRACT_LIMIT, extract_candidates
from engram.stores.memory._records import Fact, ScoredFact
from engram.stores.memory._store import FactStore
from engram.stores.memory._vectors import TextEmbedder

RECALL_TOP_K = 10


@dataclass(frozen=True)
class FactRecall:
    """Facts recalled for one user turn and the block that injects them."""

    block: str
    """Rendered memory block for the user turn; empty when nothing relevant fits."""
    facts: tuple[ScoredFact, ...]
    """The facts in the block, best first."""
    tokens: int
    """Token count of ``block``."""


def recall_facts(
    store: BaseStore,
    query: str,
    *,
    project_key: str,
    window: int,
    count_tokens: Callable[[str], int],
    now: datetime,
    k: int = RECALL_TOP_K,
    embedder: TextEmbedder | None = None,
    facts: FactStore | None = None,
) -> FactRecall:
    """Find the facts visible from a project that matter for ``query`` and render them.

    Args:
        store: The memory store.
        query: The current user turn.
        project_key: Normalized key of the current project.
        window: Model context window; sets the block's token cap.
        count_tokens: Token counter used for the cap.
        now: Clock for staleness marks.
        k: Most facts to consider before the cap.
        embedder: Optional embedder for dense scoring of large fact sets.
        facts: A long-lived ``FactStore`` to reuse its indexes (built from ``store`` if None).
    """
    memory = facts or FactStore(store, embedder=embedder)
    hits = memory.search(query, project_key=project_key, k=k)
    block, kept = render_facts_block(
        [h.fact for h in hits], now=now, cap_tokens=memory_cap(window), count_tokens=count_tokens
    )
    kept_ids = {f.id for f in kept}
    chosen = tuple(h for h in hits if h.fact.id in kept_ids)
    return FactRecall(block=block, facts=chosen, tokens=count_tokens(block) if block else 0)


def auto_extract(
    user_text: str,
    *,
    store: BaseStore,
    project_key: str,
    external_content_seen: bool,
    provenance: Mapping[str, str],
    now: datetime,
    limit: int = AUTO_EXTRACT_LIMIT,
) -> list[Fact]:
    """Save up to ``limit`` stable facts stated in the user's own text of a finished turn.

    Saved facts are verbatim substrings of ``user_text``, project-scoped, ``auto`` and
    ``unverified``. Nothing is saved once external content entered the session; candidates
    that duplicate or conflict with a visible fact (this project's or a global one), or
    hold a secret, are skipped.
    """
    if external_content_seen or not project_key:
        return []
    memory = FactStore(store)
    global_facts = ConflictIndex(f.text for f in memory.facts(project_key=""))
    saved: list[Fact] = []
    for candidate in extract_candidates(user_text, limit=limit):
        if global_facts.matches(candidate):
            continue
        try:
            saved.append(
                memory.add(
                    candidate,
                    scope="project",
                    project_key=project_key,
                    source="auto",
                    provenance=provenance,
                    now=now,
                    status="unverified",
                )
            )
        except (ConflictError, SecretRefusedError):
            continue
    return saved
