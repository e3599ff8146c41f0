"""Rank a project's files for an issue: text relevance plus what the issue names outright.

Text similarity alone ranks changelogs, tests and issue-template scripts above the code that has
the bug. An engineer reading the same issue looks first at the files its traceback and links
name, the modules it imports, the classes and functions it mentions, the component its title
is tagged with, and the flags it quotes. Each of those is a feature here; a small linear model
(weights shipped in ``localizer_weights.json``) combines them with the text ranks and a prior on
what kind of file it is. Pure given the project's file table; the index supplies the ranks.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Literal, Protocol

from engram.stores.codeindex._exact import is_path_term
from engram.stores.codeindex._file_kinds import SOURCE_SUFFIXES, FileKind, file_kind
from engram.stores.codeindex._history_evidence import (
    RECENCY_REASON,
    HistoryFeatures,
    HistoryTables,
    history_features,
)
from engram.stores.codeindex._import_evidence import import_features, module_table
from engram.stores.codeindex._issue_reading import IssueSignals, read_issue
from engram.stores.codeindex._ripgrep import grep

LOCALIZER_SOURCE = "localizer"
"""Source name of the evidence the localizer hands on (``ProjectCodeIndex.localized_chunks``)."""
WEIGHTS_FILE = Path(__file__).with_name("localizer_weights.json")
MAX_DEFINING_FILES = 12
"""A name defined in more files than this says little about which one the issue means."""
GENERIC_STEMS = frozenset({"__init__", "__main__"})
"""File stems that name no component: their folder's name is used instead."""
REASON_RANKS = 10
"""Text ranks up to this one are named among a file's reasons."""
TEXT_LABELS = {"bm25": "text", "title_bm25": "title", "dense": "meaning", "exact": "identifiers"}
"""How each text list is named in a file's reasons."""
RANK_OFFSET = 5
"""Offset of the reciprocal-rank transform of text ranks: 1 / (RANK_OFFSET + rank)."""

FEATURES = (
    "bm25",
    "title_bm25",
    "dense",
    "exact",
    "frame",
    "named",
    "module",
    "definition",
    "stem",
    "literal",
    "recency",
    "cochange",
    "fixes",
    "imports",
)
"""Per-file evidence features, in the order of ``Weights.features``."""
HISTORY_FEATURES = ("recency", "cochange", "fixes")
"""The features read from the checkout's git history (0 without one)."""

_WORD = re.compile(r"[a-z][a-z0-9]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Weights:
    """The localizer's model: a weight per feature and a log-prior per file kind."""

    features: Mapping[str, float]
    kinds: Mapping[str, float]


@cache
def default_weights() -> Weights:
    """Return the weights shipped with engram (fitted on issues, see bench/RESULTS.md)."""
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    return Weights(features=data["features"], kinds=data["kinds"])


@dataclass
class FileEvidence:
    """What speaks for one file; every feature is 0 when nothing does."""

    path: str
    kind: FileKind
    bm25: float = 0.0
    title_bm25: float = 0.0
    dense: float = 0.0
    exact: float = 0.0
    frame: float = 0.0
    named: float = 0.0
    module: float = 0.0
    definition: float = 0.0
    stem: float = 0.0
    literal: float = 0.0
    recency: float = 0.0
    cochange: float = 0.0
    fixes: float = 0.0
    imports: float = 0.0
    reasons: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    """Lines of this file that traceback frames point at, innermost first."""
    names: list[str] = field(default_factory=list)
    """Names the issue mentions that this file defines."""
    changed: dict[str, float] = field(default_factory=dict)
    """Functions of this file that past commits like the issue changed (name to weight)."""

    def ordered_reasons(self) -> list[str]:
        """Return the reasons: what the issue names, then history, text ranks, recency last."""
        text = tuple(f"{label} #" for label in TEXT_LABELS.values())
        return sorted(
            self.reasons,
            key=lambda reason: 2 if reason.startswith(RECENCY_REASON) else reason.startswith(text),
        )

    def vector(self) -> list[float]:
        """Return the features in ``FEATURES`` order."""
        return [float(getattr(self, name)) for name in FEATURES]


@dataclass(frozen=True)
class ProjectFiles:
    """The project's file table: paths, kinds, and which files define which names."""

    paths: tuple[str, ...]
    definitions: Mapping[str, frozenset[str]]
    """Defined name (bare and ``Class.member``) to the files that define it."""

    @classmethod
    def build(cls, symbols: Iterable[tuple[str, str, str]]) -> ProjectFiles:
        """Build from (path, chunk kind, chunk symbol) rows of the index manifest."""
        paths: dict[str, None] = {}
        defs: dict[str, set[str]] = {}
        for path, kind, symbol in symbols:
            paths[path] = None
            if kind not in ("class", "function", "method"):
                continue
            name = symbol.split("(", 1)[0].strip()
            parts = name.split(".")
            for key in {parts[-1], ".".join(parts[-2:])}:
                if key and not key.startswith("__"):
                    defs.setdefault(key, set()).add(path)
        return cls(tuple(paths), {k: frozenset(v) for k, v in defs.items()})

    @cached_property
    def kinds(self) -> Mapping[str, FileKind]:
        """Return each file's kind (``file_kind``), computed once per table."""
        return {path: file_kind(path) for path in self.paths}

    @cached_property
    def stem_groups(self) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        """Return (stem, stem words, files) per file stem, computed once per table.

        Stems come in the order of their first file; the words are those of that file.
        """
        by_stem: dict[str, list[str]] = {}
        for path in self.paths:
            by_stem.setdefault(_stem_words(path)[0], []).append(path)
        return tuple(
            (stem, tuple(_stem_words(paths[0])[1]), tuple(paths)) for stem, paths in by_stem.items()
        )

    @cached_property
    def modules(self) -> Mapping[str, str]:
        """Return the dotted module names of the Python files (``module_table``), once per table."""
        return module_table(self.paths)

    def by_suffix(self, suffix: str) -> list[str]:
        """Return the files whose path ends with ``suffix`` (whole path components)."""
        suffix = suffix.strip("/")
        return [p for p in self.paths if p == suffix or p.endswith("/" + suffix)]


def _match_path(files: ProjectFiles, raw: str) -> list[str]:
    """Map a path as an issue wrote it (absolute, site-packages, Windows) to project files.

    The longest trailing run of path components that names some project file wins; a bare
    file name counts only when one file has it.
    """
    parts = [p for p in raw.replace("\\", "/").split("/") if p and p not in (".", "..")]
    for start in range(len(parts)):
        found = files.by_suffix("/".join(parts[start:]))
        if found and (len(parts) - start > 1 or len(found) == 1):
            return found
    return []


def _module_paths(module: str) -> list[str]:
    """Candidate file suffixes for a dotted module path, longest (most specific) first."""
    parts = module.split(".")
    out = []
    for end in range(len(parts), 0, -1):
        base = "/".join(parts[:end])
        out += [base + ".py", base + "/__init__.py"]
    return out


def _stem_words(path: str) -> tuple[str, list[str]]:
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0].lower()
    if stem in GENERIC_STEMS and "/" in path:
        stem = path.rsplit("/", 2)[-2].lower()
    return stem, [w for w in re.split(r"[_\-.]+", stem) if len(w) > 1]


def gather_evidence(
    signals: IssueSignals,
    files: ProjectFiles,
    *,
    text_ranks: Mapping[str, Sequence[str]],
    literal_hits: Mapping[str, Sequence[str]] | None = None,
    history: HistoryFeatures | None = None,
) -> dict[str, FileEvidence]:
    """Collect the evidence for every file the issue's signals, text ranks or history reach.

    Args:
        signals: The issue, read by ``read_issue``.
        files: The project's file table.
        text_ranks: File paths ranked by each text list ("bm25", "title_bm25", "dense").
        literal_hits: For each literal (a flag), the files that contain it.
        history: The checkout's history features for this issue (None without history).
    """
    out: dict[str, FileEvidence] = {}
    kinds = files.kinds

    def ev(path: str) -> FileEvidence:
        if path not in out:
            out[path] = FileEvidence(path, kinds[path] if path in kinds else file_kind(path))
        return out[path]

    for name, ranked in text_ranks.items():
        for rank, path in enumerate(ranked, start=1):
            setattr(ev(path), name, max(getattr(ev(path), name), 1 / (RANK_OFFSET + rank)))
            if rank <= REASON_RANKS:
                ev(path).reasons.append(f"{TEXT_LABELS.get(name, name)} #{rank}")
    for i, frame in enumerate(signals.frames):
        for path in _match_path(files, frame.path):
            e = ev(path)
            e.lines.append(frame.line)
            if e.frame < 1 / (1 + i):
                e.frame = 1 / (1 + i)
                e.reasons.append(
                    f"traceback frame {i + 1}" + (f" in {frame.function}" if frame.function else "")
                )
    for raw in signals.paths:
        for path in _match_path(files, raw):
            if not ev(path).named:
                ev(path).named = 1.0
                ev(path).reasons.append(f"named as {raw}")
    known = set(files.paths)
    for i, module in enumerate(signals.modules):
        for depth, suffix in enumerate(_module_paths(module)):
            found = [p for p in files.by_suffix(suffix) if p in known]
            if found:
                score = 1.0 / (1 + depth // 2) / (1 + 0.1 * i)
                for path in found:
                    if ev(path).module < score:
                        ev(path).module = score
                        ev(path).reasons.append(f"module {module}")
                break
    _definitions(signals, files, ev)
    _stems(signals, files, ev)
    for literal, paths in (literal_hits or {}).items():
        if 0 < len(paths) <= MAX_DEFINING_FILES:
            for path in paths:
                ev(path).literal += 1 / len(paths)
                ev(path).reasons.append(f"contains {literal}")
    if history is not None:
        _history(history, ev)
    return out


def _history(history: HistoryFeatures, ev) -> None:  # noqa: ANN001
    for name in HISTORY_FEATURES:
        for path, value in getattr(history, name).items():
            setattr(ev(path), name, value)
    for path, reasons in history.reasons.items():
        ev(path).reasons.extend(reasons)
    for path, changed in history.functions.items():
        ev(path).changed = changed


def _definitions(signals: IssueSignals, files: ProjectFiles, ev) -> None:  # noqa: ANN001
    total = max(len(files.paths), 1)
    title_names = set(_NAME.findall(signals.title))
    names: dict[str, float] = {}
    for ident in [*signals.identifiers, *signals.errors, *(f.function for f in signals.frames)]:
        for key in {ident, ".".join(ident.split(".")[-2:]), ident.rsplit(".", 1)[-1]}:
            if key and _NAME.fullmatch(key.replace(".", "_")):
                bonus = 2.0 if key.rsplit(".", 1)[-1] in title_names else 1.0
                names[key] = max(names.get(key, 0.0), bonus)
    for key, bonus in names.items():
        defining = files.definitions.get(key, frozenset())
        if not 0 < len(defining) <= MAX_DEFINING_FILES:
            continue
        idf = math.log(1 + total / len(defining))
        for path in defining:
            e = ev(path)
            e.names.append(key)
            e.definition += bonus * idf / len(defining) ** 0.5
            if len(e.reasons) < 8:
                e.reasons.append(f"defines {key}")


def _stems(signals: IssueSignals, files: ProjectFiles, ev) -> None:  # noqa: ANN001
    tags = set(signals.tags)
    title_words = set(_WORD.findall(signals.title.lower()))
    body_words = set(_WORD.findall(signals.prose.lower()))
    for stem, words, paths in files.stem_groups:
        squashed = stem.replace("_", "")
        if (
            stem in tags
            or squashed in tags
            or any(t.startswith(squashed) for t in tags if len(squashed) >= 4)
        ):
            score, why = 1.0, "its name is the issue's tag"
        elif stem in title_words or squashed in title_words:
            score, why = 0.8, "its name is in the title"
        elif words and all(w in title_words for w in words):
            score, why = 0.6, "its name's words are in the title"
        elif stem in body_words and len(stem) >= 4:
            score, why = 0.2, "its name is in the issue"
        else:
            continue
        score /= math.log(2 + len(paths))
        for path in paths:
            ev(path).stem = score
            ev(path).reasons.append(why)


def rank_evidence(
    evidence: Mapping[str, FileEvidence],
    weights: Weights | None = None,
    *,
    prefer: Iterable[FileKind] = ("source",),
) -> list[tuple[FileEvidence, float]]:
    """Score each file: weighted features plus its kind's log-prior; best first.

    Kinds in ``prefer`` (what the task is about: source code, or tests, or docs) get the
    source prior instead of their own.
    """
    weights = weights or default_weights()
    preferred = set(prefer)
    scored = []
    for e in evidence.values():
        prior_kind = "source" if e.kind in preferred else e.kind
        score = sum(
            weights.features.get(name, 0.0) * value
            for name, value in zip(FEATURES, e.vector(), strict=True)
        )
        scored.append((e, score + weights.kinds.get(prior_kind, 0.0)))
    return sorted(scored, key=lambda pair: (-pair[1], pair[0].path))


MAX_LITERAL_MATCHES = 400
"""Matching lines read when grepping an issue's flags (a flag is rare in a code base)."""
TITLE_REPEAT = 3
"""The title's weight in the text query, as a number of copies (titles are dense)."""


class FileRanker(Protocol):
    """What ``localize`` needs from a code index."""

    root: Path

    def file_table(self) -> ProjectFiles:
        """Return the indexed files and the names they define."""
        ...

    def file_ranks(self, query: str, mode: Literal["bm25", "dense", "exact"]) -> list[str]:
        """Return file paths ranked by one text list of ``query``."""
        ...

    def history_tables(self) -> HistoryTables | None:
        """Return the checkout's history read for ranking, None without a usable one."""
        ...


def literal_hits(root: Path, literals: Sequence[str], files: ProjectFiles) -> dict[str, list[str]]:
    """Return, for each literal, the indexed source files that contain it (one ripgrep pass)."""
    if not literals:
        return {}
    pattern = "|".join(re.escape(x) for x in literals)
    known = set(files.paths)
    found: dict[str, set[str]] = {x: set() for x in literals}
    for match in grep(root, pattern, max_results=MAX_LITERAL_MATCHES):
        if match.path in known and Path(match.path).suffix in SOURCE_SUFFIXES:
            for literal in literals:
                if literal in match.text:
                    found[literal].add(match.path)
    return {x: sorted(paths) for x, paths in found.items()}


def issue_query(signals: IssueSignals) -> str:
    """Return the text query for an issue: its title, repeated, then its cleaned prose."""
    return "\n".join([signals.title] * TITLE_REPEAT + [signals.prose])


def localize(
    index: FileRanker,
    issue: str,
    *,
    prefer: Iterable[FileKind] = ("source",),
    weights: Weights | None = None,
) -> list[tuple[FileEvidence, float]]:
    """Rank the index's files for an issue text (title on its first line), best first."""
    return rank_evidence(issue_evidence(index, issue), weights, prefer=prefer)


def issue_evidence(index: FileRanker, issue: str) -> dict[str, FileEvidence]:
    """Collect every file's evidence for an issue text: the features ``localize`` ranks by."""
    signals = read_issue(issue)
    files = index.file_table()
    query = issue_query(signals)
    text_ranks = {
        "bm25": index.file_ranks(query, "bm25"),
        "title_bm25": index.file_ranks(signals.title, "bm25") if signals.title.strip() else [],
        "dense": index.file_ranks(query, "dense"),
        "exact": index.file_ranks(issue, "exact"),
    }
    literals = [f for f in signals.flags if not is_path_term(f)]
    tables = index.history_tables()
    history = (
        history_features(tables, files.paths, text_ranks=text_ranks, query=query)
        if tables is not None
        else None
    )
    evidence = gather_evidence(
        signals,
        files,
        text_ranks=text_ranks,
        literal_hits=literal_hits(index.root, literals, files),
        history=history,
    )
    imported, reasons = import_features(
        index.root, files.paths, text_ranks=text_ranks, modules=files.modules
    )
    for path, value in imported.items():
        e = evidence.setdefault(path, FileEvidence(path, files.kinds.get(path, file_kind(path))))
        e.imports = value
        e.reasons.extend(reasons.get(path, ()))
    return evidence
