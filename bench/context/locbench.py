"""Localization and pack coverage on locbench-dev (93 real GitHub issues, 10 Python repos).

Usage:
    python3 bench/context/locbench.py --trees TREES \\
        [--cases shared/bench/locbench-dev/cases.jsonl] [--gold-lines gold_lines.jsonl] \\
        [--home HOME] [--engram .venv/bin/engram] [--only owner/name ...] \\
        [--limit N] [--jobs 1] [--budgets 4000,8000,16000] [--json out.json]

The dataset and its trees: ``shared/bench/locbench-dev/README.md`` (``materialize.py --out``
writes ``TREES/<owner>+<name>/<base_commit>/``). Gold changed lines (``--gold-lines``) are
JSONL rows ``{"instance_id": ..., "lines": {"path": [pre-image line numbers]}}`` taken from
the reference patches; without the file the line metric is left out.

This script drives the installed CLI only (standard library + subprocess; it imports none of
engram's packages), so it measures what a user gets:

1. Each distinct tree is indexed once with ``engram index TREE --json`` (ENGRAM_HOME=--home;
   the index lives in the tree's state folder ``HOME/projects/<name>-<digest>/index``). A marker under ``HOME/locbench/indexed/`` records the
   run; later runs reuse the index when the marker and the index are both there.
2. ``engram search --files --json -k K --path TREE -- QUERY`` ranks files for the issue text.
   Scored like the dataset's BM25 baseline: the candidate pool is the tree's non-test ``.py``
   files (``--include-tests`` keeps tests); other results are dropped before scoring. The
   unfiltered list is scored too (``raw``) and its top 5 slots are counted by kind.
3. ``engram context --budget B --json --path TREE -- QUERY`` for each budget. A gold file is
   covered when a pack item carries some of its lines (an item with a path and a line range,
   i.e. a code slice; a code-map row alone does not count, as in bench/context/coverage.py).
   Gold-line coverage is the share of gold changed lines inside the line ranges of the pack's
   items for that file. The whole ``engram context`` process is timed.

Queries go on the command line after ``--`` (the CLI reads no query from a file or stdin;
the longest issue is 38 KB, under Linux's 128 KB per-argument limit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._env import serve_off  # noqa: E402

SHARED = Path(os.environ.get("ENGRAM_SHARED", ROOT.parent / "shared"))
DEFAULT_CASES = SHARED / "bench/locbench-dev/cases.jsonl"
KS = (1, 5, 10)
METRICS = ("R@1", "R@5", "R@10", "Acc@5", "MRR")
YTDLP = "yt-dlp/yt-dlp"
LINE_BUDGET = 8000
"""The budget the gold-line coverage is headlined at (it is computed at every budget)."""

DOC_EXT = {".md", ".rst", ".txt", ".adoc", ".markdown", ".html", ".htm", ".tex", ".man"}
SOURCE_EXT = {
    ".py",
    ".pyi",
    ".pyx",
    ".pxd",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".js",
    ".ts",
    ".mjs",
    ".jsx",
    ".tsx",
    ".sh",
    ".bash",
    ".go",
    ".rs",
    ".java",
    ".rb",
    ".pl",
    ".lua",
    ".vim",
    ".ps1",
    ".bat",
    ".cmake",
    ".mk",
    ".m",
    ".swift",
    ".kt",
    ".cs",
    ".php",
    ".sql",
}
SOURCE_NAMES = {"Makefile", "makefile", "CMakeLists.txt", "meson.build", "setup.py", "noxfile.py"}


def is_test_path(rel: str) -> bool:
    """True for test code (the dataset's rule): a tests/test/testing folder, test_*.py,
    *_test.py, conftest.py."""
    parts = rel.replace(os.sep, "/").split("/")
    name = parts[-1]
    if any(p in ("tests", "test", "testing") for p in parts[:-1]):
        return True
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def kind_of(rel: str) -> str:
    """Classify a ranked path: test, source, docs or data."""
    parts = rel.split("/")
    name = parts[-1]
    ext = os.path.splitext(name)[1].lower()
    if is_test_path(rel):
        return "test"
    if name in SOURCE_NAMES or ext in SOURCE_EXT:
        return "source"
    if (
        ext in DOC_EXT
        or any(p in ("docs", "doc") for p in parts[:-1])
        or name.upper().startswith(
            (
                "README",
                "CHANGELOG",
                "CHANGES",
                "LICENSE",
                "CONTRIBUTING",
                "AUTHORS",
                "NEWS",
                "HISTORY",
            )
        )
    ):
        return "docs"
    return "data"


KINDS = ("source", "test", "docs", "data")


def evaluate(ranked: list[str], gold: list[str]) -> dict[str, float]:
    """Per-case metrics, as ``evaluate`` in locbench-dev/bm25_baseline.py computes them."""
    gold_set = set(gold)
    res = {}
    for k in KS:
        res[f"R@{k}"] = len(gold_set & set(ranked[:k])) / len(gold_set)
    res["Acc@5"] = 1.0 if gold_set <= set(ranked[:5]) else 0.0
    rr = 0.0
    for i, p in enumerate(ranked, 1):
        if p in gold_set:
            rr = 1.0 / i
            break
    res["MRR"] = rr
    return res


class Engram:
    """Runs the CLI with one ENGRAM_HOME and times each process."""

    def __init__(self, exe: str, home: Path, branch_timeout_ms: int | None, timeout: float):
        self.exe = exe
        self.env = serve_off(os.environ)  # whole processes, as a user runs them
        self.env["ENGRAM_HOME"] = str(home)
        self.env.setdefault("HF_HUB_OFFLINE", "1")
        self.env.setdefault("TRANSFORMERS_OFFLINE", "1")
        self.env.setdefault("ANONYMIZED_TELEMETRY", "False")
        self.env["NO_COLOR"] = "1"
        self.env["COLUMNS"] = "200"
        if branch_timeout_ms is not None:
            self.env["ENGRAM_BRANCH_TIMEOUT_MS"] = str(branch_timeout_ms)
        self.timeout = timeout

    def run(self, args: list[str], cwd: Path, timeout: float | None = None) -> tuple[object, float]:
        """Run ``engram ARGS`` in ``cwd``; return (parsed JSON stdout, wall seconds)."""
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                [self.exe, *args],
                cwd=cwd,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout or self.timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"engram {args[0]} timed out after {exc.timeout} s") from exc
        took = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(
                f"engram {args[0]} exited {proc.returncode}: "
                f"{(proc.stderr or proc.stdout).strip()[-800:]}"
            )
        try:
            return json.loads(proc.stdout), took
        except json.JSONDecodeError as exc:
            raise RuntimeError(
                f"engram {args[0]} printed no JSON: {proc.stdout[:300]!r} "
                f"stderr {proc.stderr[-300:]!r}"
            ) from exc


def tree_of(trees: Path, case: dict) -> Path:
    return trees / case["repo"].replace("/", "+") / case["base_commit"]


def index_manifest(home: Path, tree: Path) -> Path:
    """Where ``engram index`` keeps the tree's index manifest under ``home``.

    The same folder as ``engram.stores.project._state.project_state_dir`` (this script imports
    no engram package): ``HOME/projects/<base name>-<sha256 of the resolved path, 16 hex>``.
    """
    key = str(tree.expanduser().absolute().resolve())
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(key).name).strip("_")[:40] or "root"
    return home / "projects" / f"{name}-{digest}" / "index" / "manifest.sqlite"


def ensure_index(engram: Engram, home: Path, tree: Path, case: dict, log) -> dict:
    """Index ``tree`` once; reuse the index on later runs. Return the index record."""
    marker = (
        home
        / "locbench"
        / "indexed"
        / case["repo"].replace("/", "+")
        / (case["base_commit"] + ".json")
    )
    if marker.exists() and index_manifest(home, tree).exists():
        record = json.loads(marker.read_text(encoding="utf-8"))
        record["reused"] = True
        return record
    summary, took = engram.run(["index", "--json", str(tree)], cwd=tree, timeout=3600)
    record = {
        "repo": case["repo"],
        "base_commit": case["base_commit"],
        "seconds_wall": took,
        "summary": summary,
        "reused": False,
    }
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(record, indent=1), encoding="utf-8")
    log(
        f"indexed {case['repo']}@{case['base_commit'][:10]}: "
        f"{summary.get('files')} files, {summary.get('chunks')} chunks in {took:.1f} s"
    )
    return record


def content_ranges(pack: dict) -> dict[str, list[tuple[int, int]]]:
    """Line ranges of file content the pack carries, per path (code-map rows carry none)."""
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for section in pack.get("sections", []):
        for item in section.get("items", []):
            path, start, end = item.get("path"), item.get("start_line", 0), item.get("end_line", 0)
            if path and item.get("shown"):
                ranges[path].extend((a, b) for a, b in item["shown"])
            elif path and start and end and end >= start:
                ranges[path].append((start, end))
    return ranges


def score_pack(pack: dict, gold: list[str], gold_lines: dict[str, list[int]] | None) -> dict:
    ranges = content_ranges(pack)
    by_name = {s["name"]: s for s in pack.get("sections", [])}
    mapped = [i["path"] for i in by_name.get("code_map", {}).get("items", [])]
    covered_files = [g for g in gold if g in ranges]
    row = {
        "tokens": pack.get("tokens"),
        "budget": pack.get("budget"),
        "covered": bool(covered_files),
        "gold_files_covered": len(covered_files) / len(gold),
        "gold_in_code_map": any(g in mapped for g in gold),
        "gold_code_map_rank": min((mapped.index(g) + 1 for g in gold if g in mapped), default=None),
        "slice_files": len(ranges),
        "slices": sum(len(v) for v in ranges.values()),
        "sections": {
            s["name"]: {
                "tokens": s.get("tokens"),
                "items": len(s.get("items", [])),
                "dropped": s.get("dropped", 0),
            }
            for s in pack.get("sections", [])
        },
        "notes": pack.get("notes", []),
        "branch_timed_out": any("timed out" in n for n in pack.get("notes", [])),
        "gold_ranges": {g: ranges[g] for g in gold if g in ranges},
    }
    if gold_lines is not None:
        total = hit = 0
        for path, lines in gold_lines.items():
            spans = ranges.get(path, [])
            total += len(lines)
            hit += sum(any(a <= n <= b for a, b in spans) for n in lines)
        row["gold_lines_total"] = total
        row["gold_lines_hit"] = hit
        row["gold_lines_share"] = hit / total if total else None
    return row


def run_case(
    engram: Engram,
    tree: Path,
    case: dict,
    budgets: list[int],
    k: int,
    include_tests: bool,
    gold_lines: dict[str, list[int]] | None,
) -> dict:
    query = case["query"]
    gold = case["gold_files"]
    hits, search_s = engram.run(
        ["search", "--files", "--json", "-k", str(k), "--path", str(tree), "--", query], cwd=tree
    )
    raw = [h["path"] for h in hits]
    pool = [p for p in raw if p.endswith(".py") and (include_tests or not is_test_path(p))]
    row = {
        "instance_id": case["instance_id"],
        "repo": case["repo"],
        "base_commit": case["base_commit"],
        "category": case["category"],
        "gold": gold,
        "query_words": len(query.split()),
        "search_seconds": search_s,
        "returned": len(raw),
        "top10": pool[:10],
        "raw_top10": raw[:10],
        **evaluate(pool, gold),
        "raw": evaluate(raw, gold),
        "top5_kinds": [kind_of(p) for p in raw[:5]],
        "gold_rank": next((i for i, p in enumerate(pool, 1) if p in set(gold)), None),
        "context": {},
    }
    for budget in budgets:
        pack, took = engram.run(
            ["context", "--budget", str(budget), "--json", "--path", str(tree), "--", query],
            cwd=tree,
        )
        scored = score_pack(pack, gold, gold_lines)
        scored["seconds"] = took
        row["context"][str(budget)] = scored
    return row


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summarize(rows: list[dict], budgets: list[int], has_lines: bool) -> dict:
    out = {"cases": len(rows)}
    for m in METRICS:
        out[m] = mean(r[m] for r in rows)
    out["raw"] = {m: mean(r["raw"][m] for r in rows) for m in METRICS}
    slots = [kd for r in rows for kd in r["top5_kinds"]]
    out["top5_kind_share"] = {
        kd: (slots.count(kd) / len(slots) if slots else float("nan")) for kd in KINDS
    }
    for b in budgets:
        ctx = [r["context"][str(b)] for r in rows]
        cell = {
            "covered": mean(c["covered"] for c in ctx),
            "gold_files_covered": mean(c["gold_files_covered"] for c in ctx),
            "gold_in_code_map": mean(c["gold_in_code_map"] for c in ctx),
            "branch_timeouts": sum(c["branch_timed_out"] for c in ctx),
            "seconds_p50": statistics.median(c["seconds"] for c in ctx),
            "seconds_mean": mean(c["seconds"] for c in ctx),
        }
        if has_lines:
            cell["gold_lines_macro"] = mean(c.get("gold_lines_share") for c in ctx)
            tot = sum(c.get("gold_lines_total", 0) for c in ctx)
            cell["gold_lines_micro"] = (
                sum(c.get("gold_lines_hit", 0) for c in ctx) / tot if tot else float("nan")
            )
        out[f"context@{b}"] = cell
    return out


def groups_of(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    groups = [("All", rows)]
    if any(r["repo"] == YTDLP for r in rows) and any(r["repo"] != YTDLP for r in rows):
        groups.append(("All without yt-dlp", [r for r in rows if r["repo"] != YTDLP]))
    for cat in sorted({r["category"] for r in rows}):
        groups.append((cat, [r for r in rows if r["category"] == cat]))
    for repo in sorted({r["repo"] for r in rows}):
        groups.append((repo, [r for r in rows if r["repo"] == repo]))
    return groups


def print_tables(summary: dict[str, dict], budgets: list[int], has_lines: bool) -> None:
    bcols = [f"cov@{b // 1000}K" for b in budgets]
    head = ["Group", "Cases", *METRICS, *bcols]
    if has_lines:
        head += [f"lines@{LINE_BUDGET // 1000}K", f"lines@{LINE_BUDGET // 1000}K micro"]
    head += ["top5 src/test/docs/data"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for name, s in summary.items():
        cells = [f"**{name}**" if name.startswith("All") else name, str(s["cases"])]
        cells += [f"{s[m]:.3f}" for m in METRICS]
        cells += [f"{s[f'context@{b}']['covered']:.3f}" for b in budgets]
        if has_lines:
            cl = s.get(f"context@{LINE_BUDGET}", {})
            cells += [
                f"{cl.get('gold_lines_macro', float('nan')):.3f}",
                f"{cl.get('gold_lines_micro', float('nan')):.3f}",
            ]
        sh = s["top5_kind_share"]
        cells.append("/".join(f"{sh[kd]:.2f}" for kd in KINDS))
        print("| " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", required=True, help="folder materialize.py --out filled")
    ap.add_argument("--cases", default=str(DEFAULT_CASES))
    ap.add_argument("--gold-lines", default="", help="gold_lines.jsonl (optional)")
    ap.add_argument(
        "--home", required=True, help="ENGRAM_HOME for the run (index markers and caches)"
    )
    ap.add_argument("--engram", default=str(ROOT / ".venv/bin/engram"))
    ap.add_argument("--only", action="append", default=[], help="only this repo (repeatable)")
    ap.add_argument("--limit", type=int, default=0, help="first N cases (after --only)")
    ap.add_argument("--jobs", type=int, default=1, help="trees processed at once")
    ap.add_argument("--budgets", default="4000,8000,16000")
    ap.add_argument("-k", type=int, default=1000, help="files asked of engram search")
    ap.add_argument("--include-tests", action="store_true", help="keep tests in the pool")
    ap.add_argument(
        "--branch-timeout-ms",
        type=int,
        default=None,
        help="ENGRAM_BRANCH_TIMEOUT_MS for context (default: the CLI's own)",
    )
    ap.add_argument("--timeout", type=float, default=900, help="seconds per search/context call")
    ap.add_argument("--json", default="", help="write per-case rows, summaries and timings here")
    ap.add_argument(
        "--resume",
        action="store_true",
        help="reuse finished cases from OUT.partial.jsonl (same settings)",
    )
    a = ap.parse_args()

    budgets = [int(b) for b in a.budgets.split(",")]
    if LINE_BUDGET not in budgets:
        budgets.append(LINE_BUDGET)
    trees = Path(a.trees).resolve()
    home = Path(a.home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    cases = [json.loads(line) for line in open(a.cases, encoding="utf-8") if line.strip()]
    if a.only:
        cases = [c for c in cases if c["repo"] in a.only]
    if a.limit:
        cases = cases[: a.limit]
    gold_lines: dict[str, dict[str, list[int]]] = {}
    if a.gold_lines:
        for line in open(a.gold_lines, encoding="utf-8"):
            if line.strip():
                row = json.loads(line)
                gold_lines[row["instance_id"]] = row["lines"]
    has_lines = bool(gold_lines)
    engram = Engram(a.engram, home, a.branch_timeout_ms, a.timeout)

    lock = threading.Lock()
    started = time.perf_counter()

    def log(msg: str) -> None:
        with lock:
            print(f"[{time.perf_counter() - started:7.1f}s] {msg}", file=sys.stderr, flush=True)

    partial = Path(a.json + ".partial.jsonl") if a.json else None
    done: dict[str, dict] = {}
    if partial and partial.exists():
        if a.resume:
            for line in partial.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    done[row["instance_id"]] = row
            log(f"resuming: {len(done)} cases already done")
        else:
            partial.unlink()

    by_tree: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for c in cases:
        by_tree[(c["repo"], c["base_commit"])].append(c)
    indexes: list[dict] = []
    rows: list[dict] = []
    errors: list[dict] = []
    total = len(cases)

    def do_tree(key: tuple[str, str]) -> None:
        group = by_tree[key]
        tree = tree_of(trees, group[0])
        if not tree.is_dir():
            with lock:
                errors.extend(
                    {"instance_id": c["instance_id"], "error": f"no tree {tree}"} for c in group
                )
            return
        todo = [c for c in group if c["instance_id"] not in done]
        with lock:
            rows.extend(done[c["instance_id"]] for c in group if c["instance_id"] in done)
        if not todo:
            return
        try:
            record = ensure_index(engram, home, tree, group[0], log)
        except RuntimeError as exc:
            log(f"index failed for {key}: {exc}")
            with lock:
                errors.extend({"instance_id": c["instance_id"], "error": str(exc)} for c in todo)
            return
        with lock:
            indexes.append(record)
        for case in todo:
            try:
                row = run_case(
                    engram,
                    tree,
                    case,
                    budgets,
                    a.k,
                    a.include_tests,
                    gold_lines.get(case["instance_id"]) if has_lines else None,
                )
            except RuntimeError as exc:
                log(f"{case['instance_id']}: {exc}")
                with lock:
                    errors.append({"instance_id": case["instance_id"], "error": str(exc)})
                continue
            with lock:
                rows.append(row)
                if partial:
                    with partial.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(row) + "\n")
                n = len(rows)
            ctx = row["context"]
            log(
                f"{n}/{total} {case['instance_id']}: gold rank {row['gold_rank']}, covered "
                + "/".join(str(int(ctx[str(b)]["covered"])) for b in budgets)
                + ", context "
                + ", ".join(f"{ctx[str(b)]['seconds']:.1f}" for b in budgets)
                + " s"
            )

    keys = list(by_tree)
    if a.jobs > 1:
        with ThreadPoolExecutor(a.jobs) as pool:
            list(pool.map(do_tree, keys))
    else:
        for key in keys:
            do_tree(key)

    order = {c["instance_id"]: i for i, c in enumerate(cases)}
    rows.sort(key=lambda r: order[r["instance_id"]])
    if not rows:
        print("no case finished", file=sys.stderr)
        for e in errors:
            print(e, file=sys.stderr)
        return 1
    summary = {name: summarize(rs, budgets, has_lines) for name, rs in groups_of(rows)}
    built = [i for i in indexes if not i["reused"]]
    ctx_s = {b: [r["context"][str(b)]["seconds"] for r in rows] for b in budgets}
    timings = {
        "indexes_built": len(built),
        "indexes_reused": len(indexes) - len(built),
        "index_seconds": {
            f"{i['repo']}@{i['base_commit'][:12]}": round(i["seconds_wall"], 2) for i in indexes
        },
        "index_seconds_by_repo": {  # build times, including reused indexes' first build
            repo: {"trees": len(v), "mean": mean(v), "min": min(v), "max": max(v)}
            for repo, v in sorted(_group_seconds(indexes).items())
        },
        "search_seconds": {
            "p50": statistics.median(r["search_seconds"] for r in rows),
            "p95": pct([r["search_seconds"] for r in rows], 0.95),
        },
        "context_seconds": {
            str(b): {
                "p50": statistics.median(v),
                "p95": pct(v, 0.95),
                "mean": mean(v),
                "max": max(v),
            }
            for b, v in ctx_s.items()
        },
        "wall_seconds": time.perf_counter() - started,
    }
    tests = "included" if a.include_tests else "excluded"
    print(
        f"\nengram {a.engram}; {len(rows)} of {total} cases ({len(errors)} errors); tests "
        f"{tests} from the pool; budgets {budgets}; k={a.k}"
    )
    print_tables(summary, budgets, has_lines)
    print(f"\nindexes: {timings['indexes_built']} built, {timings['indexes_reused']} reused")
    for repo, t in timings["index_seconds_by_repo"].items():
        print(
            f"  {repo}: {t['trees']} trees, mean {t['mean']:.1f} s (min {t['min']:.1f}, "
            f"max {t['max']:.1f})"
        )
    print(
        f"search --files: p50 {timings['search_seconds']['p50']:.2f} s, "
        f"p95 {timings['search_seconds']['p95']:.2f} s"
    )
    for b, t in timings["context_seconds"].items():
        print(
            f"context --budget {b}: p50 {t['p50']:.2f} s, p95 {t['p95']:.2f} s, "
            f"max {t['max']:.2f} s (whole process)"
        )
    timeouts = {b: summary["All"][f"context@{b}"]["branch_timeouts"] for b in budgets}
    print(f"runs with a retrieval branch timed out: {timeouts}")
    for e in errors:
        print(f"error {e['instance_id']}: {e['error'][:300]}", file=sys.stderr)
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "settings": {
                        "engram": a.engram,
                        "trees": str(trees),
                        "home": str(home),
                        "cases": a.cases,
                        "gold_lines": a.gold_lines,
                        "budgets": budgets,
                        "k": a.k,
                        "include_tests": a.include_tests,
                        "branch_timeout_ms": a.branch_timeout_ms,
                        "only": a.only,
                        "limit": a.limit,
                        "jobs": a.jobs,
                    },
                    "summary": summary,
                    "timings": timings,
                    "indexes": indexes,
                    "errors": errors,
                    "rows": rows,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


def _group_seconds(indexes: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for i in indexes:  # a reused index keeps the wall time of the run that built it
        out[i["repo"]].append(i["seconds_wall"])
    return out


if __name__ == "__main__":
    sys.exit(main())
