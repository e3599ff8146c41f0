"""The code index manifest: files, chunks and their tokens in one SQLite file.

All changes of one indexing run are committed in a single transaction, so the manifest is
always the state before or after a run, never in between. A ``dirty`` flag is raised before
vectors are written and cleared in that final transaction; a raised flag on the next run means
the vector store may hold vectors the manifest does not know, and triggers a reconciliation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.stores.codeindex._chunker import Chunk
from engram.stores.sqlite import database_errors, sqlite_connect

SQLITE_VARIABLES = 500
"""Ids per ``IN (...)`` query, under SQLite's bound-variable limit."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, kind TEXT NOT NULL, symbol TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, parent TEXT NOT NULL,
    embed_text TEXT NOT NULL, tokens TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks (path);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class FileRecord:
    """What the manifest knows about one indexed file."""

    path: str
    hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the manifest keeps it (location, names, embedded text)."""

    id: str
    path: str
    kind: str
    symbol: str
    start_line: int
    end_line: int
    parent: str


@dataclass(frozen=True)
class NewChunk:
    """A freshly parsed chunk with the text to embed and its BM25 tokens."""

    chunk: Chunk
    embed_text: str
    tokens: tuple[str, ...]


class Manifest:
    """Reads and writes the manifest database (``:memory:`` for in-memory indexes)."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self._conn = conn
        with database_errors(path or Path(":memory:")):
            try:
                self._conn.executescript(SCHEMA)
                self._conn.execute("SELECT count(*) FROM files").fetchone()
            except BaseException:
                conn.close()
                raise

    @classmethod
    def open(cls, path: Path | None) -> Manifest:
        """Open the manifest file, or an in-memory one when ``path`` is None."""
        if path is None:
            return cls(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None))
        return cls(sqlite_connect(path), path)

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def get_meta(self, key: str, default: str = "") -> str:
        """Return a metadata value."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Store a metadata value (committed immediately)."""
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def files(self) -> dict[str, FileRecord]:
        """Return every indexed file by path."""
        rows = self._conn.execute("SELECT path, hash, size, mtime_ns FROM files")
        return {r[0]: FileRecord(*r) for r in rows}

    def records_of(self, paths: Iterable[str]) -> dict[str, FileRecord]:
        """Return the records of those of ``paths`` that are indexed (one query per 500)."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, FileRecord] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._conn.execute(
                f"SELECT path, hash, size, mtime_ns FROM files WHERE path IN ({marks})", batch
            )
            out.update((r[0], FileRecord(*r)) for r in rows)
        return out

    def chunk_ids(self) -> set[str]:
        """Return every chunk id."""
        return {r[0] for r in self._conn.execute("SELECT id FROM chunks")}

    def chunk_ids_of(self, paths: Iterable[str]) -> set[str]:
        """Return the chunk ids of the given files."""
        out: set[str] = set()
        for path in paths:
            rows = self._conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))
            out |= {r[0] for r in rows}
        return out

    def embed_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """Return the embedded text of the given chunks."""
        out: dict[str, str] = {}
        for i in ids:
            row = self._conn.execute("SELECT embed_text FROM chunks WHERE id = ?", (i,)).fetchone()
            if row:
                out[i] = row[0]
        return out

    def chunks(self, ids: Iterable[str]) -> dict[str, StoredChunk]:
        """Return stored chunks by id (unknown ids are absent)."""
        out: dict[str, StoredChunk] = {}
        for i in ids:
            row = self._conn.execute(
                "SELECT id, path, kind, symbol, start_line, end_line, parent FROM chunks "
                "WHERE id = ?",
                (i,),
            ).fetchone()
            if row:
                out[i] = StoredChunk(*row)
        return out

    def all_chunks(self) -> list[StoredChunk]:
        """Return every chunk (without texts), ordered by path and line."""
        rows = self._conn.execute(
            "SELECT id, path, kind, symbol, start_line, end_line, parent FROM chunks "
            "ORDER BY path, start_line"
        )
        return [StoredChunk(*r) for r in rows]

    def tokens_of(self, ids: Sequence[str]) -> tuple[list[str], list[list[str]]]:
        """Return (ids, token lists) of the given chunks, in the order given."""
        found: dict[str, list[str]] = {}
        for start in range(0, len(ids), SQLITE_VARIABLES):
            batch = list(ids[start : start + SQLITE_VARIABLES])
            marks = ",".join("?" * len(batch))
            for i, toks in self._conn.execute(
                f"SELECT id, tokens FROM chunks WHERE id IN ({marks})", batch
            ):
                found[i] = toks.split()
        kept = [i for i in ids if i in found]
        return kept, [found[i] for i in kept]

    def all_tokens(self) -> tuple[list[str], list[list[str]], list[str]]:
        """Return (ids, token lists, paths) of every chunk, ordered by id."""
        ids: list[str] = []
        tokens: list[list[str]] = []
        paths: list[str] = []
        for i, path, toks in self._conn.execute("SELECT id, path, tokens FROM chunks ORDER BY id"):
            ids.append(i)
            paths.append(path)
            tokens.append(toks.split())
        return ids, tokens, paths

    def commit_run(
        self,
        replaced: Iterable[str],
        records: Sequence[FileRecord],
        new_chunks: Sequence[NewChunk],
        generation: int,
    ) -> None:
        """Apply one indexing run atomically and clear the dirty flag.

        Args:
            replaced: Paths whose files and chunks are removed first (changed or deleted).
            records: File rows to write (new, changed, or touched with the same content).
            new_chunks: Chunks of the changed files.
            generation: The new generation number.
        """
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            gone = [(path,) for path in replaced]
            conn.executemany("DELETE FROM chunks WHERE path = ?", gone)
            conn.executemany("DELETE FROM files WHERE path = ?", gone)
            conn.executemany(
                "INSERT OR REPLACE INTO files (path, hash, size, mtime_ns) VALUES (?, ?, ?, ?)",
                [(r.path, r.hash, r.size, r.mtime_ns) for r in records],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO chunks (id, path, kind, symbol, start_line, end_line, "
                "parent, embed_text, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        n.chunk.id,
                        n.chunk.path,
                        n.chunk.kind,
                        n.chunk.symbol,
                        n.chunk.start_line,
                        n.chunk.end_line,
                        n.chunk.parent,
                        n.embed_text,
                        " ".join(n.tokens),
                    )
                    for n in new_chunks
                ],
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)",
                (str(generation),),
            )
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('dirty', '0')")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
