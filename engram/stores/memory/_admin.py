"""Manage stored facts: delete, verify, replace, and JSONL export/import for audit and backup."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from engram.stores._errors import SecretRefusedError, StoreError
from engram.stores._secrets import find_secret_in, with_article
from engram.stores._write_lock import write_lock
from engram.stores.files import escape_controls, inert_json
from engram.stores.memory._records import Fact, Scope, new_fact_id
from engram.stores.memory._store import (
    GLOBAL_NAMESPACE,
    FactConflictError,
    FactStore,
    check_secret,
    fact_namespace,
    load_facts,
    revision_op,
)

IMPORT_BATCH = 500


class FactNotFoundError(StoreError, LookupError):
    """No fact with that id is visible from the current project."""

    hint = "run `engram memory list` to see the ids of the facts you can change"


@dataclass(frozen=True)
class FactImportReport:
    """Outcome of an import: how many facts were written and which lines were skipped."""

    imported: int
    skipped: tuple[tuple[int, str], ...] = field(default=())
    """(line number, reason) for every line that was not imported."""


def find_fact(store: BaseStore, fact_id: str, *, project_key: str) -> Fact:
    """Return the visible fact with ``fact_id``, or the only one whose id starts with it.

    Raises:
        FactNotFoundError: No such fact in this project or the global scope, or the prefix
            matches several.
    """
    fact = FactStore(store).get(fact_id, project_key=project_key)
    if fact is not None:
        return fact
    matches = [
        f for f in all_facts(store, project_key=project_key) if fact_id and f.id.startswith(fact_id)
    ]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise FactNotFoundError(
            f"{len(matches)} facts have ids starting with {fact_id!r}: "
            + ", ".join(sorted(f.id for f in matches)[:10]),
            hint="type more of the id to pick one",
        )
    raise FactNotFoundError(f"no fact with id {fact_id!r} in this project or global memory")


def delete_fact(store: BaseStore, fact_id: str, *, project_key: str) -> Fact:
    """Delete a visible fact and return what was deleted."""
    fact = find_fact(store, fact_id, project_key=project_key)
    namespace = fact_namespace(fact.scope, fact.project_key)
    store.batch([PutOp(namespace, fact.id, None), revision_op(namespace)[0]])
    return fact


def verify_fact(
    store: BaseStore,
    fact_id: str,
    *,
    project_key: str,
    now: datetime,
    scope: Scope | None = None,
) -> Fact:
    """Mark a fact as verified by the user just now; this also confirms a quarantined fact.

    Args:
        store: The memory store.
        fact_id: Id of a fact visible from ``project_key``.
        project_key: Normalized key of the current project.
        now: Clock for the verification date.
        scope: Move the fact to this scope as well (``global`` makes a project fact apply to
            every project; ``project`` moves it into the current project); None keeps it.
    """
    if scope == "project" and not project_key:
        raise ValueError("a project fact needs a project key")
    with write_lock(store, "facts"):
        old = find_fact(store, fact_id, project_key=project_key)
        fact = replace(old, status="verified", last_verified=now)
        if scope is not None and scope != old.scope:
            fact = replace(fact, scope=scope, project_key=project_key if scope == "project" else "")
        old_namespace = fact_namespace(old.scope, old.project_key)
        namespace = fact_namespace(fact.scope, fact.project_key)
        ops = [PutOp(namespace, fact.id, fact.to_record(), index=False)]
        if namespace != old_namespace:  # a move: both halves in one transaction
            ops.append(PutOp(old_namespace, old.id, None))
        ops += [revision_op(touched)[0] for touched in dict.fromkeys([old_namespace, namespace])]
        store.batch(ops)
    return fact


def replace_fact(
    store: BaseStore,
    fact_id: str,
    text: str,
    *,
    project_key: str,
    now: datetime,
    force: bool = False,
) -> Fact:
    """Replace a fact's text (same id, scope and creation date), verified by the user now.

    Raises:
        FactNotFoundError: No such fact.
        SecretRefusedError: The new text contains a credential.
        FactConflictError: The new text conflicts with another fact of the scope (not the
            one being replaced) and ``force`` is false.
    """
    text = text.strip()
    if not text:
        raise ValueError("a fact needs some text")
    check_secret(text)
    with write_lock(store, "facts"):
        old = find_fact(store, fact_id, project_key=project_key)
        if not force:
            others = [
                f
                for f in load_facts(store, fact_namespace(old.scope, old.project_key))
                if f.id != old.id
            ]
            from engram.stores.memory._conflicts import ConflictIndex  # SciPy: on use

            matches = ConflictIndex(f.text for f in others).matches(text)
            if matches:
                raise FactConflictError(text, [others[m.index] for m in matches], matches)
        # The person's own words now: no model proposed this text, nothing preceded it.
        fact = replace(
            old, text=text, status="verified", last_verified=now, source="user", after=()
        )
        _write(store, fact)
    return fact


def all_facts(store: BaseStore, *, project_key: str | None = None) -> list[Fact]:
    """Return the global facts plus one project's (or every project's when key is None)."""
    if project_key:
        return load_facts(store, GLOBAL_NAMESPACE) + load_facts(
            store, fact_namespace("project", project_key)
        )
    namespaces = [GLOBAL_NAMESPACE] + sorted(
        ns
        for ns in store.list_namespaces(prefix=("facts", "project"), limit=1_000_000)
        if len(ns) == 3
    )
    return [fact for ns in namespaces for fact in load_facts(store, tuple(ns))]


def export_jsonl(facts: Iterable[Fact]) -> Iterator[str]:
    """Yield one JSON line per fact (full record, ids and dates included)."""
    for fact in facts:
        # the same text to a JSON reader; DEL, C1 and bidi controls and lone surrogates escaped,
        # so the backup is writable as UTF-8 and inert when printed
        yield inert_json(json.dumps(fact.to_record(), ensure_ascii=False, sort_keys=True))


SCOPE_TITLES = {"project": "Project facts", "global": "Global facts (every project)"}


def facts_markdown(facts: Iterable[Fact]) -> str:
    """Return the facts as a Markdown document to read or review (JSONL is the backup).

    One section per scope; each fact is a list item with its text as saved (control and bidi
    characters escaped: a document to read, in a terminal too), then its id, status, source
    and dates. A multi-line fact stays one item (its lines indented).
    """
    by_scope: dict[str, list[Fact]] = {"project": [], "global": []}
    for fact in facts:
        by_scope.setdefault(fact.scope, []).append(fact)
    lines = ["# engram facts", ""]
    for scope, items in by_scope.items():
        if not items:
            continue
        lines += [f"## {SCOPE_TITLES.get(scope, scope)} ({len(items)})", ""]
        for fact in sorted(items, key=lambda f: (f.created, f.seq, f.id)):
            text = escape_controls(fact.text.strip()).replace("\n", "\n  ")
            dates = f"saved {fact.created.date().isoformat()}"
            if fact.last_verified is not None:
                dates += f", verified {fact.last_verified.date().isoformat()}"
            lines.append(f"- {text}")
            lines.append(f"  <sub>`{fact.id}` · {fact.status} · {fact.source} · {dates}</sub>")
        lines.append("")
    if len(lines) == 2:
        lines += ["No facts saved.", ""]
    return "\n".join(lines)


def import_jsonl(
    store: BaseStore, lines: Iterable[str], *, project_key: str, now: datetime
) -> FactImportReport:
    """Restore facts from JSONL as-is: ids kept, no conflict checks, secrets refused.

    Minimal lines ``{"id", "text", "scope"}`` are accepted; project facts without a
    ``project_key`` go to ``project_key``; missing dates take ``now``; a missing id gets a
    fresh one; the line number becomes ``seq``, so facts of one instant keep the file's order
    (search uses that order as context). An existing fact with the same id is overwritten.
    """
    skipped: list[tuple[int, str]] = []
    pending: list[Fact] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("a line must hold a JSON object")
            _check_storable(record)
            record.setdefault("id", new_fact_id())
            record.setdefault("seq", number)
            fact = Fact.from_record(record, project_key=project_key, now=now)
            _check_fields(fact)
        except (ValueError, StoreError) as exc:
            skipped.append((number, str(exc)))
            continue
        except RecursionError:
            skipped.append((number, "the line nests too deeply"))
            continue
        pending.append(fact)
    for start in range(0, len(pending), IMPORT_BATCH):  # each batch whole or not at all
        ops = []
        touched: set[tuple[str, ...]] = set()
        for fact in pending[start : start + IMPORT_BATCH]:
            namespace = fact_namespace(fact.scope, fact.project_key)
            touched.add(namespace)
            ops.append(PutOp(namespace, fact.id, fact.to_record(), index=False))
        store.batch(ops + [revision_op(namespace)[0] for namespace in sorted(touched)])
    return FactImportReport(imported=len(pending), skipped=tuple(skipped))


def _check_fields(fact: Fact) -> None:
    """Refuse a fact any of whose stored fields (not only its text) holds a credential.

    Raises:
        SecretRefusedError: A field looks like it holds a secret.
    """
    kind = find_secret_in(fact.to_record())
    if kind is not None:
        what = with_article(kind)
        raise SecretRefusedError(f"refused to import this fact: a field contains {what}")


STORABLE_INT = 2**63
"""Integers a stored record may hold: the stores encode values as JSON with 64-bit integers."""


def _check_storable(value: Any) -> None:
    """Raise ``ValueError`` when an imported value holds an integer the stores cannot keep."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not -STORABLE_INT <= item < STORABLE_INT:
            raise ValueError("a number in the line is too large to store")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _write(store: BaseStore, fact: Fact) -> None:
    namespace = fact_namespace(fact.scope, fact.project_key)
    store.batch(
        [PutOp(namespace, fact.id, fact.to_record(), index=False), revision_op(namespace)[0]]
    )


@dataclass(frozen=True)
class MemoryCopyReport:
    """What ``copy_project_memory`` carried from one project key to another."""

    facts: int
    experience: dict[str, int] = field(default_factory=dict)


def copy_project_memory(store: BaseStore, source: str, target: str) -> MemoryCopyReport:
    """Copy one project key's facts and experience to another (the source is left as it is).

    Used when a checkout joins its project: what it learned alone comes along. A fact the
    target already holds under the same id is kept as the target has it; an experience record
    with the same id takes the source's version.
    """
    import tempfile
    from pathlib import Path

    from engram.stores.memory._experience_markdown import export_markdown, import_markdown

    held = {fact.id for fact in load_facts(store, fact_namespace("project", target))}
    moved = [
        replace(fact, project_key=target)
        for fact in load_facts(store, fact_namespace("project", source))
        if fact.id not in held
    ]
    namespace = fact_namespace("project", target)
    for start in range(0, len(moved), IMPORT_BATCH):
        ops: list[Any] = [
            PutOp(namespace, fact.id, fact.to_record(), index=False)
            for fact in moved[start : start + IMPORT_BATCH]
        ]
        store.batch([*ops, revision_op(namespace)[0]])
    with tempfile.TemporaryDirectory(prefix="engram-join-") as folder:
        export_markdown(store, source, Path(folder))
        counts = import_markdown(store, target, Path(folder)).counts
    return MemoryCopyReport(facts=len(moved), experience=dict(counts))
