"""Normalize project folders into stable keys and store-safe namespace labels."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# LangGraph store namespace labels may not contain "." (the SQLite store joins labels with
# it) nor NUL; "%" is escaped too so the encoding stays reversible.
_LABEL_ESCAPES = (("%", "%25"), (".", "%2E"), ("\x00", "%00"))


def project_key(path: str | os.PathLike[str]) -> str:
    """Return the normalized absolute path that identifies a project.

    Expands ``~``, makes relative paths absolute against the working directory, resolves
    symlinks and ``..``, drops trailing separators, and lowercases on case-insensitive file
    systems, so two spellings of one folder give one key and two folders never share one.

    Args:
        path: Any spelling of the project folder.

    Raises:
        ValueError: ``path`` is empty.
    """
    raw = os.fspath(path)
    if not raw.strip():
        raise ValueError("a project path is required")
    resolved = Path(raw).expanduser().absolute().resolve()
    text = str(resolved)
    if _case_insensitive(resolved):
        text = text.lower()
    return text


def namespace_label(key: str) -> str:
    """Encode a project key as one LangGraph namespace label (no ``.`` or NUL)."""
    for raw, escaped in _LABEL_ESCAPES:
        key = key.replace(raw, escaped)
    return key


def key_from_label(label: str) -> str:
    """Decode a namespace label made by :func:`namespace_label` back into the project key."""
    for raw, escaped in reversed(_LABEL_ESCAPES):
        label = label.replace(escaped, raw)
    return label


def _case_insensitive(path: Path) -> bool:
    """Tell whether the file system holding ``path`` ignores letter case."""
    if sys.platform == "win32":
        return True
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    name = probe.name
    swapped = name.swapcase()
    if not name or swapped == name:
        return sys.platform == "darwin"
    twin = probe.with_name(swapped)
    try:
        return twin.exists() and os.path.samefile(probe, twin)
    except OSError:
        return False
