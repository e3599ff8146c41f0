"""Pure evidence fusion for the context pack: rank files, then turn them into pack items.

Every retrieval signal (exact, BM25, dense or fused hits, graph neighbours, files named by
Phase 0) becomes a ranked file list; the lists are fused with reciprocal rank fusion
(``engram.stores.codeindex._fusion.rrf``), with the leading source's first files kept in
its order. Files become code-map lines here and code slices in
``engram.graph.pack._code_slices``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engram.graph.pack._filling import PackItem
from engram.stores.codeindex import LOCALIZER_SOURCE, RRF_K, aggregate_files, rrf
from engram.stores.project import is_test_path

FUSION_WEIGHTS: Mapping[str, float] = {"graph": 0.5, LOCALIZER_SOURCE: 2.0}
"""Weight per evidence source in the final file fusion; unnamed sources weigh 1. Graph
neighbours are structural guesses, so they count half; the issue localizer already weighs
every other signal about a file (frames, names, links, text ranks), so it counts double."""
PROSE_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".textile", ".rdoc"})
"""Documentation files: useful context, but the pack is for code first."""
PROSE_WEIGHT = 0.5
"""Multiplier of a documentation file's fused score, so code outranks prose it ties with."""
TEST_WEIGHT = 0.5
"""Multiplier of a test file's fused score unless the task is about tests: a change is made
in the code under test, and tests that mention the same names would crowd it out."""
LEAD_FILES = 10
"""Files of the leading source (see ``rank_files``) placed before every other file."""
LEAD_BONUS = 1.0
"""Added to a leading file's fused score per place above the lead's tenth: fused RRF scores
stay below 0.1, so the leading files' scores (1 to 10 above theirs) order the map."""
LEAD_SPAN_FILES = 2
"""Leading files whose spans come in the leading source's own order, before any other
source's: the localizer orders a file's chunks by every signal the issue gives about them
(traceback frames, names it mentions, text and title ranks), where the best rank in any
source lets a chunk that one text list ranks high jump ahead (locbench-dev, 149 issues, 8K
changed lines: 0.639 with none, 0.667 with two; with three the gold-file coverage falls one
issue, 0.957 to 0.946, as the third file's first chunk crowds out a later file's slice)."""
MAP_FILES = 20
"""Most files listed in the code map. Files past the twentieth rarely give a slice to the
pack, and their map lines took a fifth of an 8K pack (locbench-dev: 40 lines cost 1,545
tokens on average); the budget they free goes to the leading files' functions."""


@dataclass(frozen=True)
class Evidence:
    """One located piece of evidence: a span of a file and the signal that found it."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    score: float
    source: str
    detail: str = ""
    """Extra why, e.g. the graph relation that reached it."""


@dataclass(frozen=True)
class RankedFile:
    """A file in the fused ranking, with the spans to slice and why it is in."""

    path: str
    score: float
    reasons: tuple[str, ...]
    spans: tuple[Evidence, ...]


def evidence_of(
    code_hits: Iterable[Mapping[str, object]],
    related_symbols: Iterable[Mapping[str, object]],
    task_files: Iterable[str],
) -> list[Evidence]:
    """Turn state entries (hit dicts, graph neighbours, Phase 0 file names) into evidence."""
    out: list[Evidence] = []
    for hit in code_hits:
        out.append(_evidence(hit, str(hit.get("source") or "search")))
    for rel in related_symbols:
        out.append(_evidence(rel, "graph", str(rel.get("relation") or "")))
    for number, path in enumerate(task_files):
        out.append(Evidence(path, 0, 0, "", 1.0 / (1 + number), "phase0", "named in the task"))
    return [e for e in out if e.path]


def _evidence(entry: Mapping[str, object], source: str, detail: str = "") -> Evidence:
    return Evidence(
        path=str(entry.get("path") or ""),
        start_line=_int(entry.get("start_line")),
        end_line=_int(entry.get("end_line")),
        symbol=" ".join(str(entry.get("symbol") or "").split()),  # one line in headers
        score=_float(entry.get("score")),
        source=source,
        detail=detail,
    )


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float | str) and str(value).isdigit() else 0


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _file_weight(path: str, demote_tests: bool) -> float:
    weight = PROSE_WEIGHT if _is_prose(path) else 1.0
    return weight * TEST_WEIGHT if demote_tests and is_test_path(path) else weight


def _ordered(items: Iterable[Evidence]) -> list[Evidence]:
    """Best first; ties broken by location so the order never depends on input order."""
    return sorted(items, key=lambda e: (-e.score, e.path, e.start_line, e.end_line, e.symbol))


def rank_files(
    evidence: Iterable[Evidence],
    *,
    weights: Mapping[str, float] = FUSION_WEIGHTS,
    demote_tests: bool = False,
    lead: str = "",
) -> list[RankedFile]:
    """Fuse the per-source file rankings into one, best first.

    Each source ranks its evidence by score; a file's place in a source comes from its best
    spans (``aggregate_files`` over reciprocal ranks). The sources' file lists are fused by
    weighted RRF; documentation files then weigh PROSE_WEIGHT, and with ``demote_tests`` test
    files weigh TEST_WEIGHT. Ties are broken by path. With ``lead``, that source's first
    LEAD_FILES files come first, in its order (a ranker that already weighs the other
    sources' signals; RRF would flatten its top ranks), and the fusion orders the rest; a
    leading file's score is its fused score plus ``LEAD_BONUS`` per place, so the files are
    always in the order of their scores. The first ``LEAD_SPAN_FILES`` files give the lead's
    spans first, in its order, then the other sources' spans.
    """
    by_source: dict[str, list[Evidence]] = {}
    for item in evidence:
        by_source.setdefault(item.source, []).append(item)
    lists: dict[str, list[str]] = {}
    rank_in: dict[tuple[str, str], int] = {}
    best: dict[tuple[str, str], Evidence] = {}
    for source in sorted(by_source):
        if weights.get(source, 1.0) == 0:
            continue
        ordered = _ordered(by_source[source])
        chunk_scores = [(e.path, 1.0 / (RRF_K + rank)) for rank, e in enumerate(ordered, 1)]
        files = [path for path, _ in aggregate_files(chunk_scores)]
        lists[source] = files
        for rank, path in enumerate(files, 1):
            rank_in[(source, path)] = rank
        for e in ordered:
            best.setdefault((source, e.path), e)
    fused = sorted(
        ((path, score * _file_weight(path, demote_tests)) for path, score in rrf(lists, weights)),
        key=lambda pair: (-pair[1], pair[0]),
    )
    leading = {path: rank for rank, path in enumerate(lists.get(lead, [])[:LEAD_FILES])}
    if leading:
        # The lead's files come first in its order, and their scores say so: each gets
        # LEAD_BONUS steps above any fused score, so the map's order is its scores' order.
        fused = sorted(
            (
                (path, score + LEAD_BONUS * (LEAD_FILES - leading[path]))
                if path in leading
                else (path, score)
                for path, score in fused
            ),
            key=lambda pair: (-pair[1], pair[0]),
        )
    span_rank = _span_order(by_source)
    lead_spans = _span_order({lead: by_source[lead]}) if lead in by_source else {}
    ranked = []
    for number, (path, score) in enumerate(fused):
        reasons = tuple(
            _reason(source, rank_in[(source, path)], best[(source, path)])
            for source in sorted(lists, key=lambda s: rank_in.get((s, path), 1 << 30))
            if (source, path) in rank_in
        )
        spans = span_rank.get(path, ())
        if number < LEAD_SPAN_FILES and path in lead_spans:
            spans = _first_then_rest(lead_spans[path], spans)
        ranked.append(RankedFile(path, score, reasons, spans))
    return ranked


def _first_then_rest(first: Sequence[Evidence], spans: Sequence[Evidence]) -> tuple[Evidence, ...]:
    """Return ``first``, then the ``spans`` covering other line ranges, each in its order."""
    seen = {(e.start_line, e.end_line) for e in first}
    return (*first, *(e for e in spans if (e.start_line, e.end_line) not in seen))


def _is_prose(path: str) -> bool:
    dot = path.rfind(".")
    return dot > path.rfind("/") and path[dot:].lower() in PROSE_SUFFIXES


def _reason(source: str, rank: int, best: Evidence) -> str:
    what = best.symbol or best.detail
    via = f" ({best.detail})" if best.detail and best.symbol else ""
    return f"{source} #{rank}" + (f": {what}{via}" if what else "")


def _span_order(by_source: Mapping[str, list[Evidence]]) -> dict[str, tuple[Evidence, ...]]:
    """Per file, its distinct spans ordered by their best rank in any source."""
    best_rank: dict[tuple[str, int, int], tuple[int, Evidence]] = {}
    for source in sorted(by_source):
        for rank, e in enumerate(_ordered(by_source[source]), 1):
            key = (e.path, e.start_line, e.end_line)
            if key not in best_rank or rank < best_rank[key][0]:
                best_rank[key] = (rank, e)
    per_file: dict[str, list[tuple[int, Evidence]]] = {}
    for (path, start, _end), (rank, e) in best_rank.items():
        if start > 0:
            per_file.setdefault(path, []).append((rank, e))
    return {
        path: tuple(e for _, e in sorted(spans, key=_span_key)) for path, spans in per_file.items()
    }


def _span_key(pair: tuple[int, Evidence]) -> tuple[int, int, int]:
    return (pair[0], pair[1].start_line, pair[1].end_line)


def code_map_items(files: Sequence[RankedFile], *, limit: int = MAP_FILES) -> list[PackItem]:
    """Return one code-map line per ranked file: path, score, symbols and why."""
    items = []
    for number, ranked in enumerate(files[:limit], 1):
        # names without signatures, and each reason as its source and rank: the slices show
        # the code itself, so the map stays one short line per file
        symbols = _map_symbols(ranked)
        named = f" — {', '.join(symbols)}" if symbols else ""
        why = "; ".join(reason.split(":", 1)[0] for reason in ranked.reasons)
        items.append(
            PackItem(
                section="code_map",
                text=f"{number}. {ranked.path}{named} (why: {why})",
                path=ranked.path,
                symbol=symbols[0] if symbols else "",
                score=ranked.score,
                reasons=ranked.reasons,
            )
        )
    return items


def _map_symbols(ranked: RankedFile, limit: int = 3) -> list[str]:
    """Names a file's spans define, leaving out module chunks (named after the file)."""
    own = {ranked.path, ranked.path.rsplit("/", 1)[-1]}
    names = dict.fromkeys(_bare(s.symbol) for s in ranked.spans if s.symbol)
    return [name for name in names if name not in own][:limit]


def _bare(symbol: str) -> str:
    return symbol.split("(", 1)[0].strip()
