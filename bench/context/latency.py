"""Context-engine latency and degradation on a large real tree (the Django sdist, warm index).

Usage:
    .venv/bin/python bench/context/latency.py --project bench/data/Django-5.0
        [--home bench/data/home] [--repeat 3] [--process-runs 5] [--json out.json]
        [--exact-cases ../shared/bench/localize-dev/cases.jsonl]

Three measurements, each printed as a Markdown row:
1. in-process pipeline (bench/context/pipeline.py, the real nodes, warm resources): p50/p95
   over TASKS × --repeat runs, excluding process start;
2. whole process: ``engram context TASK --json`` (the installed command) median over
   --process-runs runs, when the installed command has ``context``; otherwise the same command
   registered on a bare Typer app over the bench pipeline (``--entry bench``), said so;
3. degradation: the semantic branch replaced by one that never answers; the pack must still
   build within the branch timeout + 100 ms of pipeline overhead.

With --exact-cases, first the search_exact node alone (ripgrep plus chunking, no index) on the
cases' free-text queries that hold code-like terms: p50 / p95 / max.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline import compose, make_deps, run_pack  # noqa: E402

from bench._env import serve_off  # noqa: E402
from engram.graph import Context  # noqa: E402
from engram.stores.codeindex import exact_terms  # noqa: E402

TASKS = (
    "QuerySet.bulk_create() crashes with update_conflicts on a model with a db_column",
    "Fix the migration autodetector renaming a field and changing its default together",
    "The admin changelist search ignores search_fields that span a ManyToMany relation",
    "Explain how the CSRF middleware validates the Origin header",
    "Refactor the template engine's Variable resolution to cache attribute lookups",
    "JSONField key transforms return wrong results on Oracle for nested arrays",
    "Add a timeout option to the database cache backend",
    "Password reset tokens stay valid after the user's email changes",
    "The runserver autoreloader misses changes in template directories",
    "Paginator.get_elided_page_range gives a wrong range on the last page",
    "Forms ModelChoiceField shows the wrong label when to_field_name is set",
    "Why does the test client lose session data between requests after login?",
)
"""Realistic tasks over Django's code (no answers are known or used: latency only)."""

OVERHEAD_MS = 100
"""Degradation target: a stuck branch may cost its timeout plus this much."""


def percentile(values: list[float], share: float) -> float:
    """Return the nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def stuck_semantic(state: Any, runtime: Any, *, deps: Any) -> dict[str, Any]:
    """A semantic branch whose backend never answers."""
    time.sleep(30)
    return {}


def in_process(project: Path, home: str, repeat: int) -> dict[str, Any]:
    context = Context(project=str(project), engram_home=home, mode="context", auto_approve=True)
    deps = make_deps()
    graph = compose(deps)
    run_pack(graph, context.replace(branch_timeout_ms=120_000), "warm up the index")
    times: list[float] = []
    per_task: dict[str, list[float]] = {task: [] for task in TASKS}
    timeouts = 0
    for _ in range(repeat):
        for task in TASKS:
            pack, took = run_pack(graph, context, task)
            times.append(took * 1000)
            per_task[task].append(took * 1000)
            timeouts += any("timed out" in n for n in pack["notes"])
    named = [statistics.median(v) for t, v in per_task.items() if exact_terms(t)]
    plain = [statistics.median(v) for t, v in per_task.items() if not exact_terms(t)]
    stuck_graph = compose(deps, semantic=stuck_semantic)
    stuck: list[float] = []
    for task in TASKS:
        pack, took = run_pack(stuck_graph, context, task)
        assert any("search_semantic timed out" in n for n in pack["notes"]), pack["notes"]
        stuck.append(took * 1000)
    return {
        "runs": len(times),
        "p50_ms": round(statistics.median(times)),
        "p95_ms": round(percentile(times, 0.95)),
        "runs_with_a_timeout": timeouts,
        "per_task_median_ms": {t: round(statistics.median(v)) for t, v in per_task.items()},
        "named_tasks": len(named),
        "named_range_ms": [round(min(named)), round(max(named))] if named else [],
        "plain_range_ms": [round(min(plain)), round(max(plain))] if plain else [],
        "timeout_ms": context.branch_timeout_ms,
        "stuck_p50_ms": round(statistics.median(stuck)),
        "stuck_max_ms": round(max(stuck)),
        "stuck_within_target": sum(t <= context.branch_timeout_ms + OVERHEAD_MS for t in stuck),
        "stuck_runs": len(stuck),
    }


def breakdown(project: Path, home: str) -> dict[str, int]:
    """Median wall time of each node run alone, in order, on warm resources (ms)."""
    from langchain_core.messages import HumanMessage
    from langgraph.runtime import Runtime

    from engram.graph import State
    from engram.nodes import (
        expand_relations,
        load_rules,
        pack_context,
        retrieve_memory,
        search_exact,
        search_semantic,
    )

    context = Context(project=str(project), engram_home=home, mode="context", auto_approve=True)
    deps = make_deps()
    runtime = Runtime(context=context)
    nodes = (
        load_rules,
        retrieve_memory,
        search_exact,
        search_semantic,
        expand_relations,
        pack_context,
    )
    times: dict[str, list[float]] = {node.__name__: [] for node in nodes}

    def one(task: str) -> None:
        state = State(messages=[HumanMessage(task)], task=task)
        for node in nodes:
            started = time.perf_counter()
            update = node(state, runtime, deps=deps)
            times[node.__name__].append((time.perf_counter() - started) * 1000)
            for key in ("code_hits", "related_symbols", "task_profile", "notes"):
                if update.get(key):
                    old = getattr(state, key)
                    new = update[key]
                    setattr(state, key, [*old, *new] if isinstance(old, list) else new)

    one("warm up the index")
    for name in times:
        times[name].clear()
    for task in TASKS:
        one(task)
    medians = {name: round(statistics.median(values)) for name, values in times.items()}
    named = [ms for ms, task in zip(times["search_exact"], TASKS, strict=True) if exact_terms(task)]
    medians["search_exact (tasks naming identifiers)"] = round(statistics.median(named))
    return medians


def exact_free_text(project: Path, cases: Path) -> dict[str, Any]:
    """The search_exact node alone on free-text queries (one per case), warm OS cache (ms)."""
    from langgraph.runtime import Runtime

    from engram.graph import Deps, State
    from engram.nodes import search_exact

    queries = [json.loads(line)["query"] for line in cases.open() if line.strip()]
    queries = [q for q in queries if exact_terms(q)]
    runtime = Runtime(context=Context(project=str(project), mode="context"))
    search_exact(State(task=queries[0]), runtime, deps=Deps())
    times = []
    for query in queries:
        started = time.perf_counter()
        search_exact(State(task=query), runtime, deps=Deps())
        times.append((time.perf_counter() - started) * 1000)
    return {
        "queries": len(times),
        "p50_ms": round(statistics.median(times)),
        "p95_ms": round(percentile(times, 0.95)),
        "max_ms": round(max(times)),
    }


def whole_process(project: Path, home: str, runs: int, entry: str) -> dict[str, Any]:
    engram = Path(sys.executable).parent / "engram"
    if entry == "engram":
        command = [str(engram), "context"]
    else:
        command = [sys.executable, str(Path(__file__).with_name("cli_entry.py")), "context"]
    env = serve_off({"ENGRAM_HOME": home, "PATH": str(Path(sys.executable).parent)})
    times = []
    for number in range(runs + 1):
        task = TASKS[number % len(TASKS)]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, task, "--path", str(project), "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        took = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            return {"entry": entry, "error": done.stderr.strip()[-400:]}
        json.loads(done.stdout)
        if number:  # the first run warms the OS file cache
            times.append(took)
    return {"entry": entry, "runs": len(times), "median_ms": round(statistics.median(times))}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", default=str(ROOT / "bench/data/Django-5.0"))
    parser.add_argument("--home", default=str(ROOT / "bench/data/home"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--process-runs", type=int, default=5)
    parser.add_argument("--entry", choices=["engram", "bench"], default="engram")
    parser.add_argument("--json", default="")
    parser.add_argument(
        "--exact-cases",
        default="",
        help="also time search_exact alone on these cases' queries (JSONL)",
    )
    args = parser.parse_args()
    project = Path(args.project).resolve()
    if not project.is_dir():
        print(
            f"no project folder at {project}: pass --project DIR, a tree indexed with "
            "`engram index DIR` (bench/data/Django-5.2 is the Django 5.2 wheel unzipped)",
            file=sys.stderr,
        )
        return 2
    free: dict[str, Any] = {}
    if args.exact_cases:
        free = exact_free_text(project, Path(args.exact_cases))
        print(
            f"search_exact alone on {free['queries']} free-text queries with code terms: "
            f"p50 {free['p50_ms']} / p95 {free['p95_ms']} / max {free['max_ms']} ms"
        )
    result = {
        "breakdown": breakdown(project, args.home),
        "in_process": in_process(project, args.home, args.repeat),
        "process": whole_process(project, args.home, args.process_runs, args.entry),
    }
    if args.exact_cases:
        result["exact_free_text"] = free
    ip, proc = result["in_process"], result["process"]
    print("| Measure | Value | Target |")
    print("| --- | --- | --- |")
    print(
        f"| in-process pipeline p50 / p95 ({ip['runs']} runs) | {ip['p50_ms']} / "
        f"{ip['p95_ms']} ms | p95 ≤ 300 ms |"
    )
    print(
        f"| one pass, tasks naming identifiers ({ip['named_tasks']} of {len(TASKS)}), medians | "
        f"{'–'.join(map(str, ip['named_range_ms']))} ms | |"
    )
    print(
        f"| one pass, tasks without identifiers, medians | "
        f"{'–'.join(map(str, ip['plain_range_ms']))} ms | |"
    )
    print(
        f"| runs where a branch hit the {ip['timeout_ms']} ms timeout | "
        f"{ip['runs_with_a_timeout']} of {ip['runs']} | — |"
    )
    print(
        f"| `engram context` whole process median ({proc.get('entry')}) | "
        f"{proc.get('median_ms', proc.get('error'))} ms | — |"
    )
    print(
        f"| semantic branch stuck: pack built in (median / max) | {ip['stuck_p50_ms']} / "
        f"{ip['stuck_max_ms']} ms | ≤ {ip['timeout_ms'] + OVERHEAD_MS} ms |"
    )
    print(
        f"| stuck runs within timeout + {OVERHEAD_MS} ms | {ip['stuck_within_target']} of "
        f"{ip['stuck_runs']} | all |"
    )
    print(
        "\nNode medians run alone, in order (ms): "
        + ", ".join(f"{name} {ms}" for name, ms in result["breakdown"].items())
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
