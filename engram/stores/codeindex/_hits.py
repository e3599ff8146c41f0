"""What a code search returns: chunks and files, with the evidence that ranked them.

Kept apart from the index so that callers that only search without it (exact search, the
CLI's result tables) import no index machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CodeHit:
    """A chunk found by a search."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float
    source: str
    """Which evidence ranked it: exact, bm25, dense, or fused."""


@dataclass(frozen=True)
class FileHit:
    """A file ranked by the evidence of its chunks."""

    path: str
    score: float
    reasons: tuple[str, ...] = field(default=())
    """Best chunks behind the score (``symbol [source]``)."""
