"""Persistence, indexes and pure domain logic: everything below the graph core."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores._errors import (
        BackendUnavailableError,
        IndexCorruptError,
        IndexNotBuiltError,
        SecretRefusedError,
        StoreError,
    )
    from engram.stores._health import (
        Health,
        check_chroma,
        check_graph,
        check_home,
        check_index,
        check_postgres,
    )
    from engram.stores._ledger import Ledger, message_record
    from engram.stores._redaction import (
        CONTEXT_LINES,
        MAX_LINE_CHARS,
        LineRedactor,
        key_open_after,
        redact_lines,
        redact_secrets,
        redact_window,
    )
    from engram.stores._secrets import find_secret, without_secrets
    from engram.stores._task_commit import CommitRefusedError, commit_task, current_branch
    from engram.stores._url_masking import MaskingFilter, mask_url_passwords

__all__ = [
    "BackendUnavailableError",
    "CONTEXT_LINES",
    "CommitRefusedError",
    "Health",
    "IndexCorruptError",
    "IndexNotBuiltError",
    "Ledger",
    "LineRedactor",
    "MAX_LINE_CHARS",
    "MaskingFilter",
    "SecretRefusedError",
    "StoreError",
    "check_chroma",
    "check_graph",
    "check_home",
    "check_index",
    "check_postgres",
    "commit_task",
    "current_branch",
    "find_secret",
    "key_open_after",
    "mask_url_passwords",
    "message_record",
    "redact_lines",
    "redact_secrets",
    "redact_window",
    "without_secrets",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores._errors": (
            "BackendUnavailableError",
            "IndexCorruptError",
            "IndexNotBuiltError",
            "SecretRefusedError",
            "StoreError",
        ),
        "engram.stores._health": (
            "Health",
            "check_chroma",
            "check_graph",
            "check_home",
            "check_index",
            "check_postgres",
        ),
        "engram.stores._ledger": ("Ledger", "message_record"),
        "engram.stores._redaction": (
            "CONTEXT_LINES",
            "LineRedactor",
            "MAX_LINE_CHARS",
            "key_open_after",
            "redact_lines",
            "redact_secrets",
            "redact_window",
        ),
        "engram.stores._secrets": ("find_secret", "without_secrets"),
        "engram.stores._task_commit": ("CommitRefusedError", "commit_task", "current_branch"),
        "engram.stores._url_masking": ("MaskingFilter", "mask_url_passwords"),
    },
)
