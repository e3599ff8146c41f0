"""Upgrade stored fact records to the current schema (provenance and quarantine), once per store.

Runs when a memory store is opened (SQLite or Postgres alike: it only uses the ``BaseStore``
API). Each stored record is rewritten through ``Fact.from_record``, which applies the upgrade
rules (see ``engram.stores.memory._records``); the version reached is kept in
``("facts_meta",)`` so later opens cost one read. The rewrite is one batch under the store's
write lock, so two processes opening an old store at once migrate it once.
"""

from __future__ import annotations

from langgraph.store.base import BaseStore, PutOp

from engram.stores._write_lock import write_lock
from engram.stores.memory._records import FACT_SCHEMA, Fact
from engram.stores.memory._store import GLOBAL_NAMESPACE, LOAD_LIMIT, META_ROOT, bump_revision

SCHEMA_KEY = "schema"
SCHEMA_NAMESPACE = (META_ROOT,)


def schema_version(store: BaseStore) -> int:
    """Return the fact schema the store was last migrated to (1 before any migration)."""
    item = store.get(SCHEMA_NAMESPACE, SCHEMA_KEY)
    return int(item.value.get("version", 1)) if item else 1


def migrate_facts(store: BaseStore) -> int:
    """Bring every stored fact record to ``FACT_SCHEMA``; return how many were rewritten.

    Records that cannot be read as facts are left as they are (``load_facts`` ignores them).
    """
    if schema_version(store) >= FACT_SCHEMA:
        return 0
    with write_lock(store, "facts"):
        if schema_version(store) >= FACT_SCHEMA:  # another process got there first
            return 0
        namespaces = [
            GLOBAL_NAMESPACE,
            *(
                tuple(ns)
                for ns in store.list_namespaces(prefix=("facts", "project"), limit=LOAD_LIMIT)
                if len(ns) == 3
            ),
        ]
        ops: list[PutOp] = []
        touched: list[tuple[str, ...]] = []
        for namespace in namespaces:
            before = len(ops)
            for item in store.search(namespace, limit=LOAD_LIMIT):
                if tuple(item.namespace) != namespace or item.value.get("schema") is not None:
                    continue
                try:
                    fact = Fact.from_record({**item.value, "id": item.key})
                except ValueError:
                    continue
                ops.append(PutOp(namespace, item.key, fact.to_record(), index=False))
            if len(ops) > before:
                touched.append(namespace)
        ops.append(PutOp(SCHEMA_NAMESPACE, SCHEMA_KEY, {"version": FACT_SCHEMA}, index=False))
        store.batch(ops)
        for namespace in touched:
            bump_revision(store, namespace)
    return len(ops) - 1
