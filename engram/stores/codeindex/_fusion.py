"""Pure ranking math: reciprocal rank fusion of named lists and file-level aggregation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

RRF_K = 60
"""Rank offset of reciprocal rank fusion (Cormack et al.)."""

DEFAULT_WEIGHTS: Mapping[str, float] = {"exact": 1.0, "bm25": 1.0, "dense": 0.25}
"""Weight of each ranked list in hybrid search; lists not named here get weight 1.

Picked on the localization dev set (bench/index/localize.py): the offline static embedder
ranks files well below BM25, so its list only breaks ties and adds recall.
"""

TRANSFORMER_WEIGHTS: Mapping[str, float] = {"exact": 1.0, "bm25": 1.0, "dense": 1.0}
"""Weights when a transformer embedder (bundled MiniLM, an embeddings endpoint) provides the
dense list: on the dev set MiniLM alone ranks files nearly as well as BM25, so it gets an
equal vote."""

FILE_DECAY = 0.75
"""Weight of a file's n-th best chunk relative to the (n-1)-th when scoring the file."""

FILE_TOP_CHUNKS = 3
"""Chunks per file that count towards its score."""


def rrf(
    ranked: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """Fuse ranked lists by weighted reciprocal rank: Σ weight / (k + rank), rank from 1.

    Args:
        ranked: Named lists of item ids, best first (exact, bm25, dense, graph, …). Repeats
            within one list count at their first position only.
        weights: Weight per list name; missing names weigh 1.0, zero drops a list.
        k: Rank offset; larger values flatten the difference between top ranks.

    Returns:
        (id, fused score) pairs, best first; ties keep first-seen order.
    """
    weights = weights or {}
    scores: dict[str, float] = {}
    for name, items in ranked.items():
        weight = weights.get(name, 1.0)
        if weight == 0:
            continue
        seen: set[str] = set()
        for rank, item in enumerate(items, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def aggregate_files(
    chunk_scores: Iterable[tuple[str, float]],
    *,
    decay: float = FILE_DECAY,
    top_chunks: int = FILE_TOP_CHUNKS,
) -> list[tuple[str, float]]:
    """Score files from their chunks' scores: best chunk plus decayed runners-up.

    Args:
        chunk_scores: (file path, chunk score) pairs in any order.
        decay: Factor applied per rank to a file's further chunks (0 keeps only the best).
        top_chunks: How many chunks of a file count.

    Returns:
        (path, score) pairs, best first; ties are broken by path.
    """
    per_file: dict[str, list[float]] = {}
    for path, score in chunk_scores:
        per_file.setdefault(path, []).append(score)
    totals = {
        path: sum(s * decay**i for i, s in enumerate(sorted(values, reverse=True)[:top_chunks]))
        for path, values in per_file.items()
    }
    return sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))
