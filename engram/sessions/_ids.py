"""Session and checkpoint ids on the command line: unique prefixes in, unique prefixes out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.graph import SessionError

CHECKPOINT_PREFIX_MIN = 8
"""Fewest characters of a checkpoint id shown in a table."""
CANDIDATES_SHOWN = 10
"""Candidates listed when a prefix is ambiguous."""


def match_prefix(text: str, ids: Sequence[str], what: str) -> str | None:
    """Return the id equal to ``text``, else the only id it starts; None when none matches.

    Raises:
        SessionError: ``text`` starts more than one id (the message lists them).
    """
    if text in ids:
        return text
    matches = sorted(i for i in ids if i.startswith(text))
    if len(matches) > 1:
        shown = ", ".join(matches[:CANDIDATES_SHOWN])
        more = (
            f" and {len(matches) - CANDIDATES_SHOWN} more"
            if len(matches) > CANDIDATES_SHOWN
            else ""
        )
        raise SessionError(
            f"{what} {text!r} is ambiguous: it starts {shown}{more}",
            hint=f"type more characters of the {what}",
        )
    return matches[0] if matches else None


def unique_prefixes(ids: Sequence[str], minimum: int) -> dict[str, str]:
    """Map each id to its shortest prefix (at least ``minimum`` long) that no other id shares."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for index, value in enumerate(ordered):
        shared = 0
        for other in (
            ordered[index - 1] if index else "",
            ordered[index + 1] if index + 1 < len(ordered) else "",
        ):
            common = 0
            while common < min(len(value), len(other)) and value[common] == other[common]:
                common += 1
            shared = max(shared, common)
        out[value] = value[: max(minimum, shared + 1)]
    return out


def resolve_thread(saver: Any, text: str, *, new_ok: bool = False) -> str:
    """Return the session a full id or unique prefix names.

    Args:
        saver: The checkpointer holding the sessions.
        text: What the user typed.
        new_ok: Return ``text`` itself when nothing matches (it names a new session).

    Raises:
        SessionError: No session matches (and ``new_ok`` is false), or several do.
    """
    from engram.stores.sqlite import thread_ids

    found = match_prefix(text, thread_ids(saver), "session id")
    if found is not None:
        return found
    if new_ok:
        return text
    raise SessionError(f"no session {text!r}")


def resolve_checkpoint(saver: Any, thread_id: str, text: str) -> str:
    """Return the checkpoint of ``thread_id`` that a full id or unique prefix names.

    Raises:
        SessionError: No checkpoint of the session matches, or several do.
    """
    from engram.stores.sqlite import checkpoint_ids

    found = match_prefix(text, checkpoint_ids(saver, thread_id), "checkpoint id")
    if found is None:
        raise SessionError(
            f"session {thread_id} has no checkpoint {text!r}",
            hint=f"run `engram sessions history {thread_id}` to see them",
        )
    return found


def load_snapshot(
    engram: Any, thread_text: str, checkpoint_text: str | None = None
) -> tuple[str, Any]:
    """Resolve a session (and optional checkpoint) typed by the user and read its state.

    Returns:
        The full thread id and the ``StateSnapshot`` (whose config names the full checkpoint).

    Raises:
        SessionError: The session or checkpoint does not exist, or a prefix is ambiguous.
    """
    thread_id = resolve_thread(engram.checkpointer, thread_text)
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if checkpoint_text:
        config["configurable"]["checkpoint_id"] = resolve_checkpoint(
            engram.checkpointer, thread_id, checkpoint_text
        )
    return thread_id, engram.graph.get_state(config)
