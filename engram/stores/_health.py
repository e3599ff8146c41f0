"""Health checks of every store: the user's databases or servers, a project's indexes.

Checks only read (SQLite files are opened read-only); nothing here repairs. What can be
rebuilt from the project's files (the index, the graph) is marked ``repairable``; the user's
memory and sessions never are: they are reported, and left as they are.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.stores.project import ProjectState, index_is_trusted
from engram.stores.sqlite import CHECKPOINT_DB, MEMORY_DB, connect_read_only

Status = Literal["ok", "missing", "broken", "repaired"]
POSTGRES = "postgres"
CHROMA = "chroma"


@dataclass(frozen=True)
class Health:
    """The state of one store."""

    store: str
    path: str
    status: Status
    detail: str = ""
    repairable: bool = False
    """True when the store can be rebuilt from the project's files."""


def check_home(home: Path, *, databases: bool = True) -> list[Health]:
    """Check ``ENGRAM_HOME`` and the databases in it (memory, sessions).

    ``databases=False`` leaves the SQLite files out (sessions and memory are on a server).
    """
    if home.exists() and not home.is_dir():
        return [Health("ENGRAM_HOME", str(home), "broken", "a file, not a folder")]
    if not home.exists():
        return [Health("ENGRAM_HOME", str(home), "missing", "created on first use")]
    writable = os.access(home, os.W_OK)
    found = [
        Health(
            "ENGRAM_HOME",
            str(home),
            "ok" if writable else "broken",
            "" if writable else "read-only: reads and export work, saving does not",
        )
    ]
    if databases:
        found.append(check_database("memory", home / MEMORY_DB))
        found.append(check_database("sessions", home / CHECKPOINT_DB))
    return found


def check_database(store: str, path: Path, *, repairable: bool = False) -> Health:
    """Run SQLite's own consistency check on ``path``, read-only."""
    if not path.exists():
        return Health(store, str(path), "missing", "created on first use", repairable)
    try:
        conn = connect_read_only(path)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return Health(store, str(path), "broken", str(exc), repairable)
    problems = [str(r[0]) for r in rows if r[0] != "ok"]
    if problems:
        return Health(store, str(path), "broken", "; ".join(problems[:3]), repairable)
    return Health(store, str(path), "ok", "", repairable)


def check_index(root: Path, index_dir: Path) -> Health:
    """Check a project's code index folder: its stamp, its manifest and its BM25 segments."""
    from engram.stores.codeindex import LexicalIndex

    if not (index_dir / "manifest.sqlite").exists():
        return Health("code index", str(index_dir), "missing", "run `engram index`", True)
    if not index_is_trusted(index_dir, root):
        return Health(
            "code index",
            str(index_dir),
            "broken",
            "not written here for this project (another machine or version)",
            True,
        )
    manifest = check_database("code index", index_dir / "manifest.sqlite", repairable=True)
    if manifest.status != "ok":
        return manifest
    for segment in ("base", "delta"):
        if (index_dir / "bm25" / segment).exists() and LexicalIndex.load(
            index_dir / "bm25" / segment
        ) is None:
            return Health(
                "code index", str(index_dir), "broken", f"BM25 {segment} unreadable", True
            )
    return Health("code index", str(index_dir), "ok", "", True)


def check_graph(root: Path, state: ProjectState) -> Health:
    """Check that a project's saved relation index loads and validates."""
    from engram.stores._errors import IndexCorruptError
    from engram.stores.relations import GRAPH_FILE, graph_store_for

    path = str(state.path(*GRAPH_FILE.parts))
    try:
        graph = graph_store_for(root, state).load()
    except IndexCorruptError as exc:
        return Health("relation index", path, "broken", str(exc), True)
    if graph is None:
        return Health("relation index", path, "missing", "run `engram index`", True)
    return Health("relation index", path, "ok", f"{len(graph.facts)} files", True)


def check_postgres(url: str) -> Health:
    """Check the Postgres server sessions and memory live in: reachable, its version, tables."""
    from engram.stores._errors import BackendUnavailableError
    from engram.stores.sqlite import postgres_server, probe_postgres

    try:
        report = probe_postgres(url)
    except BackendUnavailableError as exc:
        detail = f"{exc}; start the server, or fix or unset ENGRAM_DATABASE_URL"
        return Health(POSTGRES, postgres_server(url), "broken", detail)
    where = f"PostgreSQL {report.version}; sessions and memory"
    if report.missing_tables:
        missing = ", ".join(report.missing_tables)
        detail = f"{where}; created on first use: {missing}"
        return Health(POSTGRES, report.server, "missing", detail)
    return Health(POSTGRES, report.server, "ok", f"{where}; engram's tables present")


def check_chroma(url: str) -> Health:
    """Check the Chroma server the code index keeps its vectors on: heartbeat and version."""
    from engram.stores._errors import BackendUnavailableError
    from engram.stores._url_masking import mask_url_passwords
    from engram.stores.codeindex import probe_chroma

    try:
        report = probe_chroma(url)
    except BackendUnavailableError as exc:
        return Health(CHROMA, mask_url_passwords(url, [url]), "broken", f"{exc}; {exc.hint}")
    return Health(CHROMA, report.server, "ok", f"Chroma {report.version}; code index vectors")
