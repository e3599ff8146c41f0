"""Chat slash commands of the facts memory: ``/save`` and ``/memory …``."""

from __future__ import annotations

from datetime import datetime

from langgraph.store.base import BaseStore

from engram.stores import StoreError
from engram.stores.memory import (
    FactConflictError,
    FactStore,
    Scope,
    delete_fact,
    render_fact_line,
    replace_fact,
    verify_fact,
)

MEMORY_USAGE = """memory commands:
  /save [--global] [--force] TEXT   remember a fact (project scope unless --global)
  /memory list                      show every fact visible here
  /memory search QUERY              show the facts that match QUERY
  /memory delete ID                 forget a fact (rejects a quarantined one)
  /memory verify ID                 confirm a fact is true (clears "possibly stale",
                                    releases a quarantined fact into prompts)
  /memory replace [--force] ID TEXT replace a fact's text"""

SEARCH_K = 10


def is_memory_command(line: str) -> bool:
    """Tell whether a chat line is one of the commands handled here."""
    head = line.strip().split(maxsplit=1)[0] if line.strip() else ""
    return head in ("/save", "/memory")


def handle_memory_command(line: str, *, store: BaseStore, project_key: str, now: datetime) -> str:
    """Run one memory slash command and return the text to show the user.

    Errors (conflicts, secrets, unknown ids) come back as text with what to do next; the
    fact text after the flags is kept exactly as typed.
    """
    head, rest = _split(line.strip())
    try:
        if head == "/save":
            flags, text = _take_flags(rest, {"--global", "--force"})
            return _save(store, project_key, text, flags, now)
        if head != "/memory":
            return MEMORY_USAGE
        sub, rest = _split(rest)
        return _memory(sub, rest, store=store, project_key=project_key, now=now)
    except FactConflictError as error:
        return _conflict_text(error)
    except (StoreError, ValueError) as error:
        hint = getattr(error, "hint", "")
        return f"error: {error}" + (f"\nhint: {hint}" if hint else "")


def _memory(sub: str, rest: str, *, store: BaseStore, project_key: str, now: datetime) -> str:
    facts = FactStore(store)
    if sub == "list":
        visible = facts.facts(project_key=project_key)
        if not visible:
            return "no facts remembered for this project yet (save one with /save TEXT)"
        return "\n".join(render_fact_line(f, now) for f in visible)
    if sub == "search" and rest:
        hits = facts.search(rest, project_key=project_key, k=SEARCH_K)
        if not hits:
            return f"no facts match {rest!r}"
        return "\n".join(render_fact_line(h.fact, now) for h in hits)
    if sub == "delete" and rest:
        fact = delete_fact(store, rest.split()[0], project_key=project_key)
        return f"deleted [{fact.id}] {fact.text}"
    if sub == "verify" and rest:
        fact = verify_fact(store, rest.split()[0], project_key=project_key, now=now)
        return f"verified [{fact.id}] {fact.text}"
    if sub == "replace":
        flags, rest = _take_flags(rest, {"--force"})
        fact_id, text = _split(rest)
        if fact_id and text:
            fact = replace_fact(
                store, fact_id, text, project_key=project_key, now=now, force="--force" in flags
            )
            return f"replaced [{fact.id}] with: {fact.text}"
    return MEMORY_USAGE


def _save(store: BaseStore, project_key: str, text: str, flags: set[str], now: datetime) -> str:
    if not text:
        return "usage: /save [--global] [--force] TEXT"
    scope: Scope = "global" if "--global" in flags else "project"
    fact = FactStore(store).add(
        text,
        scope=scope,
        project_key=project_key,
        source="user",
        force="--force" in flags,
        provenance={"via": "/save"},
        now=now,
    )
    return f"saved [{fact.id}] to {fact.scope} memory: {fact.text}"


def _conflict_text(error: FactConflictError) -> str:
    lines = [f"not saved, it conflicts with what is remembered:\n  new: {error.text}"]
    lines += [f"  [{fact.id}] {fact.text}" for fact in error.conflicts]
    first = error.conflicts[0].id if error.conflicts else "ID"
    lines.append(
        f"choose: /memory replace {first} {error.text}  (replace the old fact), "
        f"/save --force {error.text}  (keep both), or do nothing (keep the old one)"
    )
    return "\n".join(lines)


def _split(text: str) -> tuple[str, str]:
    """Split off the first word; the remainder keeps its inner spacing."""
    parts = text.strip().split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) == 2 else ""


def _take_flags(text: str, allowed: set[str]) -> tuple[set[str], str]:
    """Take leading flags out of ``text``; the rest is returned untouched."""
    flags: set[str] = set()
    rest = text.strip()
    while rest:
        word, remainder = _split(rest)
        if word not in allowed:
            break
        flags.add(word)
        rest = remainder
    return flags, rest
