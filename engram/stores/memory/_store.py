"""Scoped long-term facts on a LangGraph ``BaseStore``: writes, visibility, conflicts, search.

Namespaces: ``("facts", "global")`` and ``("facts", "project", <label>)`` where the label is
the project key encoded by :func:`engram.stores.project._key.namespace_label` (store labels may not
contain "."). Each namespace has a revision token in ``("facts_meta", ...)`` that every write
replaces, so a long-lived :class:`FactStore` can keep its search and conflict indexes in
memory and rebuild them only when some process changed the facts.

Concurrency: every write is one SQLite/Postgres transaction, so no write is lost or torn when
several processes write at once; the conflict check and the write it guards hold the store's
write lock (``engram.stores._write_lock``), so two processes saving near-identical facts in the same
instant cannot both pass the check.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
from langgraph.store.base import BaseStore, PutOp

from engram.stores._errors import ConflictError, SecretRefusedError, StoreError
from engram.stores._secrets import find_secret, with_article
from engram.stores._write_lock import write_lock
from engram.stores.memory._records import Fact, Scope, ScoredFact, Source, Status, new_fact_id
from engram.stores.memory._vectors import TextEmbedder, load_vectors
from engram.stores.project import namespace_label

if TYPE_CHECKING:
    from engram.stores.memory._conflicts import ConflictIndex, ConflictMatch
    from engram.stores.memory._search import FactIndex

# Search (bm25s, SciPy) and conflict checks load on first use: listing, showing and exporting
# facts need neither.

log = logging.getLogger(__name__)

GLOBAL_NAMESPACE = ("facts", "global")
META_ROOT = "facts_meta"
REVISION_KEY = "revision"
LOAD_LIMIT = 1_000_000
DENSE_MIN_FACTS = 300
"""Visible facts above which search may return facts sharing no word with the query: by dense
similarity (when an embedder is set) or as the recorded neighbours of a match."""


def fact_namespace(scope: Scope, project_key: str = "") -> tuple[str, ...]:
    """Return the store namespace of a scope (``project_key`` is needed for projects)."""
    if scope == "global":
        return GLOBAL_NAMESPACE
    if not project_key:
        raise ValueError("a project fact needs a project key")
    return ("facts", "project", namespace_label(project_key))


def check_secret(text: str) -> None:
    """Refuse text that contains a credential.

    Raises:
        SecretRefusedError: ``text`` contains something that looks like a secret.
    """
    kind = find_secret(text)
    if kind is not None:
        raise SecretRefusedError(f"refused to store this memory: it contains {with_article(kind)}")


def revision_op(namespace: tuple[str, ...]) -> tuple[PutOp, str]:
    """Return the write marking the facts of ``namespace`` as changed, and its new token.

    Batched with the change itself, both land in one transaction: a full disk or a crash
    leaves either both or neither, never a fact that other processes' caches do not see.
    """
    token = uuid.uuid4().hex
    return PutOp((META_ROOT, *namespace[1:]), REVISION_KEY, {"token": token}, index=False), token


def bump_revision(store: BaseStore, namespace: tuple[str, ...]) -> str:
    """Mark the facts of ``namespace`` as changed and return the new revision token."""
    op, token = revision_op(namespace)
    store.batch([op])
    return token


def read_revision(store: BaseStore, namespace: tuple[str, ...]) -> str:
    """Return the current revision token of ``namespace`` ("" before the first write)."""
    item = store.get((META_ROOT, *namespace[1:]), REVISION_KEY)
    return str(item.value.get("token", "")) if item else ""


def load_facts(store: BaseStore, namespace: tuple[str, ...]) -> list[Fact]:
    """Read every fact stored in exactly ``namespace`` in recorded order (created, then seq).

    Items that are not fact records are ignored: the namespace is engram's own, but a
    hand-edited database should not make memory unusable.
    """
    facts = []
    for item in store.search(namespace, limit=LOAD_LIMIT):
        if tuple(item.namespace) != namespace:
            continue
        try:
            facts.append(Fact.from_record({**item.value, "id": item.key}))
        except ValueError:
            continue
    facts.sort(key=lambda f: (f.created, f.seq, f.id))
    return facts


@dataclass
class _Snapshot:
    """Facts of one namespace as of one revision, with a lazily built conflict index."""

    revision: str
    facts: list[Fact]
    conflicts: ConflictIndex | None = None

    def conflict_index(self) -> ConflictIndex:
        if self.conflicts is None:
            from engram.stores.memory._conflicts import ConflictIndex

            self.conflicts = ConflictIndex(f.text for f in self.facts)
        return self.conflicts


class FactStore:
    """Facts memory over any LangGraph ``BaseStore`` (SQLite, Postgres, in-memory).

    Indexes are cached per instance and checked against the store's revision tokens on
    every call, so writes from other processes are seen on the next search.
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        embedder: TextEmbedder | None = None,
        dense_min_facts: int = DENSE_MIN_FACTS,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.dense_min_facts = dense_min_facts
        self._snapshots: dict[tuple[str, ...], _Snapshot] = {}
        self._indexes: dict[str, tuple[tuple[str, str], FactIndex, list[Fact]]] = {}
        self._warned = False

    def add(
        self,
        text: str,
        *,
        scope: Scope,
        project_key: str,
        source: Source,
        force: bool = False,
        provenance: Mapping[str, str] | None = None,
        now: datetime | None = None,
        status: Status | None = None,
        after: Sequence[str] = (),
    ) -> Fact:
        """Store a new fact after the secret and conflict checks.

        Args:
            text: The fact, as the user (or the user's own words) stated it.
            scope: ``project`` (visible in this project only) or ``global``.
            project_key: Normalized project key (see ``engram.stores.project._key.project_key``).
            source: Who wrote it: ``user``, ``agent`` (save_memory tool) or ``auto``.
            force: Keep both facts when the text conflicts with an existing one.
            provenance: Session/thread and message ids it came from.
            now: Clock for the created/verified dates.
            status: Defaults to ``verified`` for the user's own saves, else ``unverified``;
                ``quarantined`` keeps the fact out of search and recall until confirmed.
            after: Untrusted content read in the session before the model proposed it.

        Raises:
            SecretRefusedError: The text contains a credential.
            ConflictError: The text conflicts with facts of the same scope (``.conflicts``).
            ValueError: The text is empty.
        """
        text = text.strip()
        if not text:
            raise ValueError("a fact needs some text")
        check_secret(text)
        now = now or datetime.now(UTC)
        namespace = fact_namespace(scope, project_key)
        status = status or ("verified" if source == "user" else "unverified")
        fact = Fact(
            id=new_fact_id(),
            text=text,
            scope=scope,
            project_key=project_key if scope == "project" else "",
            created=now,
            last_verified=now if status == "verified" else None,
            source=source,
            status=status,
            provenance=dict(provenance or {}),
            after=tuple(after),
        )
        # Check and write under the store's write lock: another process saving the same fact
        # at the same instant waits, then sees this one in its conflict check.
        with write_lock(self.store, "facts"):
            snapshot = self._snapshot(namespace)
            if not force:
                matches = snapshot.conflict_index().matches(text)
                if matches:
                    conflicts = [snapshot.facts[m.index] for m in matches]
                    raise FactConflictError(text, conflicts, matches)
            revision, token = revision_op(namespace)
            self.store.batch([PutOp(namespace, fact.id, fact.to_record(), index=False), revision])
        # Adopt our own write instead of reloading the whole namespace next time.
        snapshot.facts.append(fact)
        if snapshot.conflicts is not None:
            snapshot.conflicts.add(text)
        snapshot.revision = token
        return fact

    def search(self, query: str, *, project_key: str, k: int = 10) -> list[ScoredFact]:
        """Return up to ``k`` facts visible from ``project_key`` that best match ``query``.

        Visibility comes first: only global facts and this project's facts are scored.
        Quarantined facts are never returned (they wait for a person's confirmation).
        """
        index, facts = self._index(project_key)
        query_vector = None
        if index.has_vectors and self.embedder is not None and query.strip():
            query_vector = self.embedder.embed([query])[0]
        return [ScoredFact(facts[i], s) for i, s in index.search(query, k, query_vector)]

    def get(self, fact_id: str, *, project_key: str) -> Fact | None:
        """Return the fact with ``fact_id`` if it is visible from ``project_key``."""
        namespaces: list[tuple[str, ...]] = [GLOBAL_NAMESPACE]
        if project_key:
            namespaces.insert(0, fact_namespace("project", project_key))
        for namespace in namespaces:
            item = self.store.get(namespace, fact_id)
            if item is not None:
                return Fact.from_record({**item.value, "id": item.key})
        return None

    def facts(self, *, project_key: str) -> list[Fact]:
        """Return every fact visible from ``project_key``: global first, then the project's."""
        visible = list(self._snapshot(GLOBAL_NAMESPACE).facts)
        if project_key:
            visible += self._snapshot(fact_namespace("project", project_key)).facts
        return visible

    def _snapshot(self, namespace: tuple[str, ...]) -> _Snapshot:
        revision = read_revision(self.store, namespace)
        cached = self._snapshots.get(namespace)
        if cached is None or cached.revision != revision:
            cached = _Snapshot(revision, load_facts(self.store, namespace))
            self._snapshots[namespace] = cached
        return cached

    def _index(self, project_key: str) -> tuple[FactIndex, list[Fact]]:
        shared = self._snapshot(GLOBAL_NAMESPACE)
        own = self._snapshot(fact_namespace("project", project_key)) if project_key else None
        revisions = (shared.revision, own.revision if own else "")
        cached = self._indexes.get(project_key)
        if cached is not None and cached[0] == revisions:
            return cached[1], cached[2]
        shared_facts = [f for f in shared.facts if not f.quarantined]
        own_facts = [f for f in own.facts if not f.quarantined] if own else []
        facts = shared_facts + own_facts
        large = len(facts) > self.dense_min_facts
        vectors = None
        if self.embedder is not None and large:
            vectors = self._vectors([f.text for f in facts])
        sequences = [0] * len(shared_facts) + [1] * len(own_facts)
        from engram.stores.memory._search import FactIndex

        index = FactIndex(
            [f.text for f in facts], vectors, sequences=sequences, context_results=large
        )
        self._indexes[project_key] = (revisions, index, facts)
        return index, facts

    def _vectors(self, texts: list[str]) -> np.ndarray | None:
        """Embed the facts for dense re-ranking; without a working embedder, rank lexically."""
        assert self.embedder is not None
        try:
            return load_vectors(self.store, self.embedder, texts)
        except (StoreError, OSError) as exc:
            if not self._warned:
                log.warning("facts are ranked without embeddings: %s", exc)
                self._warned = True
            return None


class FactConflictError(ConflictError):
    """A new fact conflicts with existing facts of the same scope; the user has to choose."""

    hint = (
        "replace the old fact with `/memory replace ID TEXT`, keep both with "
        "`/save --force`, or keep things as they are"
    )

    def __init__(self, text: str, conflicts: Sequence[Fact], matches: Sequence[ConflictMatch]):
        self.text = text
        self.conflicts = tuple(conflicts)
        self.matches = tuple(matches)
        listed = "; ".join(f"[{f.id}] {f.text}" for f in self.conflicts)
        super().__init__(f"new fact {text!r} conflicts with existing: {listed}")
