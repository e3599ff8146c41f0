"""Incremental, crash-safe indexing: re-parse changed files, embed only new chunks.

Order of a run, chosen so a kill at any point leaves a state the next run repairs:

1. scan files, compare size/mtime then content hash with the manifest;
2. chunk changed files;
3. raise the manifest's ``dirty`` flag, upsert new vectors, delete vanished ones;
4. commit files and chunks and clear ``dirty`` in one transaction;
5. rebuild BM25 into a temporary folder and rename it into place.

A run that finds ``dirty`` raised (or a different embedding model) compares the vector store's
ids with the manifest and repairs both directions. Against a shared server
(``SharedChromaVectors``) every run makes that comparison, since another checkout's
``--gc`` may have removed vectors this one uses; chunks another checkout embedded already
are taken as they are, and nothing is deleted on the server.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.stores.codeindex._bm25 import SegmentedLexical, code_tokens
from engram.stores.codeindex._bm25_segments import refresh_lexical
from engram.stores.codeindex._chunker import TreeHook, chunk_file, embedding_text
from engram.stores.codeindex._manifest import FileRecord, Manifest, NewChunk
from engram.stores.codeindex._shared_vectors import SharedChromaVectors
from engram.stores.codeindex._vectors import VectorStore
from engram.stores.embeddings import Embedder
from engram.stores.files import ProjectFile, WalkReport, read_text, walk_project

EMBED_BATCH_CHUNKS = 1024
"""Chunks embedded and written per step (progress granularity, memory bound)."""


@dataclass(frozen=True)
class IndexProgress:
    """Progress of an indexing run, reported after each step."""

    phase: Literal["parse", "embed", "bm25"]
    done: int
    total: int


@dataclass(frozen=True)
class IndexStats:
    """Summary of an indexing run."""

    files: int
    """Files in the index after the run."""
    chunks: int
    """Chunks in the index after the run."""
    parsed_files: int
    """Files (re)parsed because they were new or changed."""
    deleted_files: int
    new_chunks: int
    """Chunks whose vectors were written."""
    removed_chunks: int
    embedded: int
    """Texts actually run through the embedder (cache misses)."""
    cache_hits: int
    """Texts whose vectors came from the embedding cache."""
    skipped_files: int
    seconds: float
    reused: int = 0
    """Chunks whose vector another checkout had put on the shared server (not embedded)."""


def update_index(
    root: Path,
    *,
    manifest: Manifest,
    vectors: VectorStore,
    embedder: Embedder,
    bm25_dir: Path | None,
    progress: Callable[[IndexProgress], None] | None = None,
    walk: WalkReport | None = None,
    on_tree: TreeHook | None = None,
) -> tuple[IndexStats, SegmentedLexical | None]:
    """Bring manifest, vectors and BM25 in line with the files under ``root``.

    Args:
        root: Project root.
        manifest: File and chunk records of the index.
        vectors: Where chunk vectors are kept.
        embedder: Embeds new chunk texts.
        bm25_dir: Folder of the BM25 segments; None keeps them in memory.
        progress: Called after each step.
        walk: The project walk when the caller has it already (``walk_for_index``), so that
            one walk serves the code index and the relation index; walked here by default.
        on_tree: Given each syntax tree the chunker parses (see ``chunk_file``), so that the
            relation index can use the parse too.

    Returns:
        The run's statistics and, for in-memory indexes, the current BM25 segments (on-disk
        ones are loaded by the first search).
    """
    started = time.perf_counter()
    old = manifest.files()
    report = walk if walk is not None else _walk(root, old)
    changed, touched = _scan(report.files, old)
    deleted = set(old) - {f.path for f in report.files}
    new_chunks = _parse(changed, progress, on_tree)
    replaced = {r.path for r, _ in changed} | deleted
    dirty = manifest.get_meta("dirty") == "1" or manifest.get_meta("model_id") != embedder.model_id
    shared = isinstance(vectors, SharedChromaVectors)
    known = manifest.chunk_ids()
    present = vectors.ids() if dirty or shared else known
    fresh = {n.chunk.id: n for n in new_chunks}
    desired = (known - manifest.chunk_ids_of(replaced)) | set(fresh)
    to_embed = sorted(desired - present)
    to_delete = sorted(present - desired)
    hits_before, misses_before = _cache_counters(embedder)
    reused = 0
    if to_embed or to_delete or dirty:
        manifest.set_meta("dirty", "1")
        manifest.set_meta("model_id", embedder.model_id)
        reused = _embed(to_embed, fresh, manifest, vectors, embedder, progress)
        vectors.delete(to_delete)
    generation = int(manifest.get_meta("generation", "0") or 0)
    if replaced or dirty or not manifest.get_meta("generation"):
        generation += 1
    if replaced or touched or dirty or not manifest.get_meta("generation"):
        records = [r for r, _ in changed] + touched
        manifest.commit_run(replaced, records, list(fresh.values()), generation)
    if isinstance(vectors, SharedChromaVectors):
        vectors.settle(desired)
    lexical = _lexical(manifest, bm25_dir, generation, progress)
    hits_after, misses_after = _cache_counters(embedder)
    stats = IndexStats(
        files=len(manifest.files()),
        chunks=len(desired),
        parsed_files=len(changed),
        deleted_files=len(deleted),
        new_chunks=len(to_embed) - reused,
        removed_chunks=len(to_delete),
        embedded=misses_after - misses_before if misses_before >= 0 else len(to_embed) - reused,
        cache_hits=hits_after - hits_before,
        skipped_files=len(report.skipped),
        seconds=round(time.perf_counter() - started, 3),
        reused=reused,
    )
    return stats, lexical


def walk_for_index(root: Path, manifest: Manifest) -> WalkReport:
    """Walk ``root`` trusting the manifest about which unchanged files are text."""
    return _walk(root, manifest.files())


def _walk(root: Path, old: dict[str, FileRecord]) -> WalkReport:
    return walk_project(root, known={p: (r.size, r.mtime_ns) for p, r in old.items()})


def _scan(
    files: list[ProjectFile], old: dict[str, FileRecord]
) -> tuple[list[tuple[FileRecord, str]], list[FileRecord]]:
    """Split files into changed ones (with their text) and touched-but-identical ones."""
    changed: list[tuple[FileRecord, str]] = []
    touched: list[FileRecord] = []
    for f in files:
        rec = old.get(f.path)
        if rec is not None and rec.size == f.size and rec.mtime_ns == f.mtime_ns:
            continue
        try:
            text = read_text(f.abs_path)
        except OSError:
            continue
        digest = hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()
        record = FileRecord(f.path, digest, f.size, f.mtime_ns)
        if rec is not None and rec.hash == digest:
            touched.append(record)
        else:
            changed.append((record, text))
    return changed, touched


def _parse(
    changed: list[tuple[FileRecord, str]],
    progress: Callable[[IndexProgress], None] | None,
    on_tree: TreeHook | None,
) -> list[NewChunk]:
    out: list[NewChunk] = []
    for done, (record, text) in enumerate(changed, start=1):
        for chunk in chunk_file(record.path, text, on_tree=on_tree):
            tokens = code_tokens(f"{chunk.path} {chunk.symbol} {chunk.text}")
            out.append(NewChunk(chunk, embedding_text(chunk), tuple(tokens)))
        if progress is not None:
            progress(IndexProgress("parse", done, len(changed)))
    return out


def _embed(
    ids: list[str],
    fresh: dict[str, NewChunk],
    manifest: Manifest,
    vectors: VectorStore,
    embedder: Embedder,
    progress: Callable[[IndexProgress], None] | None,
) -> int:
    """Write the vectors of ``ids``; return how many a shared server held already."""
    reused = 0
    for start in range(0, len(ids), EMBED_BATCH_CHUNKS):
        batch = ids[start : start + EMBED_BATCH_CHUNKS]
        stored = manifest.embed_texts([i for i in batch if i not in fresh])
        texts = [fresh[i].embed_text if i in fresh else stored.get(i, "") for i in batch]
        if isinstance(vectors, SharedChromaVectors):
            needed = set(vectors.adopt(batch, texts))
            reused += len(batch) - len(needed)
            texts = [t for i, t in zip(batch, texts, strict=True) if i in needed]
            batch = [i for i in batch if i in needed]
        if batch:
            vectors.upsert(batch, embedder.embed(texts))
        if progress is not None:
            progress(IndexProgress("embed", min(start + EMBED_BATCH_CHUNKS, len(ids)), len(ids)))
    return reused


def _cache_counters(embedder: Embedder) -> tuple[int, int]:
    return int(getattr(embedder, "hits", 0)), int(getattr(embedder, "misses", -1))


def _lexical(
    manifest: Manifest,
    bm25_dir: Path | None,
    generation: int,
    progress: Callable[[IndexProgress], None] | None,
) -> SegmentedLexical | None:
    """Bring BM25 to ``generation``; return it when kept in memory (nothing to load later)."""
    lexical = refresh_lexical(manifest, bm25_dir, generation, load=bm25_dir is None)
    if progress is not None:
        progress(IndexProgress("bm25", 1, 1))
    return lexical
