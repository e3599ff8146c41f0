"""The code index of one project: search over chunks (exact, BM25, dense, hybrid) and files.

On disk under ``<project>/.engram/index/``: ``manifest.sqlite`` (files, chunks, tokens),
``bm25/`` (bm25s, replaced atomically) and ``chroma/`` (vectors; or a Chroma server). Updating
is in ``engram.stores.codeindex._incremental``.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Literal, ParamSpec, Protocol, TypeVar, runtime_checkable

from engram.stores._errors import DatabaseUnreadableError, IndexCorruptError, IndexNotBuiltError
from engram.stores._write_lock import LockFactory, file_lock
from engram.stores.codeindex._bm25 import SegmentedLexical, code_tokens, query_tokens
from engram.stores.codeindex._bm25_segments import refresh_lexical
from engram.stores.codeindex._chunk_pointing import (
    DEEP_FILES,
    MAX_DEEP_CHUNKS,
    MAX_POINTED_CHUNKS,
    TextRanks,
    point_chunks,
)
from engram.stores.codeindex._chunker import TreeHook
from engram.stores.codeindex._exact import (
    Located,
    exact_terms,
    is_path_term,
    score_term_chunks,
)
from engram.stores.codeindex._file_kinds import FileKind
from engram.stores.codeindex._fusion import DEFAULT_WEIGHTS, FILE_DECAY, aggregate_files, rrf
from engram.stores.codeindex._history_evidence import HistoryTables
from engram.stores.codeindex._history_source import IndexHistory
from engram.stores.codeindex._hits import CodeHit, FileHit
from engram.stores.codeindex._incremental import IndexProgress, IndexStats, update_index
from engram.stores.codeindex._issue_reading import read_issue
from engram.stores.codeindex._localization import (
    LOCALIZER_SOURCE,
    ProjectFiles,
    issue_query,
    localize,
)
from engram.stores.codeindex._manifest import Manifest
from engram.stores.codeindex._shared_vectors import GcReport, SharedChromaVectors, checkout_id
from engram.stores.codeindex._vectors import (
    InMemoryVectors,
    VectorStore,
    open_chroma_vectors,
    release_embedded_chroma,
)
from engram.stores.embeddings import Embedder
from engram.stores.files import WalkReport
from engram.stores.project import ProjectState, claim_index_dir

log = logging.getLogger(__name__)

INDEX_DIR = "index"
"""Where a project's index lives, inside its state folder under ENGRAM_HOME."""
UPDATE_LOCK = "update.lock"
"""The file in the index folder whose ``flock`` lets one update run at a time."""

SearchMode = Literal["exact", "semantic", "hybrid", "bm25", "dense"]

CANDIDATES_PER_LIST = 100
"""Chunks each ranked list contributes to chunk search."""

COMMON_TERM_SHARE = 0.2
"""Identifiers found in more than this share of all chunks are ignored by the exact list."""

MIN_CHUNKS_FOR_COMMON = 200
"""Small indexes never treat a term as common (every term is rare in a tiny project)."""

FILE_CANDIDATES_PER_LIST = 1000
"""Chunks each ranked list contributes to file search (files need evidence beyond the top)."""


@runtime_checkable
class CodeIndex(Protocol):
    """Search over one project's code."""

    def update(
        self,
        progress: Callable[[IndexProgress], None] | None = None,
        *,
        walk: WalkReport | None = None,
        on_tree: TreeHook | None = None,
    ) -> IndexStats:
        """Bring the index up to date with the files on disk (incrementally).

        ``walk`` is the project walk when the caller has one already (so one walk serves the
        code index and the relation index); ``on_tree`` is given each syntax tree parsed (so
        one parse serves both too).
        """
        ...

    def search(self, query: str, *, mode: SearchMode = "hybrid", k: int = 10) -> list[CodeHit]:
        """Return the ``k`` best chunks for ``query``."""
        ...

    def search_files(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        prefer: Iterable[FileKind] = ("source",),
    ) -> list[FileHit]:
        """Return the ``k`` best files for ``query`` (source files first unless ``prefer``)."""
        ...

    def is_built(self) -> bool:
        """Return True once a first update has completed."""
        ...

    def embedded_with_other_model(self) -> str:
        """Return the model the stored vectors came from if not the current one, else ""."""
        ...


_T = TypeVar("_T")
_P = ParamSpec("_P")


def _serialized(method: Callable[_P, _T]) -> Callable[_P, _T]:
    """Run a ProjectCodeIndex method under the instance's lock."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        with args[0]._lock:  # type: ignore[attr-defined]
            return method(*args, **kwargs)

    return wrapper


class ProjectCodeIndex:
    """Code index over a manifest, a BM25 index and a vector store."""

    def __init__(
        self,
        root: Path,
        *,
        embedder: Embedder,
        manifest: Manifest,
        vectors: VectorStore,
        bm25_dir: Path | None,
        weights: Mapping[str, float] | None = None,
        file_decay: float = FILE_DECAY,
        history: IndexHistory | None = None,
    ) -> None:
        self.root = root
        self.history = history
        """The checkout's mined history (None: ranking without history)."""
        self.file_decay = file_decay
        self.embedder = embedder
        self.manifest = manifest
        self.vectors = vectors
        self.bm25_dir = bm25_dir
        self.weights = dict(weights or DEFAULT_WEIGHTS)
        self.degraded = False
        """Opened with stand-in vectors (a server that was down): reopening may reach it."""
        self._lexical: tuple[SegmentedLexical, int] | None = None
        self._located: tuple[int, dict[str, Located]] | None = None
        self._files: tuple[int, ProjectFiles] | None = None
        self._by_file: (
            tuple[dict[str, Located], dict[str, tuple[Located, ...]], dict[str, tuple[int, int]]]
            | None
        ) = None
        """The chunk map it was derived from, each file's chunks, each file's (size, mtime)."""
        # Nodes and tools may call one index from worker threads; SQLite connections and the
        # cached segments are not safe to share concurrently.
        self._lock = threading.RLock()
        self._update_lock: LockFactory = (
            file_lock(bm25_dir.parent / UPDATE_LOCK)
            if bm25_dir is not None
            else (lambda name: nullcontext())
        )

    @_serialized
    def is_built(self) -> bool:
        """Return True once a first update has completed."""
        return self.manifest.get_meta("generation") != ""

    @_serialized
    def embedded_with_other_model(self) -> str:
        """Return the model the stored vectors came from if not the current one, else "".

        Vectors live in one collection per model, so after a model change dense search finds
        nothing until ``update`` re-embeds the chunks.
        """
        stored = self.manifest.get_meta("model_id")
        return stored if stored and stored != self.embedder.model_id else ""

    @_serialized
    def update(
        self,
        progress: Callable[[IndexProgress], None] | None = None,
        *,
        walk: WalkReport | None = None,
        on_tree: TreeHook | None = None,
    ) -> IndexStats:
        """Index new and changed files, drop vanished ones, rebuild BM25 when needed.

        One update at a time per index folder, across processes too (an ``flock``): ``engram
        index``, another command's incremental pass and ``engram serve``'s watcher may start
        one at the same moment.
        """
        with self._update_lock("update"):
            return self._update(progress, walk, on_tree)

    def _update(
        self,
        progress: Callable[[IndexProgress], None] | None,
        walk: WalkReport | None,
        on_tree: TreeHook | None,
    ) -> IndexStats:
        # git reads the history in its own process while the files are chunked and embedded;
        # leaving the pool waits for it, so it never writes after the update lock is released
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-history") as pool:
            mining = pool.submit(self.history.refresh) if self.history is not None else None
            stats, lexical = update_index(
                self.root,
                manifest=self.manifest,
                vectors=self.vectors,
                embedder=self.embedder,
                bm25_dir=self.bm25_dir,
                progress=progress,
                walk=walk,
                on_tree=on_tree,
            )
        generation = int(self.manifest.get_meta("generation", "0"))
        self._lexical = (lexical, generation) if lexical is not None else None
        if mining is not None:
            mining.result()  # what the mining raised, raised here
        return stats

    @_serialized
    def changed_since_indexed(self, paths: Iterable[str]) -> list[str]:
        """Return which of ``paths`` changed on disk (or vanished) since the last update.

        Compared by size and modification time with the manifest, one ``stat`` per path: a
        command says so rather than answer from an index older than the files it shows.
        """
        wanted = list(dict.fromkeys(paths))
        records = self.manifest.records_of(wanted)
        changed = []
        for path in wanted:
            record = records.get(path)
            if record is None:
                continue  # not indexed (found by exact search on the fly): nothing to compare
            try:
                info = (self.root / path).stat()
            except OSError:
                changed.append(path)
                continue
            if info.st_size != record.size or info.st_mtime_ns != record.mtime_ns:
                changed.append(path)
        return changed

    @_serialized
    def missing_vectors(self) -> int:
        """Count indexed chunks whose vector is not in the vector store (0 when whole)."""
        if isinstance(self.vectors, SharedChromaVectors):
            return self.vectors.missing()
        return len(self.manifest.chunk_ids() - self.vectors.ids())

    @_serialized
    def collect_garbage(self) -> GcReport | None:
        """Remove shared vectors no checkout uses (``engram index --gc``); None when local.

        Raises:
            BackendUnavailableError: The Chroma server cannot be reached.
        """
        if not isinstance(self.vectors, SharedChromaVectors):
            return None
        return self.vectors.gc()

    def history_tables(self) -> HistoryTables | None:
        """Return the checkout's history read for ranking; None without a usable one."""
        return self.history.tables() if self.history is not None else None

    def _bm25(self) -> SegmentedLexical:
        generation = int(self.manifest.get_meta("generation", "0"))
        if self._lexical is None or self._lexical[1] != generation:
            lexical = refresh_lexical(self.manifest, self.bm25_dir, generation)
            if lexical is None:  # only when load=False
                raise AssertionError("refresh_lexical returned no index")
            self._lexical = (lexical, generation)
        return self._lexical[0]

    def ranked_lists(
        self, query: str, mode: SearchMode, depth: int = CANDIDATES_PER_LIST
    ) -> dict[str, list[tuple[str, float]]]:
        """Return the (chunk id, score) lists that ``mode`` draws on, best first."""
        if not self.is_built():
            raise IndexNotBuiltError(f"no code index for {self.root}")
        lists: dict[str, list[tuple[str, float]]] = {}
        if mode in {"exact", "hybrid"}:
            located = self._identifier_hits(exact_terms(query))
            lists["exact"] = [(loc.key, score) for loc, score in located[:depth]]
        if mode in {"bm25", "hybrid"}:
            lists["bm25"] = self._bm25().top(query_tokens(query), depth)
        if mode in {"dense", "semantic", "hybrid"}:
            vector = self.embedder.embed([query])[0]
            known = self._chunk_map()
            hits = self.vectors.query(vector, depth)
            # Vectors the manifest does not know are leftovers of an interrupted run.
            lists["dense"] = [(i, s) for i, s in hits if i in known]
        return lists

    def _fused(
        self, query: str, mode: SearchMode, depth: int = CANDIDATES_PER_LIST
    ) -> list[tuple[str, float, str]]:
        lists = self.ranked_lists(query, mode, depth)
        if len(lists) == 1:
            name, items = next(iter(lists.items()))
            return [(i, s, name) for i, s in items]
        fused = rrf({name: [i for i, _ in items] for name, items in lists.items()}, self.weights)
        return [(i, s, "fused") for i, s in fused]

    @_serialized
    def search(self, query: str, *, mode: SearchMode = "hybrid", k: int = 10) -> list[CodeHit]:
        """Return the ``k`` best chunks for ``query``.

        Raises:
            IndexNotBuiltError: ``update`` never completed for this project.
        """
        ranked = self._fused(query, mode)[:k]
        stored = self._chunk_map()
        return [
            CodeHit(c.path, c.start_line, c.end_line, c.symbol, c.kind, round(score, 6), source)
            for i, score, source in ranked
            if (c := stored.get(i)) is not None
        ]

    @_serialized
    def search_files(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        prefer: Iterable[FileKind] = ("source",),
    ) -> list[FileHit]:
        """Return the ``k`` best files for ``query``.

        Hybrid search reads the query as an issue (``localize_files``): text ranks plus what
        it names, with source files first unless ``prefer`` says the task is about tests or
        docs. Other modes score each file by its best chunks in that one list.

        Raises:
            IndexNotBuiltError: ``update`` never completed for this project.
        """
        if mode == "hybrid":
            return self.localize_files(query, k=k, prefer=prefer)
        ranked = self._fused(query, mode, FILE_CANDIDATES_PER_LIST)
        stored = self._chunk_map()
        pairs = [(stored[i].path, s) for i, s, _ in ranked if i in stored]
        reasons: dict[str, list[str]] = {}
        for i, _, source in ranked:
            if i in stored:
                reasons.setdefault(stored[i].path, []).append(f"{stored[i].symbol} [{source}]")
        return [
            FileHit(path, round(score, 6), tuple(reasons[path][:3]))
            for path, score in aggregate_files(pairs, decay=self.file_decay)[:k]
        ]

    @_serialized
    def file_table(self) -> ProjectFiles:
        """Return the indexed files and the names they define, cached per generation."""
        generation = int(self.manifest.get_meta("generation", "0"))
        if self._files is None or self._files[0] != generation:
            # from the chunk map searches already load, not a second read of the manifest
            rows = ((c.path, c.kind, c.symbol) for c in self._chunk_map().values())
            self._files = (generation, ProjectFiles.build(rows))
        return self._files[1]

    @_serialized
    def file_ranks(
        self, query: str, mode: SearchMode, depth: int = FILE_CANDIDATES_PER_LIST
    ) -> list[str]:
        """Return file paths ranked by one list (``bm25`` or ``dense``) of ``query``'s chunks."""
        lists = self.ranked_lists(query, mode, depth)
        stored = self._chunk_map()
        pairs = [(stored[i].path, s) for i, s in lists.get(mode, []) if i in stored]
        return [path for path, _ in aggregate_files(pairs, decay=self.file_decay)]

    def localize_files(
        self, issue: str, *, k: int = 10, prefer: Iterable[FileKind] = ("source",)
    ) -> list[FileHit]:
        """Return the ``k`` files most likely to need a change for an issue, with evidence.

        ``issue`` is a bug report or request, title on its first line.

        Raises:
            IndexNotBuiltError: ``update`` never completed for this project.
        """
        return [
            FileHit(e.path, round(score, 6), tuple(e.ordered_reasons()[:4]))
            for e, score in localize(self, issue, prefer=prefer)[:k]
        ]

    @_serialized
    def localized_chunks(
        self, issue: str, *, files: int = 30, prefer: Iterable[FileKind] = ("source",)
    ) -> list[CodeHit]:
        """Return the localizer's files as evidence, each with the chunks the issue points at.

        For each of the ``files`` best files, its chunks in the order ``point_chunks`` gives
        (traceback frames, names the issue mentions, text matches): all of them for the first
        DEEP_FILES files, the ones pointed at for the rest; the whole file (lines 0-0) when
        nothing points inside it. Scores fall with the file's rank.
        """
        ranked = localize(self, issue, prefer=prefer)[:files]
        by_path = self._chunks_by_file()
        signals = read_issue(issue)
        ranks = TextRanks(
            text=self._text_ranks(issue_query(signals)), title=self._text_ranks(signals.title)
        )
        out: list[CodeHit] = []
        for rank, (e, _) in enumerate(ranked, start=1):
            score = 1.0 / rank
            deep = rank <= DEEP_FILES
            picked = point_chunks(
                by_path.get(e.path, ()),
                e.lines,
                e.names,
                ranks,
                limit=MAX_DEEP_CHUNKS if deep else MAX_POINTED_CHUNKS,
                fill=deep,
                changed=e.changed if deep else None,
            )
            if not picked:
                out.append(CodeHit(e.path, 0, 0, "", "file", round(score, 6), LOCALIZER_SOURCE))
            # within a file, keep the pointing order by a falling score
            out += [
                CodeHit(
                    c.path,
                    c.start_line,
                    c.end_line,
                    c.symbol,
                    c.kind,
                    round(score * (1 - 0.01 * j), 6),
                    LOCALIZER_SOURCE,
                )
                for j, c in enumerate(picked)
            ]
        return out

    def _text_ranks(self, query: str) -> dict[str, int]:
        """Rank (1 = best) of each of the POINTED_TEXT_DEPTH chunks that best match ``query``."""
        pairs = self.ranked_lists(query, "bm25", POINTED_TEXT_DEPTH)["bm25"]
        return {chunk_id: rank for rank, (chunk_id, _) in enumerate(pairs, start=1)}

    def _chunk_map(self) -> dict[str, Located]:
        """Return every chunk's location by id, cached per manifest generation."""
        generation = int(self.manifest.get_meta("generation", "0"))
        if self._located is None or self._located[0] != generation:
            self._located = (
                generation,
                {
                    c.id: Located(c.path, c.start_line, c.end_line, c.symbol, c.kind, c.id)
                    for c in self.manifest.all_chunks()
                },
            )
        return self._located[1]

    def _chunks_by_file(self) -> dict[str, tuple[Located, ...]]:
        """Return each file's chunks in file order (by start line), cached per generation."""
        located = self._chunk_map()
        if self._by_file is None or self._by_file[0] is not located:
            by_path: dict[str, list[Located]] = {}
            for chunk in located.values():
                by_path.setdefault(chunk.path, []).append(chunk)
            stamps = {p: (r.size, r.mtime_ns) for p, r in self.manifest.files().items()}
            self._by_file = (
                located,
                {
                    path: tuple(sorted(chunks, key=lambda c: c.start_line))
                    for path, chunks in by_path.items()
                },
                stamps,
            )
        return self._by_file[1]

    def indexed_chunks(self, path: str) -> tuple[Located, ...] | None:
        """Return ``path``'s chunks as indexed while the file is as it was indexed, else None.

        The chunks ``chunk_file`` would cut from the file now (the same chunker), without
        parsing it. Answered from tables already built by the localizer, one ``stat`` per
        call: never a manifest query and never the index's lock, so exact search, which runs
        beside the other retrieval branches, does not wait on them. None when the tables are
        not built yet, the file is not indexed, or its size or time differ from the index's.
        """
        built = self._by_file  # one read: the tables of one generation
        if built is None:
            return None
        _, by_path, stamps = built
        chunks, stamp = by_path.get(path), stamps.get(path)
        if chunks is None or stamp is None:
            return None
        try:
            info = (self.root / path).stat()
        except OSError:
            return None
        return chunks if (info.st_size, info.st_mtime_ns) == stamp else None

    def _identifier_hits(self, terms: list[str]) -> list[tuple[Located, float]]:
        """Find the chunks holding each named identifier through the BM25 postings.

        Identifiers are matched as whole tokens (case-insensitive), which needs no pass over
        the files; paths match indexed files by suffix.
        """
        lexical = self._bm25()
        located = self._chunk_map()
        common = COMMON_TERM_SHARE * max(len(located), MIN_CHUNKS_FOR_COMMON)
        term_chunks: dict[str, list[Located]] = {}
        for term in terms:
            if is_path_term(term):
                suffix = term.strip("/")
                term_chunks[term] = [
                    c for c in located.values() if c.path == suffix or c.path.endswith("/" + suffix)
                ]
                continue
            tokens = code_tokens(term.rsplit(".", 1)[-1])
            ids = lexical.containing(tokens[0]) if tokens else []
            if 0 < len(ids) <= common:  # a term in a large share of chunks is no evidence
                term_chunks[term] = [located[i] for i in ids if i in located]
        return score_term_chunks(term_chunks)

    def close(self) -> None:
        """Release the manifest connection (and the shared store's list of vectors in use)."""
        self.manifest.close()
        close = getattr(self.vectors, "close", None)  # a shared store's list of vectors in use
        if callable(close):
            close()


def index_is_complete(state: ProjectState) -> bool:
    """Return True when the project has a code index whose first update completed.

    One read of the manifest (no Chroma, no BM25). A missing index, or one whose first update
    was interrupted, is False; a manifest that cannot be read is True, since opening the index
    says so and starts it afresh.
    """
    path = state.path(INDEX_DIR, "manifest.sqlite")
    if not path.is_file():
        return False
    try:
        manifest = Manifest.open(path)
    except (IndexCorruptError, DatabaseUnreadableError, OSError):
        return True
    try:
        return manifest.get_meta("generation") != ""
    finally:
        manifest.close()


def open_code_index(
    project: Path,
    *,
    embedder: Embedder,
    state: ProjectState,
    chroma_url: str = "",
    weights: Mapping[str, float] | None = None,
    project_id: str = "",
    vectors: VectorStore | None = None,
) -> ProjectCodeIndex:
    """Open (creating if needed) the persistent code index of ``project`` in its state folder.

    With ``chroma_url``, the vectors are the project's shared collection on that server, named
    by ``project_id`` (the project's identity, the same for every clone; the project's path
    when empty) and shared content-addressed with its other checkouts. ``vectors`` stands in
    for the Chroma collection (the search layer passes one while a Chroma server is down: the
    manifest and BM25 are local).

    An index folder this engram did not stamp for this project is discarded unread first
    (``engram.stores.project._index_trust``).

    An index whose files cannot be read (a damaged manifest or Chroma store) is discarded and
    started afresh; the next update rebuilds it.

    Raises:
        BackendUnavailableError: ``chroma_url`` is set and the server cannot be reached.
    """
    root = project.expanduser().resolve()
    index_dir = state.path(INDEX_DIR)
    if claim_index_dir(index_dir, root, home=state.home):
        log.warning(
            "engram: discarded the code index in %s (written on another machine, in an "
            "older index format, or shipped with the repository); `engram index` "
            "rebuilds it",
            index_dir,
        )
    try:
        return _open_index(root, state, embedder, chroma_url, weights, project_id, vectors)
    except (IndexCorruptError, DatabaseUnreadableError) as exc:
        log.warning(
            "engram: the code index in %s cannot be read (%s); starting it afresh, "
            "`engram index` rebuilds it",
            index_dir,
            exc,
        )
        release_embedded_chroma()
        claim_index_dir(index_dir, root, home=state.home, discard=True)
        return _open_index(root, state, embedder, chroma_url, weights, project_id, vectors)


def _open_index(
    root: Path,
    state: ProjectState,
    embedder: Embedder,
    chroma_url: str,
    weights: Mapping[str, float] | None,
    project_id: str,
    vectors: VectorStore | None = None,
) -> ProjectCodeIndex:
    index_dir = state.path(INDEX_DIR)
    if vectors is None:
        vectors = open_chroma_vectors(
            index_dir,
            embedder.model_id,
            chroma_url,
            project_id=project_id or str(root),
            checkout=checkout_id(state.home, root),
        )
    manifest = Manifest.open(index_dir / "manifest.sqlite")
    return ProjectCodeIndex(
        root,
        embedder=embedder,
        manifest=manifest,
        vectors=vectors,
        bm25_dir=index_dir / "bm25",
        weights=weights,
        history=IndexHistory(root, index_dir),
    )


def open_memory_code_index(project: Path, *, embedder: Embedder) -> ProjectCodeIndex:
    """Open a code index of ``project`` kept entirely in memory (tests, one-off runs)."""
    return ProjectCodeIndex(
        project.expanduser().resolve(),
        embedder=embedder,
        manifest=Manifest.open(None),
        vectors=InMemoryVectors(),
        bm25_dir=None,
    )


POINTED_TEXT_DEPTH = 2000
"""BM25 chunks read to order the chunks of each localized file."""
