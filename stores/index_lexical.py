"""Keep the BM25 side of the code index current: a base segment plus a small delta."""

from __future__ import annotations

from pathlib import Path

from stores.index_manifest import Manifest
from stores.lexical import LexicalIndex, SegmentedLexical

__all__ = ["DELTA_REBUILD_FRACTION", "refresh_lexical"]

DELTA_REBUILD_FRACTION = 0.1
"""Rebuild the base once added plus removed chunks exceed this share of it."""


def _full(manifest: Manifest, folder: Path | None, generation: int) -> SegmentedLexical:
    ids, tokens, _ = manifest.all_tokens()
    base = LexicalIndex.build(ids, tokens)
    delta = LexicalIndex.build([], [])
    if folder is not None:
        base.save(folder / "base", generation)
        delta.save(folder / "delta", generation)
    return SegmentedLexical(base, delta, ())


def refresh_lexical(manifest: Manifest, folder: Path | None, generation: int) -> SegmentedLexical:
    """Return BM25 matching the manifest at ``generation``, rebuilding only what is stale.

    Args:
        manifest: The index manifest (chunk ids and tokens).
        folder: Where the segments live (``base/`` and ``delta/``); None keeps them in memory
            and always builds one full segment.
        generation: The manifest generation the result must reflect.
    """
    if folder is None:
        return _full(manifest, None, generation)
    loaded_base = LexicalIndex.load(folder / "base")
    if loaded_base is None:
        return _full(manifest, folder, generation)
    base = loaded_base[0]
    current = manifest.chunk_ids()
    base_ids = set(base.ids)
    added = sorted(current - base_ids)
    removed = base_ids - current
    if len(added) + len(removed) > DELTA_REBUILD_FRACTION * max(len(base_ids), 1):
        return _full(manifest, folder, generation)
    loaded_delta = LexicalIndex.load(folder / "delta")
    if loaded_delta is not None and loaded_delta[1] == generation:
        return SegmentedLexical(base, loaded_delta[0], removed)
    ids, tokens = manifest.tokens_of(added)
    delta = LexicalIndex.build(ids, tokens)
    delta.save(folder / "delta", generation)
    return SegmentedLexical(base, delta, removed)
