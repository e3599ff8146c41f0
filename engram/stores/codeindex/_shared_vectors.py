"""Chunk vectors on a Chroma server, shared by every checkout of a project and keyed by content.

A vector's id on the server is the hash of the embedding model and the text it embeds, so two
checkouts that hold the same chunk (any path, any branch) share one vector, and a teammate's
first index of a fresh clone embeds only what nobody indexed before. No index run deletes a
vector on the server: each checkout keeps, beside its manifest, its own list of the vectors it
uses (``uses``: chunk id → content key), and removing a chunk removes it from that list only.

Vectors nobody uses any more are collected only by an explicit ``engram index --gc``. Every
index run leaves a *lease* on the server naming the keys its checkout uses; the collection
removes a vector only when no lease younger than ``LEASE_DAYS`` names it. A checkout that last
indexed before that, or indexed during the collection, finds the vectors it lost missing at its
next index run (each run checks that the server still holds every vector the checkout uses)
and embeds them again; nothing is ever answered from a vector that is not there.
"""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engram.stores.sqlite import database_errors, sqlite_connect

LEASE_DAYS = 30
"""A checkout's lease keeps the vectors it names from ``--gc`` this long after its last index."""
LEASE_KEYS_PER_RECORD = 5000
"""Content keys per lease record (one record's document stays a few hundred kilobytes)."""
SERVER_BATCH = 2000
"""Ids per Chroma call; under the server's maximum batch size."""
QUERY_WIDENING = 4
"""How much wider each retry of a query reaches when other checkouts' vectors crowd it."""
MAX_QUERY_DEPTH = 4000
"""Beyond this many neighbours, a query searches only this checkout's vectors by id."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS uses (chunk_id TEXT PRIMARY KEY, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS uses_key ON uses (key);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def content_key(model_id: str, text: str) -> str:
    """Return the server id of the vector ``model_id`` gives ``text``."""
    return hashlib.sha256(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass(frozen=True)
class GcReport:
    """What ``engram index --gc`` found and removed on the server."""

    vectors: int
    """Vectors in the project's collection before the collection."""
    kept: int
    removed: int
    leases: int
    """Checkouts whose lease (younger than ``LEASE_DAYS``) kept vectors."""
    expired_leases: int


class SharedChromaVectors:
    """A ``VectorStore`` over a project's shared, content-addressed Chroma collection."""

    shared = True

    def __init__(
        self, collection: Any, leases: Any, uses_path: Path | None, model_id: str, checkout: str
    ) -> None:
        self._collection = collection
        self._leases = leases
        self._model_id = model_id
        self.checkout = checkout
        """This checkout's lease id (machine, ``ENGRAM_HOME`` and path, hashed)."""
        path = uses_path or Path(":memory:")
        self._path = path
        conn = (
            sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            if uses_path is None
            else sqlite_connect(uses_path)
        )
        with database_errors(path):
            conn.executescript(SCHEMA)
        self._conn = conn

    # The VectorStore protocol, by chunk id.

    def adopt(self, ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        """Record which vector each chunk uses; return the ids whose vector must be embedded.

        A chunk whose text some checkout embedded already takes that vector as it is.
        """
        keys = [content_key(self._model_id, text) for text in texts]
        with database_errors(self._path):
            self._conn.executemany(
                "INSERT OR REPLACE INTO uses (chunk_id, key) VALUES (?, ?)",
                list(zip(ids, keys, strict=True)),
            )
        held = self._held(set(keys))
        return [i for i, key in zip(ids, keys, strict=True) if key not in held]

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Write the vectors of chunks ``adopt`` found missing on the server.

        Raises:
            ValueError: A chunk was not adopted first (its content key is unknown).
        """
        keys = self._keys_of(ids)
        unknown = [i for i in ids if i not in keys]
        if unknown:
            raise ValueError(f"{len(unknown)} chunks were not adopted before their upsert")
        pairs = [(keys[i], v) for i, v in zip(ids, vectors, strict=True)]
        unique = dict(pairs)  # two chunks with one text share one vector
        order = list(unique)
        for start in range(0, len(order), SERVER_BATCH):
            batch = order[start : start + SERVER_BATCH]
            self._collection.upsert(
                ids=batch, embeddings=np.asarray([unique[k] for k in batch], dtype=np.float32)
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Stop using these chunks' vectors (the server keeps them for other checkouts)."""
        with database_errors(self._path):
            for start in range(0, len(ids), SERVER_BATCH):
                batch = list(ids[start : start + SERVER_BATCH])
                marks = ",".join("?" * len(batch))
                self._conn.execute(f"DELETE FROM uses WHERE chunk_id IN ({marks})", batch)

    def ids(self) -> set[str]:
        """Return the chunks whose vector the server still holds (checked on the server)."""
        uses = self._uses()
        held = self._held(set(uses.values()))
        return {chunk for chunk, key in uses.items() if key in held}

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return up to ``k`` of this checkout's chunks nearest to ``vector``.

        The server's nearest vectors may belong to other checkouts only; the search widens
        until ``k`` of this checkout's are found, then searches this checkout's keys alone.
        """
        total = self._collection.count()
        if k <= 0 or total == 0:
            return []
        owners = self._owners()
        depth = min(max(k * QUERY_WIDENING, 50), total)
        while True:
            found = self._nearest(vector, depth, None)
            hits = [(chunk, score) for key, score in found for chunk in owners.get(key, ())]
            if len(hits) >= k or depth >= total:
                return hits[:k]
            if depth >= MAX_QUERY_DEPTH:
                break
            depth = min(depth * QUERY_WIDENING, total)
        found = self._nearest(vector, min(k, len(owners)), sorted(owners))
        return [(chunk, score) for key, score in found for chunk in owners.get(key, ())][:k]

    # What only a shared store does.

    def settle(self, chunk_ids: Iterable[str]) -> None:
        """Keep exactly ``chunk_ids`` in use and renew this checkout's lease on the server.

        The lease is rewritten only when the keys in use changed since the last one.
        """
        keep = set(chunk_ids)
        stale = [chunk for chunk in self._uses() if chunk not in keep]
        self.delete(stale)
        keys = sorted(set(self._uses().values()))
        digest = hashlib.sha256("\n".join(keys).encode("ascii")).hexdigest()
        if digest == self._meta("lease_digest") and not self._lease_due():
            return
        self._write_lease(keys)
        self._set_meta("lease_digest", digest)
        self._set_meta("lease_time", str(int(time.time())))

    def missing(self) -> int:
        """Count this checkout's chunks whose vector is gone from the server."""
        return len(self._uses()) - len(self.ids())

    def gc(self, *, now: float | None = None) -> GcReport:
        """Remove the vectors no live lease names (this checkout's lease renewed first)."""
        self.settle(self._uses())
        moment = time.time() if now is None else now
        cutoff = moment - LEASE_DAYS * 86400
        records = self._leases.get(include=["metadatas", "documents"])
        keep: set[str] = set(self._uses().values())
        live, expired_ids, expired = set(), [], set()
        for record_id, meta, document in zip(
            records["ids"], records["metadatas"] or [], records["documents"] or [], strict=False
        ):
            owner = str((meta or {}).get("checkout", record_id))
            if float((meta or {}).get("updated", 0)) < cutoff:
                expired_ids.append(record_id)
                expired.add(owner)
                continue
            live.add(owner)
            keep.update((document or "").split())
        stored = set(self._collection.get(include=[])["ids"])
        doomed = sorted(stored - keep)
        for start in range(0, len(doomed), SERVER_BATCH):
            self._collection.delete(ids=doomed[start : start + SERVER_BATCH])
        for start in range(0, len(expired_ids), SERVER_BATCH):
            self._leases.delete(ids=expired_ids[start : start + SERVER_BATCH])
        return GcReport(
            vectors=len(stored),
            kept=len(stored) - len(doomed),
            removed=len(doomed),
            leases=len(live),
            expired_leases=len(expired - live),
        )

    def close(self) -> None:
        """Close the list of vectors in use."""
        self._conn.close()

    # Helpers.

    def _nearest(
        self, vector: np.ndarray, depth: int, within: list[str] | None
    ) -> list[tuple[str, float]]:
        if depth <= 0:
            return []
        found = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=depth,
            include=["distances"],
            **({"ids": within} if within is not None else {}),
        )
        ids, distances = found["ids"][0], found["distances"][0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def _held(self, keys: set[str]) -> set[str]:
        """Return which of ``keys`` the server holds."""
        ordered = sorted(keys)
        held: set[str] = set()
        for start in range(0, len(ordered), SERVER_BATCH):
            batch = ordered[start : start + SERVER_BATCH]
            held.update(self._collection.get(ids=batch, include=[])["ids"])
        return held

    def _uses(self) -> dict[str, str]:
        with database_errors(self._path):
            return dict(self._conn.execute("SELECT chunk_id, key FROM uses").fetchall())

    def _owners(self) -> dict[str, tuple[str, ...]]:
        owners: dict[str, list[str]] = {}
        for chunk, key in self._uses().items():
            owners.setdefault(key, []).append(chunk)
        return {key: tuple(sorted(chunks)) for key, chunks in owners.items()}

    def _keys_of(self, ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with database_errors(self._path):
            for start in range(0, len(ids), SERVER_BATCH):
                batch = list(ids[start : start + SERVER_BATCH])
                marks = ",".join("?" * len(batch))
                found.update(
                    self._conn.execute(
                        f"SELECT chunk_id, key FROM uses WHERE chunk_id IN ({marks})", batch
                    ).fetchall()
                )
        return found

    def _write_lease(self, keys: list[str]) -> None:
        parts = [
            "\n".join(keys[start : start + LEASE_KEYS_PER_RECORD])
            for start in range(0, len(keys), LEASE_KEYS_PER_RECORD)
        ] or [""]
        updated = int(time.time())
        ids = [f"{self.checkout}:{n}" for n in range(len(parts))]
        self._leases.upsert(
            ids=ids,
            embeddings=np.ones((len(parts), 1), dtype=np.float32),
            documents=parts,
            metadatas=[{"checkout": self.checkout, "updated": updated} for _ in parts],
        )
        older = self._leases.get(where={"checkout": self.checkout}, include=[])["ids"]
        extra = [i for i in older if i not in set(ids)]
        if extra:
            self._leases.delete(ids=extra)

    def _lease_due(self) -> bool:
        """Whether the lease is old enough to renew though nothing changed (a tenth of its life)."""
        last = int(self._meta("lease_time") or 0)
        return time.time() - last > LEASE_DAYS * 86400 / 10

    def _meta(self, key: str) -> str:
        with database_errors(self._path):
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else ""

    def _set_meta(self, key: str, value: str) -> None:
        with database_errors(self._path):
            self._conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)
            )


def checkout_id(home: Path, root: Path) -> str:
    """Return the lease id of one checkout: this machine, this ``ENGRAM_HOME``, this folder."""
    text = f"{socket.gethostname()}\0{Path(home).absolute()}\0{root}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
