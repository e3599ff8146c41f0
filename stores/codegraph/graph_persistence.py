"""Saving and loading the code graph: the stores and the on-disk format.

The graph lives in ``<project>/.engram/index/code_graph.pkl`` together with its manifest
(per-file size, mtime and content hash), written atomically. Each file's facts are pickled on
their own and kept as bytes, so saving again re-encodes only the files that changed. An
incremental update writes only what changed since that file was written, to
``code_graph.delta.pkl`` (also atomically), tagged with the id of the full file it applies to;
loading applies it. A file written by another ``FORMAT_VERSION`` is reported as corrupt, so the
caller rebuilds the graph instead of reading it.
"""

from __future__ import annotations

import gc
import io
import pickle
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from engram.stores.atomic_file import write_atomically
from engram.stores.codegraph.graph_model import CodeGraph
from engram.stores.codegraph.graph_update import apply_changes
from engram.stores.codegraph.symbol_extraction import plain
from engram.stores.errors import IndexCorruptError

__all__ = [
    "GRAPH_FILE",
    "GraphStore",
    "InMemoryGraphStore",
    "PickleGraphStore",
    "gc_paused",
    "graph_store_for",
]

GRAPH_FILE = Path(".engram") / "index" / "code_graph.pkl"
FORMAT_VERSION = 4
"""Version of the saved layout; a graph saved by another version is rebuilt, not read."""
DELTA_MAX_FILES = 64
DELTA_MAX_FRACTION = 0.05
"""A delta covering more files than both limits is folded into a full rewrite instead."""


class GraphStore(Protocol):
    """Where a project's graph is kept between runs."""

    def load(self) -> CodeGraph | None:
        """Return the saved graph, or None when none was saved."""
        ...

    def save(self, graph: CodeGraph) -> None:
        """Replace the saved graph with ``graph``."""
        ...


class InMemoryGraphStore:
    """Keeps the graph in memory (tests, throwaway runs)."""

    def __init__(self) -> None:
        self._saved: bytes | None = None

    def load(self) -> CodeGraph | None:
        """Return a copy of the saved graph, or None."""
        return None if self._saved is None else _decode(self._saved)

    def save(self, graph: CodeGraph) -> None:
        """Keep a snapshot of ``graph``."""
        self._saved = _encode(graph)


class PickleGraphStore:
    """Keeps the graph in a pickle file plus a small delta file, each replaced atomically.

    A save after a small change writes only the changed files' facts and edges (the delta,
    tagged with the id of the full file it applies to); a large change, or no full file yet,
    rewrites the full file and drops the delta. A crash between the two leaves a delta whose
    id no longer matches, which loading ignores.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.delta_path = path.with_name(f"{path.stem}.delta{path.suffix}")

    def load(self) -> CodeGraph | None:
        """Read the graph file and apply its delta; None when no graph was saved.

        Raises:
            IndexCorruptError: A file exists but cannot be read as a graph of this version.
        """
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

    def save(self, graph: CodeGraph) -> None:
        """Write the delta since the full file, or the full file when the delta grew large."""
        limit = max(DELTA_MAX_FILES, int(len(graph.facts) * DELTA_MAX_FRACTION))
        if graph._base_id and len(graph._pending) <= limit and self.path.exists():
            write_atomically(self.delta_path, _encode_delta(graph))
            return
        write_atomically(self.path, _encode(graph))
        self.delta_path.unlink(missing_ok=True)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector off for the block (restored as it was after)."""
    # Unpickling creates ~10^5 containers; the cyclic GC would rescan them over and over
    # (about 60% of load time on a large tree) although none of them is garbage.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _encode(graph: CodeGraph) -> bytes:
    saved = graph._saved_facts
    with gc_paused():
        for path, facts in graph.facts.items():
            if path not in saved:
                saved[path] = pickle.dumps(plain(facts), protocol=pickle.HIGHEST_PROTOCOL)
    for path in [p for p in saved if p not in graph.facts]:
        del saved[path]
    graph._base_id = uuid.uuid4().hex
    graph._pending.clear()
    payload = {
        "version": FORMAT_VERSION,
        "id": graph._base_id,
        "facts": saved,
        "edges": graph.edges,
        "stats": graph.stats,
        "graph": graph.graph,
    }
    with gc_paused():
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


_SYMBOLS = "engram.stores.codegraph.symbol_extraction"
_EDGES = "engram.stores.codegraph.name_resolution"
LOADABLE = frozenset({
    (_SYMBOLS, "Definition"), (_SYMBOLS, "Import"), (_SYMBOLS, "Reference"),
    (_SYMBOLS, "FileFacts"), (_EDGES, "FileEdges"),
})
LOADABLE_MODULES = frozenset({
    "networkx.classes.multidigraph", "networkx.classes.coreviews", "networkx.classes.reportviews",
})
"""Modules whose classes a graph file may name: networkx's graph and the views it caches."""
"""engram's classes a code graph file may name: unpickling anything else (``os.system``, a
class that runs code when rebuilt) is refused, so a graph file planted in a cloned
repository cannot execute code."""
RENAMED_MODULES = {"stores.graph_extract": _SYMBOLS, "stores.graph_resolve": _EDGES}
"""Where the classes of graph files written by engram 0.1.0 (before the ``engram.`` package
names) live now, so those files still load."""


class _GraphUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the classes in LOADABLE."""

    def find_class(self, module: str, name: str) -> Any:
        module = RENAMED_MODULES.get(module, module)
        if (module, name) not in LOADABLE and module not in LOADABLE_MODULES:
            raise pickle.UnpicklingError(f"a code graph file may not name {module}.{name}")
        return super().find_class(module, name)


def _loads(data: bytes) -> Any:
    return _GraphUnpickler(io.BytesIO(data)).load()


def _decode(data: bytes, *, source: str = "memory") -> CodeGraph:
    try:
        with gc_paused():
            payload: dict[str, Any] = _loads(data)
            if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
                raise IndexCorruptError(f"code graph {source} has an old or unknown format")
            blobs: dict[str, bytes] = payload["facts"]
            facts = {path: _loads(blob) for path, blob in blobs.items()}
            # The graph lives as long as the process: move it out of the collector's view,
            # or the first collection after loading scans all of it (seconds on a large tree).
            gc.freeze()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
            KeyError) as exc:
        raise IndexCorruptError(f"cannot read code graph {source}: {exc}") from exc
    return CodeGraph(facts, payload["edges"], payload["stats"], payload["graph"],
                     _saved_facts=dict(blobs), _base_id=payload["id"])


def _encode_delta(graph: CodeGraph) -> bytes:
    facts: dict[str, bytes | None] = {}
    for path in graph._pending:
        current = graph.facts.get(path)
        if current is None:
            facts[path] = None
            continue
        if path not in graph._saved_facts:
            graph._saved_facts[path] = pickle.dumps(plain(current),
                                                    protocol=pickle.HIGHEST_PROTOCOL)
        facts[path] = graph._saved_facts[path]
    payload = {
        "version": FORMAT_VERSION,
        "base": graph._base_id,
        "facts": facts,
        "edges": {p: graph.edges.get(p) for p in graph._pending},
        "stats": graph.stats,
    }
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def _apply_delta(graph: CodeGraph, data: bytes, *, source: str) -> None:
    """Apply a saved delta to the graph read from its full file (a stale delta is ignored)."""
    try:
        with gc_paused():
            payload: dict[str, Any] = _loads(data)
            if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
                raise IndexCorruptError(f"code graph delta {source} has an unknown format")
            if payload["base"] != graph._base_id:
                return
            blobs: dict[str, bytes | None] = payload["facts"]
            facts = {p: None if b is None else _loads(b)
                     for p, b in blobs.items()}
            apply_changes(graph, facts, payload["edges"])
            gc.freeze()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
            KeyError) as exc:
        raise IndexCorruptError(f"cannot read code graph delta {source}: {exc}") from exc
    for path, blob in blobs.items():
        if blob is None:
            graph._saved_facts.pop(path, None)
        else:
            graph._saved_facts[path] = blob
    graph.stats = payload["stats"]
    graph._pending = set(blobs) | set(payload["edges"])


def graph_store_for(project: Path) -> PickleGraphStore:
    """Return the file store of ``project``'s graph."""
    return PickleGraphStore(project / GRAPH_FILE)
