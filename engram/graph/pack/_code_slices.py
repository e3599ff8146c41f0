"""Code slices for the context pack: the leading files in depth, then every other file's best spans.

Pure: the caller passes a line reader and a token counter. Files come ranked by
``engram.graph.pack._fusion.rank_files``; each slice is a span of a file cut to a token
limit: its head, then, given the task's terms, the lines that name them
(``engram.graph.pack._line_picking``), with a marker for each run of lines left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from engram.graph._tokens import Counter, remembering
from engram.graph.pack._filling import PackItem
from engram.graph.pack._fusion import Evidence, RankedFile
from engram.graph.pack._line_picking import head_rows, pick_rows
from engram.stores import LineRedactor, redact_lines
from engram.stores.codeindex import MAX_DEEP_CHUNKS

LinesOf = Callable[[str], Sequence[str] | None]

SLICE_FILES = 30
"""Most files that contribute code slices."""
SLICES_PER_FILE = 3
"""Most slices taken from one file."""
MAX_SLICE_TOKENS = 320
"""Longest slice; longer spans keep their head (signature, docstring, first lines)."""
FOCUS_FILES = 3
"""Leading files whose spans all come before any other file's: a fix usually touches one to
three files, and their changed functions matter more than a tenth file's head."""
FOCUS_SLICES_PER_FILE = MAX_DEEP_CHUNKS
"""Most slices taken from one leading file: as many chunks as the localizer passes on for
each leading file, likeliest to change first."""
DEPTH_SHARE = 0.5
"""Share of the pack budget the leading files' further spans may take before other files'
best spans (the rest of them come after every other file's spans). A fix changes a few
functions of the first files; their further functions are worth more than a later file's
head, but depth costs breadth. With a 20-file code map (locbench-dev, 8K pack, changed
lines: 0.58 at 0.4, 0.61 at 0.5, 0.62 at 0.55), localize-dev keeps its file coverage at
0.5 (0.982 in the 8K pack, as at 0.4); with the old 40-file map 0.5 cost it 0.955."""
SCAN_SHARE = 0.125
"""Share of the pack budget for the leading file's scan: right after that file's best span,
a slice of the whole file with its head and the lines richest in the task's rare terms (the
same picking as a cut span), counted in the depth share. A fix often changes lines the
functions the issue points at do not hold: a call site, a constant, a branch three hundred
lines into a function the pack shows only the head of. Chosen leave-one-repository-out among
0, 0.05, 0.075, 0.1, 0.125, 0.15 and 0.2 on locbench-dev (0.125 in every fold at 8K): gold
changed lines at 8K 0.611 -> 0.629 on cases.jsonl, 0.772 -> 0.787 on the long tail, the gold
file sliced as often (bench/RESULTS.md)."""
FOCUS_SLICE_TOKENS = 2000
"""Longest slice of a leading file: whole functions, not heads (a quarter of the functions
a fix changes on locbench-dev are longer than 900 tokens)."""
LINE_WINDOW_SOURCES = frozenset({"exact"})
"""Evidence sources whose spans are lines around a match, not whole functions or classes."""
SCAN_MAX_CHARS = 600_000
"""A leading file longer than this is not scanned (the code index does not chunk it either:
generated or bundled code), so the scan's cost stays bounded: about 50 ms for 7,600 lines."""
SCAN_SOURCE = "scan"
"""Evidence source of the leading file's scan (see SCAN_SHARE)."""
FILE_HEAD_LINES = 60
"""Lines shown for a file known only as a whole (no span): its head."""
LONG_LINE_SHARE = 0.5
"""A line costing more than this share of its slice's room (minified or generated code, a
data literal on one line) is cut to that share, with a marker saying how much is left out.
Whole, it would not fit, and a slice whose first line does not fit is dropped: the model
would not learn the function or constant exists."""
MIN_RECUT_TOKENS = 300
"""A leading file's further span too long for the depth share's room left is cut to that
room (its head and the lines naming task terms) when the room is at least this big; in
less, a cut function shows too little to be worth its header."""


def slice_items(
    files: Sequence[RankedFile],
    lines_of: LinesOf,
    count: Counter,
    *,
    max_files: int = SLICE_FILES,
    per_file: int = SLICES_PER_FILE,
    max_tokens: int = MAX_SLICE_TOKENS,
    focus: int = FOCUS_FILES,
    focus_tokens: int = FOCUS_SLICE_TOKENS,
    focus_per_file: int = FOCUS_SLICES_PER_FILE,
    depth_tokens: int | None = None,
    terms: frozenset[str] = frozenset(),
    anchors: Mapping[str, frozenset[int]] | None = None,
    scan_tokens: int = 0,
    title: frozenset[str] = frozenset(),
) -> list[PackItem]:
    """Return code slices, most wanted first: the leading files in depth, then breadth.

    The first ``focus`` files (the likeliest to change) give their best span, then their
    further spans (up to ``focus_per_file``, each up to ``focus_tokens`` long) as long as
    those further spans add up to at most ``depth_tokens`` (no limit when None); then every
    other file's best span, its second best, …; the leading files' spans past
    ``depth_tokens`` come last, except that the first to overflow it is cut to the room left
    (``MIN_RECUT_TOKENS`` or more). So a small budget still covers many files and a larger one
    reads the likeliest files whole. A span longer than its limit shows its head and, when
    ``terms`` are given, the lines around those terms (``pick_rows``; the ``title``'s terms
    weigh more); ``anchors`` gives, per
    path, lines a traceback points at, which a cut slice shows before any term's lines. A
    span shows no line an earlier slice of its file showed, nor the lines of the file's other
    chunks it encloses (a module chunk's range runs around the functions between its
    statements); a span with no line left is skipped. A file with no span contributes its
    head. Unreadable files (``lines_of`` returns None) are skipped. With ``scan_tokens``, the
    leading file's best span is followed by its scan (``_scan``, up to that many tokens,
    counted in ``depth_tokens``).
    """
    count = remembering(count)
    best_of_focus: list[PackItem] = []
    depth: list[PackItem] = []
    late: list[PackItem] = []
    depth_used = 0
    rounds: list[list[PackItem]] = [[] for _ in range(max(per_file, 1))]
    for number, ranked in enumerate(files[:max_files]):
        limit = focus_per_file if number < focus else per_file
        lines = lines_of(ranked.path)
        if not lines:
            continue
        spans = ranked.spans or (
            Evidence(ranked.path, 1, min(len(lines), FILE_HEAD_LINES), "", ranked.score, "head"),
        )
        shown: set[int] = set()
        taken = 0
        for span in spans:
            if taken == limit:
                break
            start, end = max(1, span.start_line), min(len(lines), max(span.end_line, 1))
            if start > end:
                continue
            hidden = shown | _inner_lines(span, spans)
            marks = (anchors or {}).get(ranked.path, frozenset())
            in_focus = number < focus
            item = _slice(
                ranked,
                span,
                lines,
                (start, end),
                count,
                focus_tokens if in_focus else max_tokens,
                terms,
                hidden,
                marks,
                title=title,
            )
            if item is None:
                continue
            if not in_focus:
                rounds[taken].append(item)
            elif not taken:
                best_of_focus.append(item)
            else:
                cost = count(item.text)
                room = depth_tokens - depth_used if depth_tokens is not None else cost
                if cost > room >= MIN_RECUT_TOKENS:
                    item = _slice(
                        ranked,
                        span,
                        lines,
                        (start, end),
                        count,
                        room,
                        terms,
                        hidden,
                        marks,
                        title=title,
                    )
                    cost = count(item.text) if item else 0
                if item is None:
                    continue
                if cost <= room:
                    depth.append(item)
                    depth_used += cost
                else:
                    late.append(item)
            shown.update(_shown_lines(item))
            taken += 1
            if number == 0 and taken == 1 and in_focus and scan_tokens:
                scan = _scan(ranked, lines, count, scan_tokens, terms, shown, marks, title)
                if scan is not None:
                    depth.append(scan)
                    depth_used += count(scan.text)
                    shown.update(_shown_lines(scan))
    return [*best_of_focus, *depth, *(item for batch in rounds for item in batch), *late]


def _scan(
    ranked: RankedFile,
    lines: Sequence[str],
    count: Counter,
    max_tokens: int,
    terms: frozenset[str],
    hidden: AbstractSet[int],
    marks: AbstractSet[int],
    title: frozenset[str],
) -> PackItem | None:
    """Return the leading file's scan: its lines not yet shown, cut like a long span.

    Within ``max_tokens``, the file's head, then windows around the lines a traceback points
    at (``marks``) and around the lines richest in the task's rare ``terms`` (``pick_rows``);
    a file that fits is shown whole. None when every line is shown already, or when the file
    is longer than SCAN_MAX_CHARS.
    """
    if sum(len(line) + 1 for line in lines) > SCAN_MAX_CHARS:
        return None
    whole = Evidence(ranked.path, 1, len(lines), "", ranked.score, SCAN_SOURCE)
    return _slice(
        ranked, whole, lines, (1, len(lines)), count, max_tokens, terms, hidden, marks, title=title
    )


def _slice(
    ranked: RankedFile,
    span: Evidence,
    lines: Sequence[str],
    bounds: tuple[int, int],
    count: Counter,
    max_tokens: int,
    terms: frozenset[str] = frozenset(),
    hidden: AbstractSet[int] = frozenset(),
    marks: AbstractSet[int] = frozenset(),
    *,
    title: frozenset[str] = frozenset(),
) -> PackItem | None:
    """Return a slice of ``bounds`` (first and last line) within ``max_tokens``.

    Lines in ``hidden`` (shown by an earlier slice, or inside another span of the file that
    this one encloses) are left out; lines in ``marks`` are picked first when the span is cut.
    None when no line is left to show.
    """
    start, end = bounds
    free = [row for row in range(end - start + 1) if start + row not in hidden]
    if not free:
        return None
    name = span.symbol.split("(", 1)[0].strip()  # the signature is the slice's first line
    symbol = f" {name}" if name else ""

    def header(first: int, last: int) -> str:
        return f"--- {ranked.path}:{first}-{last}{symbol}"

    room = max_tokens - count(header(start, end)) - 1
    body = [lines[start - 1 + row] for row in free]
    costs = [count(line) + 1 for line in body]
    longest = max(int(room * LONG_LINE_SHARE), 1)
    cut: dict[int, str] = {}  # row -> its cut text, for the rare line too long for the slice
    for i, cost in enumerate(costs):
        if cost > longest:
            body[i] = cut[free[i]] = _cut_line(body[i], longest, count)
            costs[i] = count(body[i]) + 1
    anchored = {i for i, row in enumerate(free) if start + row in marks}
    if sum(costs) <= room:
        picked = set(range(len(body)))
    elif terms or anchored:
        gap_cost = count(_gap(end - start + 1)) + 1
        picked = pick_rows(body, costs, room, terms, gap_cost, anchored, title)
    else:
        picked = head_rows(costs, room)
    runs = _runs(sorted(free[i] for i in picked))
    text: list[str] = []
    shown_to = runs[0][0]  # rows of the span shown or marked so far
    for first, last in runs:
        if first > shown_to:
            text.append(_gap(first - shown_to))
        text.extend(cut.get(row, lines[start - 1 + row]) for row in range(first, last + 1))
        shown_to = last + 1
    if shown_to <= end - start:
        text.append(_gap(end - start + 1 - shown_to, more=True))
    first_line, last_line = start + runs[0][0], start + runs[-1][1]
    return PackItem(
        section="slices",
        text="\n".join([header(first_line, last_line), *text]),
        path=ranked.path,
        start_line=first_line,
        end_line=last_line,
        symbol=span.symbol,
        score=ranked.score,
        reasons=ranked.reasons,
        shown=tuple((start + a, start + b) for a, b in runs) if len(runs) > 1 else (),
    )


def redact_slice(item: PackItem, redactor: LineRedactor) -> str | None:
    """Return a slice's text with each line redacted among its file's lines around it.

    A line alone can hold a piece of a credential its neighbours make one (a value under its
    name, a line of a private key's body), so each run of shown lines is redacted by
    ``redactor``, the file's ``LineRedactor``. None when the slice cannot be read that way (a
    line cut to fit, or a file that changed since): its text is then redacted as a whole.
    """
    text = item.text.split("\n")
    runs = item.shown or ((item.start_line, item.end_line),)
    gaps = len(runs) - 1  # one marker between two runs, maybe one after the last
    shown = sum(last - first + 1 for first, last in runs)
    if len(text) - 1 - gaps - shown not in (0, 1):
        return None
    lines = redactor.lines
    out, at = redact_lines(text[:1]), 1  # the header names the file, as the repository does
    for number, (first, last) in enumerate(runs):
        if number:
            out.append(text[at])
            at += 1
        if last > len(lines) or text[at : at + last - first + 1] != list(lines[first - 1 : last]):
            return None
        out += redactor.run(first, last)
        at += last - first + 1
    return "\n".join([*out, *text[at:]])


def _cut_line(line: str, tokens: int, count: Counter) -> str:
    """Return the start of ``line`` that costs at most about ``tokens``, and a marker."""
    sample = line[:4096]
    chars_per_token = len(sample) / max(count(sample), 1)
    keep = max(int(tokens * chars_per_token), 1)
    while True:
        cut = f"{line[:keep]} … ({len(line) - keep:,} more characters)"
        if keep == 1 or count(cut) < tokens:
            return cut
        keep //= 2


def _inner_lines(span: Evidence, spans: Sequence[Evidence]) -> set[int]:
    """Return the lines of the file's other code units (chunks) that ``span`` encloses.

    A module chunk's range runs from its first leftover statement to its last, around the
    functions between them: those have spans of their own and are not the module chunk's
    text. Line windows (``LINE_WINDOW_SOURCES``) are not code units: a function keeps them.
    """
    inner: set[int] = set()
    for other in spans:
        inside = span.start_line <= other.start_line and other.end_line <= span.end_line
        same = (other.start_line, other.end_line) == (span.start_line, span.end_line)
        if inside and not same and other.source not in LINE_WINDOW_SOURCES:
            inner.update(range(other.start_line, other.end_line + 1))
    return inner


def _shown_lines(item: PackItem) -> set[int]:
    """Return the file lines a slice shows."""
    runs = item.shown or ((item.start_line, item.end_line),)
    return {line for first, last in runs for line in range(first, last + 1)}


def _gap(lines: int, *, more: bool = False) -> str:
    return f"    … {lines} {'more ' if more else ''}line{'s' if lines > 1 else ''}"


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Return sorted rows as (first, last) runs of consecutive rows."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and row == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
