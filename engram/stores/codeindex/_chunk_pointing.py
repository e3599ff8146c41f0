"""Which chunks of a localized file an issue points at, the likeliest to change first.

A fix touches a few functions of a file. Inside each file the localizer ranks, its chunks
are ordered by what the issue says about them: a traceback frame inside the chunk, a name
the issue mentions that the chunk defines, and how well the chunk matches the issue's text
and its title (ranks in the project-wide BM25 lists). Measured on locbench-dev with
``bench/locbench/chunk_rank.py``: read in this order, a gold file's first 2,560 tokens hold
0.75 of its changed lines, against 0.55 for frames, names and the five best text matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engram.stores.codeindex._exact import Located

MAX_POINTED_CHUNKS = 5
"""Chunks passed on for a file past the first DEEP_FILES: the ones the issue points at."""
DEEP_FILES = 3
"""Leading files whose chunks are all passed on, in pointing order (the pack reads them
deepest, see engram.graph.pack._code_slices.FOCUS_FILES)."""
MAX_DEEP_CHUNKS = 16
"""Most chunks passed on for one leading file."""
FRAME_WEIGHT = 3.0
"""A traceback frame inside the chunk (its innermost chunk)."""
NAMED_WEIGHT = 2.0
"""The chunk defines a name the issue mentions."""
TEXT_WEIGHT = 20.0
"""Times the chunk's reciprocal rank in the issue's BM25 list (20 / (5 + rank))."""
TITLE_WEIGHT = 10.0
"""Times the chunk's reciprocal rank in the title's BM25 list: half the whole text's."""
RANK_OFFSET = 5
"""Added to a rank before taking its reciprocal, so the first few ranks stay close."""
CHANGED_WEIGHT = 0.5
"""Times the chunk's weight among the functions the past commits most like the issue
changed (1 for the best commit's), in the DEEP_FILES leading files: a tie-breaker, a quarter
of a name the issue mentions. Chosen leave-one-repository-out among 0, 0.5, 1 and 2 on
locbench-dev (149 issues, gold changed lines in the 8K pack; 0.5 in 34 of 36 folds); at 1
and 2 the long tail loses what cases.jsonl gains (bench/RESULTS.md)."""


@dataclass(frozen=True)
class TextRanks:
    """Ranks of chunks (by id, 1 = best) in the issue's and the title's BM25 lists."""

    text: Mapping[str, int]
    title: Mapping[str, int]

    def score(self, key: str) -> float:
        """Return the text evidence for one chunk (0 when it is in neither list)."""
        text, title = self.text.get(key), self.title.get(key)
        return (TEXT_WEIGHT / (RANK_OFFSET + text) if text else 0.0) + (
            TITLE_WEIGHT / (RANK_OFFSET + title) if title else 0.0
        )


def point_chunks(
    chunks: Sequence[Located],
    lines: Sequence[int],
    names: Sequence[str],
    ranks: TextRanks,
    *,
    limit: int,
    fill: bool,
    changed: Mapping[str, float] | None = None,
) -> list[Located]:
    """Return up to ``limit`` chunks of one file, the likeliest to change first.

    Args:
        chunks: The file's chunks, in file order.
        lines: Lines of the file that traceback frames point at.
        names: Names the issue mentions that the file defines.
        ranks: The chunks' ranks in the issue's BM25 lists.
        limit: Most chunks returned.
        fill: Also return chunks nothing points at (after the others, in file order).
        changed: Functions of the file that similar past commits changed, with weights.
    """
    score: dict[str, float] = {}
    for line in lines:
        around = [c for c in chunks if c.start_line <= line <= c.end_line and c.kind != "file"]
        if around:
            key = min(around, key=lambda c: c.end_line - c.start_line).key
            score[key] = max(score.get(key, 0.0), FRAME_WEIGHT)
    for chunk in chunks:
        symbol = chunk.symbol.split("(", 1)[0]
        named = any(symbol == name or symbol.endswith("." + name) for name in names)
        total = score.get(chunk.key, 0.0) + (NAMED_WEIGHT if named else 0.0)
        total += ranks.score(chunk.key)
        if changed:
            total += CHANGED_WEIGHT * changed.get(symbol.rsplit(".", 1)[-1], 0.0)
        if total > 0:
            score[chunk.key] = total
    order = sorted(range(len(chunks)), key=lambda i: -score.get(chunks[i].key, 0.0))
    return [chunks[i] for i in order if fill or chunks[i].key in score][:limit]
