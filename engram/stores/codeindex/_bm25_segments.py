"""Keep the BM25 side of the code index current: a base segment plus a small delta."""

from __future__ import annotations

from pathlib import Path

from engram.stores.codeindex._bm25 import LexicalIndex, SegmentedLexical
from engram.stores.codeindex._manifest import Manifest

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


def refresh_lexical(
    manifest: Manifest, folder: Path | None, generation: int, *, load: bool = True
) -> SegmentedLexical | None:
    """Return BM25 matching the manifest at ``generation``, rebuilding only what is stale.

    Args:
        manifest: The index manifest (chunk ids and tokens).
        folder: Where the segments live (``base/`` and ``delta/``); None keeps them in memory
            and always builds one full segment.
        generation: The manifest generation the result must reflect.
        load: Return the segments; False only brings the files on disk up to date (indexing
            runs skip loading the large base).
    """
    if folder is None:
        return _full(manifest, None, generation)
    base_ids = LexicalIndex.load_ids(folder / "base")
    if base_ids is None:
        full = _full(manifest, folder, generation)
        return full if load else None
    current = manifest.chunk_ids()
    known = set(base_ids[0])
    added = sorted(current - known)
    removed = known - current
    if len(added) + len(removed) > DELTA_REBUILD_FRACTION * max(len(known), 1):
        full = _full(manifest, folder, generation)
        return full if load else None
    delta_ids = LexicalIndex.load_ids(folder / "delta")
    if delta_ids is None or delta_ids[1] != generation:
        ids, tokens = manifest.tokens_of(added)
        LexicalIndex.build(ids, tokens).save(folder / "delta", generation)
    if not load:
        return None
    base = LexicalIndex.load(folder / "base")
    delta = LexicalIndex.load(folder / "delta")
    if base is None or delta is None:
        return _full(manifest, folder, generation)
    return SegmentedLexical(base[0], delta[0], removed)
