"""Saving and loading the relation index: the stores and the on-disk format.

The graph lives in ``<project>/.engram/index/relation_index.jsonl``: JSON lines, written
atomically — a header (format, version, id of this save), the per-file (size, mtime) table,
then one ``["F", path, facts]`` line per file and one ``["E", path, edges]`` line per file
with edges. The relation graph itself is not saved: its nodes and edges are derived from the
facts and edges when first used. A full save encodes every file again (0.16 s for Django's
5,375 files) rather than keep each file's saved line in memory (24 MB there, held by every
long-lived process for a rare full rewrite). An incremental update writes only what
changed since that file was written, to ``relation_index.delta.jsonl`` (also atomically), tagged
with the id of the full file it applies to; loading applies it.

Every value read back is validated (``graph_codec``); nothing in these files can run code.
A file of another format or version, a malformed one, or one in an index folder this engram
did not stamp for this project (``_index_trust``) is reported as corrupt, so the
caller rebuilds the graph instead of reading it.
"""

from __future__ import annotations

import gc
import uuid
from pathlib import Path
from typing import Any, Protocol

import orjson

from engram.stores._errors import IndexCorruptError
from engram.stores.files import write_atomically
from engram.stores.project import ProjectState, claim_index_dir, index_is_trusted
from engram.stores.relations._codec import (
    Shared,
    decode_edges,
    decode_facts,
    encode_edges,
    encode_facts,
)
from engram.stores.relations._digraph import gc_paused
from engram.stores.relations._model import RelationIndex
from engram.stores.relations._names import FileEdges
from engram.stores.relations._symbols import FileFacts
from engram.stores.relations._update import apply_changes

GRAPH_FILE = Path("index") / "code_graph.jsonl"
"""Inside the project's state folder under ENGRAM_HOME."""
FORMAT = "engram-code-graph"
FORMAT_VERSION = 5
"""Version of the saved layout; a graph saved by another version is rebuilt, not read."""
DELTA_MAX_FILES = 64
DELTA_MAX_FRACTION = 0.05
"""A delta covering more files than both limits is folded into a full rewrite instead."""


class GraphStore(Protocol):
    """Where a project's graph is kept between runs."""

    def load(self) -> RelationIndex | None:
        """Return the saved graph, or None when none was saved."""
        ...

    def save(self, graph: RelationIndex) -> None:
        """Replace the saved graph with ``graph``."""
        ...


class InMemoryGraphStore:
    """Keeps the graph in memory (tests, throwaway runs)."""

    def __init__(self) -> None:
        self._saved: bytes | None = None

    def load(self) -> RelationIndex | None:
        """Return a copy of the saved graph, or None."""
        return None if self._saved is None else _decode(self._saved)

    def save(self, graph: RelationIndex) -> None:
        """Keep a snapshot of ``graph``."""
        self._saved = _encode(graph)


class FileGraphStore:
    """Keeps the graph in a JSON-lines file plus a small delta file, each replaced atomically.

    A save after a small change writes only the changed files' facts and edges (the delta,
    tagged with the id of the full file it applies to); a large change, or no full file yet,
    rewrites the full file and drops the delta. A crash between the two leaves a delta whose
    id no longer matches, which loading ignores.

    With ``root`` set, the folder must carry the stamp of that project root
    (``_index_trust``): loading an unstamped folder raises ``IndexCorruptError``
    without reading it, and saving discards the folder's untrusted contents first.
    """

    def __init__(self, path: Path, root: Path | None = None, *, home: Path | None = None) -> None:
        self.path = path
        self.root = root
        self.home = home
        """ENGRAM_HOME: the stamped folder is claimed below it, following no link."""
        self.delta_path = path.with_name(f"{path.stem}.delta{path.suffix}")

    def load(self) -> RelationIndex | None:
        """Read the graph file and apply its delta; None when no graph was saved.

        Raises:
            IndexCorruptError: A file exists but cannot be read as a graph of this version,
                or the index folder was not written here for this project.
        """
        if not self.path.exists():
            return None
        if self.root is not None and not index_is_trusted(self.path.parent, self.root):
            raise IndexCorruptError(
                f"the relation index in {self.path.parent} was not written here for this project "
                "(another machine, an older index format, or shipped with the repository)"
            )
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        graph = _decode(data, source=str(self.path))
        try:
            delta = self.delta_path.read_bytes()
        except FileNotFoundError:
            return graph
        _apply_delta(graph, delta, source=str(self.delta_path))
        return graph

    def save(self, graph: RelationIndex) -> None:
        """Write the delta since the full file, or the full file when the delta grew large."""
        base = self.home if self.home is not None else self.path.parent.parent
        if self.root is not None and claim_index_dir(self.path.parent, self.root, home=base):
            graph._base_id = ""  # the folder was discarded: the next write is a full one
        limit = max(DELTA_MAX_FILES, int(len(graph.facts) * DELTA_MAX_FRACTION))
        if graph._base_id and len(graph._pending) <= limit and self.path.exists():
            write_atomically(self.delta_path, _encode_delta(graph))
            return
        write_atomically(self.path, _encode(graph))
        self.delta_path.unlink(missing_ok=True)


def _line(value: Any) -> bytes:
    return orjson.dumps(value) + b"\n"


def _stats_line(graph: RelationIndex) -> bytes:
    return _line({"stats": {p: list(s) for p, s in graph.stats.items()}})


def _facts_line(graph: RelationIndex, path: str) -> bytes:
    return _line(["F", path, encode_facts(graph.facts[path])])


def _encode(graph: RelationIndex) -> bytes:
    graph._base_id = uuid.uuid4().hex
    graph._pending.clear()
    parts = [
        _line({"format": FORMAT, "version": FORMAT_VERSION, "id": graph._base_id}),
        _stats_line(graph),
    ]
    with gc_paused():
        parts += [_facts_line(graph, path) for path in graph.facts]
        parts += [_line(["E", path, encode_edges(edges)]) for path, edges in graph.edges.items()]
    return b"".join(parts)


def _encode_delta(graph: RelationIndex) -> bytes:
    parts = [
        _line({"format": FORMAT, "version": FORMAT_VERSION, "base": graph._base_id}),
        _stats_line(graph),
    ]
    for path in sorted(graph._pending):
        if path in graph.facts:
            parts.append(_facts_line(graph, path))
        else:
            parts.append(_line(["F", path, None]))
        edges = graph.edges.get(path)
        parts.append(_line(["E", path, None if edges is None else encode_edges(edges)]))
    return b"".join(parts)


class _Saved:
    """One saved file read back: its header and its validated records, in file order."""

    def __init__(self, data: bytes, what: str) -> None:
        self._same = Shared()
        lines = data.splitlines(keepends=True)
        if len(lines) < 2:
            raise ValueError("the file is truncated")
        header = orjson.loads(lines[0])
        if (
            not isinstance(header, dict)
            or header.get("format") != FORMAT
            or header.get("version") != FORMAT_VERSION
        ):
            raise IndexCorruptError(f"{what} has an old or unknown format")
        self.header: dict[str, Any] = header
        stats = orjson.loads(lines[1]).get("stats")
        if not isinstance(stats, dict):
            raise ValueError("no file table")
        self.stats: dict[str, tuple[int, int]] = {}
        for path, pair in stats.items():
            if not (
                isinstance(pair, list) and len(pair) == 2 and all(type(x) is int for x in pair)
            ):
                raise ValueError(f"malformed file table entry for {path!r}")
            self.stats[path] = (pair[0], pair[1])
        self.facts: dict[str, FileFacts | None] = {}
        self.edges: dict[str, FileEdges | None] = {}
        for line in lines[2:]:
            self._record(line)

    def _record(self, line: bytes) -> None:
        record = orjson.loads(line)
        if not (
            isinstance(record, list)
            and len(record) == 3
            and record[0] in ("F", "E")
            and isinstance(record[1], str)
        ):
            raise ValueError("malformed record")
        tag, path, value = record
        if tag == "F":
            self.facts[path] = None if value is None else decode_facts(path, value, self._same)
        else:
            self.edges[path] = None if value is None else decode_edges(value, self._same)


def _read(data: bytes, source: str, what: str) -> _Saved:
    try:
        return _Saved(data, f"{what} {source}")
    except IndexCorruptError:
        raise
    except (ValueError, RecursionError, AttributeError, TypeError) as exc:
        raise IndexCorruptError(f"cannot read {what} {source}: {exc}") from exc


def _decode(data: bytes, *, source: str = "memory") -> RelationIndex:
    with gc_paused():
        saved = _read(data, source, "relation index")
        if (
            not isinstance(saved.header.get("id"), str)
            or None in saved.facts.values()
            or None in saved.edges.values()
        ):
            raise IndexCorruptError(f"relation index {source} is not a full save")
        facts: dict[str, FileFacts] = {p: f for p, f in saved.facts.items() if f is not None}
        edges: dict[str, FileEdges] = {p: e for p, e in saved.edges.items() if e is not None}
        # The graph lives as long as the process: move it out of the collector's view,
        # or the first collection after loading scans all of it (seconds on a large tree).
        gc.freeze()
    # The relation graph is derived from these on first use (``RelationIndex.graph``).
    return RelationIndex(facts, edges, saved.stats, _base_id=saved.header["id"])


def _apply_delta(graph: RelationIndex, data: bytes, *, source: str) -> None:
    """Apply a saved delta to the graph read from its full file (a stale delta is ignored)."""
    with gc_paused():
        saved = _read(data, source, "relation index delta")
        if saved.header.get("base") != graph._base_id:
            return
        apply_changes(graph, saved.facts, saved.edges)
        gc.freeze()
    graph.stats = saved.stats
    graph._pending = set(saved.facts) | set(saved.edges)


def graph_store_for(project: Path, state: ProjectState) -> FileGraphStore:
    """Return the file store of ``project``'s graph, in its state folder (stamped for it)."""
    root = project.expanduser().resolve()
    return FileGraphStore(state.path(*GRAPH_FILE.parts), root, home=state.home)
