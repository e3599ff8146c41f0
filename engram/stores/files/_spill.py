"""Tier 1 of compaction: save oversized tool outputs to disk and keep a preview in context."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engram.stores.project import ProjectState

SPILL_DIR = Path(".engram") / "tool-outputs"
"""The name the model reads spilled outputs by (``read_file`` maps it to the state folder)."""
SPILL_FOLDER = "tool-outputs"
"""Where spilled outputs live, inside the project's state folder under ``ENGRAM_HOME``."""
SPILL_LIMIT_CHARS = 32_000
"""Tool outputs longer than this many characters are spilled."""
PREVIEW_HEAD_CHARS = 3_000
"""Characters of the start of a spilled output kept in context."""
PREVIEW_TAIL_CHARS = 1_500
"""Characters of the end of a spilled output kept in context."""
_HASH_CHARS = 12
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SPILL_NOTE = re.compile(r"full output saved to (\S+?) \(")


@dataclass(frozen=True)
class SpillResult:
    """What goes into the tool message after the spill check."""

    text: str
    """The text to put in context: the original, or a preview with the saved path."""
    path: str | None
    """The path the model reads the saved output by (``SPILL_DIR/…``), or None."""


def _safe(part: str) -> str:
    return _NAME_UNSAFE.sub("_", part).strip("._")[:64] or "x"


def _atomic_write(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def session_spill_folder(session: str) -> str:
    """Return the project-relative folder holding one session's spilled outputs.

    Each session gets its own folder so its ``read_file`` can open its own outputs and no
    other session's.
    """
    return (SPILL_DIR / _safe(session)).as_posix()


def spill_if_large(
    state: ProjectState,
    tool_name: str,
    call_id: str,
    text: str,
    *,
    session: str = "default",
    limit: int = SPILL_LIMIT_CHARS,
) -> SpillResult:
    """Spill ``text`` to the state folder's ``tool-outputs/<session>/`` past ``limit`` chars.

    The full output is written atomically (temp file, then rename) and replaced in context by
    a note with its project-relative path and line count, plus head and tail previews, so the
    model can page through it with ``read_file``.

    Args:
        state: The project's state folder (under ``ENGRAM_HOME``).
        tool_name: Name of the tool that produced the output (part of the file name).
        call_id: The tool call id (part of the file name).
        text: The tool output.
        session: The session (thread id) the output belongs to.
        limit: Spill threshold in characters.

    Returns:
        The text for the tool message and the saved path (None when under the limit).

    Raises:
        OSError: The output could not be written.
    """
    if len(text) <= limit:
        return SpillResult(text=text, path=None)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    name = f"{_safe(tool_name)}-{_safe(call_id)}-{digest}.txt"
    relative = f"{session_spill_folder(session)}/{name}"
    _atomic_write(state.make(SPILL_FOLDER, _safe(session)) / name, text)
    lines = text.count("\n") + 1
    head = text[:PREVIEW_HEAD_CHARS]
    tail = text[-PREVIEW_TAIL_CHARS:]
    omitted = len(text) - len(head) - len(tail)
    preview = (
        f"[output too large for context: {len(text):,} chars, {lines:,} lines; "
        f"full output saved to {relative} (read it with read_file and a line range)]\n"
        f"--- first {len(head):,} chars ---\n{head}\n"
        f"--- {omitted:,} chars omitted ---\n"
        f"--- last {len(tail):,} chars ---\n{tail}"
    )
    return SpillResult(text=preview, path=relative)


def spilled_folder(state: ProjectState, spill_folder: str) -> Path:
    """Return the real folder of a session's spilled outputs named ``SPILL_DIR/<session>``."""
    return state.path(SPILL_FOLDER, _safe(Path(spill_folder).name))


def find_spill_path(text: str) -> str | None:
    """Return the saved path named in a spill preview, or None if ``text`` is not one."""
    match = _SPILL_NOTE.search(text[:PREVIEW_HEAD_CHARS])
    return match.group(1) if match else None
