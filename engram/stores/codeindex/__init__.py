"""The code index: tree-sitter chunks, ripgrep, BM25, vectors in Chroma, hybrid ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.codeindex._bm25 import LexicalIndex, code_tokens
    from engram.stores.codeindex._chroma_server import probe_chroma
    from engram.stores.codeindex._chunk_pointing import MAX_DEEP_CHUNKS
    from engram.stores.codeindex._chunker import TreeHook
    from engram.stores.codeindex._exact import (
        Located,
        exact_search_hits,
        exact_terms,
        grep_terms,
        locate_on_the_fly,
        smallest_containing,
    )
    from engram.stores.codeindex._file_kinds import FileKind, is_code_file, kinds_for_task
    from engram.stores.codeindex._fusion import RRF_K, TRANSFORMER_WEIGHTS, aggregate_files, rrf
    from engram.stores.codeindex._hits import CodeHit, FileHit
    from engram.stores.codeindex._ignore_check import IgnoreFileCheck
    from engram.stores.codeindex._incremental import IndexProgress, IndexStats, walk_for_index
    from engram.stores.codeindex._index import (
        INDEX_DIR,
        ProjectCodeIndex,
        SearchMode,
        index_is_complete,
        open_code_index,
    )
    from engram.stores.codeindex._issue_reading import read_issue
    from engram.stores.codeindex._localization import LOCALIZER_SOURCE
    from engram.stores.codeindex._ripgrep import RG_TIMEOUT_S, GrepMatch, clip_line, grep
    from engram.stores.codeindex._shared_vectors import GcReport
    from engram.stores.codeindex._vectors import VectorStore, release_embedded_chroma

__all__ = [
    "CodeHit",
    "FileHit",
    "FileKind",
    "GcReport",
    "GrepMatch",
    "INDEX_DIR",
    "IgnoreFileCheck",
    "IndexProgress",
    "IndexStats",
    "LOCALIZER_SOURCE",
    "LexicalIndex",
    "Located",
    "MAX_DEEP_CHUNKS",
    "ProjectCodeIndex",
    "RG_TIMEOUT_S",
    "RRF_K",
    "SearchMode",
    "TRANSFORMER_WEIGHTS",
    "TreeHook",
    "VectorStore",
    "aggregate_files",
    "clip_line",
    "code_tokens",
    "exact_search_hits",
    "exact_terms",
    "grep",
    "grep_terms",
    "index_is_complete",
    "is_code_file",
    "kinds_for_task",
    "locate_on_the_fly",
    "open_code_index",
    "probe_chroma",
    "read_issue",
    "release_embedded_chroma",
    "rrf",
    "smallest_containing",
    "walk_for_index",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.codeindex._bm25": ("LexicalIndex", "code_tokens"),
        "engram.stores.codeindex._chroma_server": ("probe_chroma",),
        "engram.stores.codeindex._chunk_pointing": ("MAX_DEEP_CHUNKS",),
        "engram.stores.codeindex._chunker": ("TreeHook",),
        "engram.stores.codeindex._exact": (
            "Located",
            "exact_search_hits",
            "exact_terms",
            "grep_terms",
            "locate_on_the_fly",
            "smallest_containing",
        ),
        "engram.stores.codeindex._file_kinds": ("FileKind", "is_code_file", "kinds_for_task"),
        "engram.stores.codeindex._fusion": (
            "RRF_K",
            "TRANSFORMER_WEIGHTS",
            "aggregate_files",
            "rrf",
        ),
        "engram.stores.codeindex._hits": ("CodeHit", "FileHit"),
        "engram.stores.codeindex._ignore_check": ("IgnoreFileCheck",),
        "engram.stores.codeindex._incremental": ("IndexProgress", "IndexStats", "walk_for_index"),
        "engram.stores.codeindex._issue_reading": ("read_issue",),
        "engram.stores.codeindex._index": (
            "INDEX_DIR",
            "ProjectCodeIndex",
            "SearchMode",
            "index_is_complete",
            "open_code_index",
        ),
        "engram.stores.codeindex._localization": ("LOCALIZER_SOURCE",),
        "engram.stores.codeindex._ripgrep": ("RG_TIMEOUT_S", "GrepMatch", "clip_line", "grep"),
        "engram.stores.codeindex._shared_vectors": ("GcReport",),
        "engram.stores.codeindex._vectors": ("VectorStore", "release_embedded_chroma"),
    },
)
