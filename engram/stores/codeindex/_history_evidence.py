"""Turn a checkout's history into localizer features: recency, co-change, similar past commits.

Three kinds of evidence, each scored in [0, 1] per file and named among its reasons:

- **recency**: how much a file changed lately (changes decayed by age: ``exp(-age / 90 days)``,
  age taken from HEAD's time so a checkout of an old commit reads its own past);
- **co-change**: files that changed together with the files the text and identifier ranks put
  first ("changed with X in 12 commits"), one step of propagation from those seeds;
- **fixes**: files touched by past commits whose messages read like the issue (BM25 over
  commit messages), as BugLocator's "similar past fixes" ("touched by 'fix …' (2024-05) in
  parse_args", naming the first functions it changed when its hunks were read).

Bulk commits (more than ``BULK_FILES`` files: reformatting, vendoring, mass renames) say
nothing about which files belong together and are left out of all three. Paths are followed
through renames to their names at HEAD. Pure given the history and the file table.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from engram.stores.codeindex._bm25 import code_tokens, query_tokens
from engram.stores.files import display_path
from engram.stores.history import BULK_FILES, Commit, History

DECAY_DAYS = 90.0
"""A change's weight halves in about two months (``exp(-age / DECAY_DAYS)``)."""
SEED_DEPTH = 10
"""Files of each text list that seed the co-change propagation."""
SEED_LISTS = ("bm25", "title_bm25", "exact")
"""The text lists whose leading files seed the propagation."""
SEED_OFFSET = 5
"""A seed's weight is ``1 / (SEED_OFFSET + rank)``, like the text features."""
FIX_COMMITS = 20
"""Past commits, best-matching first, whose files the fixes feature credits."""
COMMON_SHARE = 0.1
"""Message words in more than this share of commits are skipped (they match everything)."""
MIN_COMMITS_FOR_COMMON = 200
"""A short history never treats a word as common (every word is rare in a few commits)."""
RECENCY_REASON = "changed often lately"
"""How the recency feature is named among a file's reasons."""
BM25_K1 = 1.2
BM25_B = 0.75
DAY_S = 86_400


@dataclass(frozen=True)
class HistoryTables:
    """A history read for ranking: commits as HEAD-named file sets, and message postings.

    Plain lists and dicts of strings and numbers, so the tables are stored as they are
    (``engram.stores.codeindex._history_cache``) and read back without rebuilding.
    """

    files: Sequence[Sequence[str]]
    """Per kept (non-bulk) commit, its files under their names at HEAD."""
    weights: Sequence[float]
    """Per kept commit, its age decay."""
    subjects: Sequence[str]
    """Per kept commit, its message's first line (for reasons)."""
    times: Sequence[int]
    """Per kept commit, its time (for reasons)."""
    touches: Mapping[str, Sequence[int]]
    """File to the kept commits that touched it."""
    postings: Mapping[str, Sequence[int]]
    """Message term to its (commit, term count) pairs, flattened: ``[i, n, i, n, …]``."""
    lengths: Sequence[int]
    recency: Mapping[str, float]
    """File to its decayed change count."""
    functions: Sequence[Mapping[str, Sequence[str]]]
    """Per kept commit, HEAD-named file to the functions its hunks changed (when read)."""

    @classmethod
    def build(cls, history: History) -> HistoryTables:
        """Read ``history`` (newest commit first) into the tables the features need."""
        head_time = history.commits[0].time if history.commits else 0
        alias: dict[str, str] = {}
        files: list[list[str]] = []
        weights: list[float] = []
        kept: list[Commit] = []
        functions: list[dict[str, list[str]]] = []
        for commit in history.commits:
            current = list(dict.fromkeys(alias.get(p, p) for p in commit.files))
            changed = {alias.get(p, p): list(names) for p, names in commit.functions}
            for old, new in commit.renames:
                alias[old] = alias.get(new, new)
            if not 0 < commit.size <= BULK_FILES:
                continue
            files.append(current)
            functions.append(changed)
            weights.append(math.exp(-max(head_time - commit.time, 0) / DAY_S / DECAY_DAYS))
            kept.append(commit)
        touches: dict[str, list[int]] = defaultdict(list)
        recency: dict[str, float] = defaultdict(float)
        for i, paths in enumerate(files):
            for path in paths:
                touches[path].append(i)
                recency[path] += weights[i]
        postings: dict[str, list[int]] = defaultdict(list)
        lengths = []
        for i, commit in enumerate(kept):
            terms = code_tokens(commit.message)
            lengths.append(len(terms))
            for term, n in Counter(terms).items():
                postings[term] += (i, n)
        return cls(
            files,
            weights,
            [c.message.split("\n", 1)[0].strip() for c in kept],
            [c.time for c in kept],
            dict(touches),
            dict(postings),
            lengths,
            dict(recency),
            functions,
        )


@dataclass
class HistoryFeatures:
    """Each file's history features and the reasons behind them."""

    recency: dict[str, float]
    cochange: dict[str, float]
    fixes: dict[str, float]
    reasons: dict[str, list[str]]
    functions: dict[str, dict[str, float]] = field(default_factory=dict)
    """File to the functions the past commits most like the issue changed in it (name to the
    commit's score over the best one's): where in a file the fix is likeliest to land."""


def history_features(
    tables: HistoryTables,
    known: Iterable[str],
    *,
    text_ranks: Mapping[str, Sequence[str]],
    query: str,
) -> HistoryFeatures:
    """Score the ``known`` files (the indexed ones) by the history, for one issue."""
    known_set = set(known)
    reasons: dict[str, list[str]] = defaultdict(list)
    top = max((tables.recency.get(p, 0.0) for p in known_set), default=0.0)
    recency = {
        p: math.log1p(v) / math.log1p(top)
        for p, v in tables.recency.items()
        if p in known_set and top > 0
    }
    for path, value in recency.items():
        if value >= 0.5:
            changes = len(tables.touches.get(path, ()))
            reasons[path].append(f"{RECENCY_REASON} ({changes} commits)")
    cochange = _cochange(tables, known_set, text_ranks, reasons)
    similar = similar_commits(tables, query)
    fixes = _fixes(tables, known_set, similar, reasons)
    functions = _fixed_functions(tables, known_set, similar)
    return HistoryFeatures(recency, cochange, fixes, dict(reasons), functions)


def seed_weights(text_ranks: Mapping[str, Sequence[str]], known: set[str]) -> dict[str, float]:
    """Weigh the leading files of the text and identifier lists by rank; the weights sum to 1."""
    seeds: dict[str, float] = defaultdict(float)
    for name in SEED_LISTS:
        for rank, path in enumerate(text_ranks.get(name, ())[:SEED_DEPTH], start=1):
            if path in known:
                seeds[path] += 1 / (SEED_OFFSET + rank)
    total = sum(seeds.values())
    return {p: w / total for p, w in seeds.items()} if total else {}


def _cochange(
    tables: HistoryTables,
    known: set[str],
    text_ranks: Mapping[str, Sequence[str]],
    reasons: dict[str, list[str]],
) -> dict[str, float]:
    """One step from the seeds along co-change edges, each seed's edges normalised to 1."""
    score: dict[str, float] = defaultdict(float)
    best: dict[str, tuple[float, str, int]] = {}
    for seed, weight in seed_weights(text_ranks, known).items():
        together: dict[str, float] = defaultdict(float)
        counts: dict[str, int] = defaultdict(int)
        for i in tables.touches.get(seed, ()):
            for other in tables.files[i]:
                if other != seed and other in known:
                    together[other] += tables.weights[i]
                    counts[other] += 1
        total = sum(together.values())
        for other, value in together.items():
            gain = weight * value / total
            score[other] += gain
            if gain > best.get(other, (0.0, "", 0))[0]:
                best[other] = (gain, seed, counts[other])
    top = max(score.values(), default=0.0)
    out = {p: v / top for p, v in score.items()} if top else {}
    for path, (_, seed, n) in best.items():
        if out.get(path, 0.0) >= 0.2:
            reasons[path].append(f"changed with {seed} in {n} commit{'s' if n > 1 else ''}")
    return out


def similar_commits(tables: HistoryTables, query: str) -> list[tuple[int, float]]:
    """Return the ``FIX_COMMITS`` kept commits whose messages match the issue best (BM25)."""
    n = len(tables.weights)
    if not n:
        return []
    mean_length = sum(tables.lengths) / n or 1.0
    scores: dict[int, float] = defaultdict(float)
    for term in query_tokens(query):
        posting = tables.postings.get(term, ())
        df = len(posting) // 2
        if not df or df > COMMON_SHARE * max(n, MIN_COMMITS_FOR_COMMON):
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, tf in zip(posting[::2], posting[1::2], strict=True):
            norm = BM25_K1 * (1 - BM25_B + BM25_B * tables.lengths[i] / mean_length)
            scores[i] += idf * tf * (BM25_K1 + 1) / (tf + norm)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:FIX_COMMITS]


def _credits(
    tables: HistoryTables, known: set[str], ranked: Sequence[tuple[int, float]]
) -> Iterator[tuple[int, str, float]]:
    """Yield (commit, file, credit) for the known files of the similar past commits.

    The credit is the commit's score over the best one's, less for a commit changing many files.
    """
    if not ranked:
        return
    top = ranked[0][1]
    for i, value in ranked:
        paths = [p for p in tables.files[i] if p in known]
        for path in paths:
            yield i, path, value / top / math.sqrt(len(paths))


def _fixed_functions(
    tables: HistoryTables, known: set[str], ranked: Sequence[tuple[int, float]]
) -> dict[str, dict[str, float]]:
    """Return the functions the similar past commits changed, per file (name to best credit)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for i, path, gain in _credits(tables, known, ranked):
        for name in tables.functions[i].get(path, ()):
            out[path][name] = max(out[path].get(name, 0.0), gain)
    return dict(out)


def _fixes(
    tables: HistoryTables,
    known: set[str],
    ranked: Sequence[tuple[int, float]],
    reasons: dict[str, list[str]],
) -> dict[str, float]:
    """Credit the files of the past commits whose messages match the issue best (BM25)."""
    out: dict[str, float] = defaultdict(float)
    for i, path, gain in _credits(tables, known, ranked):
        if gain > out[path] and gain >= 0.3:
            where = _functions_named(tables.functions[i].get(path, ()))
            reasons[path].append(f"touched by {_describe(tables, i)}{where}")
        out[path] = max(out[path], gain)
    return dict(out)


def _functions_named(names: Sequence[str]) -> str:
    """The first functions a commit changed in a file, as the end of its reason ("" if none)."""
    shown = [display_path(n if len(n) <= 40 else n[:39] + "…") for n in names[:2]]
    return f" in {', '.join(shown)}" if shown else ""


def _describe(tables: HistoryTables, i: int) -> str:
    """Kept commit ``i`` as a reason: its subject (repository text, escaped) and month."""
    subject = display_path(tables.subjects[i])
    if len(subject) > 60:
        subject = subject[:57] + "…"
    month = time.strftime("%Y-%m", time.gmtime(tables.times[i]))
    return f"'{subject}' ({month})"
