"""Phase 0 benchmarks: profile accuracy, latency at scale, token discipline.

Usage: .venv/bin/python -m bench.phase0.bench_phase0 [--runs N] [--out bench/phase0/results.json]

- Accuracy: the labelled table tests/data/task_profiles.jsonl (EN + ZH).
- Latency: a real SqliteStore file seeded with 1,000 episodes, 200 patterns, 50 strategies
  (plus 200 facts); time of the whole Phase 0 (profile, project test scan, store reads,
  selection, facts recall) per task, p50/p95 over every table task repeated N times.
- Token discipline: the experience block against its risk budget for every task, with the
  seeded memory and with oversized records.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from engram.graph import Context, count_text
from engram.graph.profile import profile_task, run_phase0
from engram.graph.profile._phase0_selection import RISK_BUDGETS, select_experience
from engram.graph.profile._task_profile import TASK_TYPES
from engram.stores.memory import (
    Episode,
    ExperienceStore,
    FactStore,
    Pattern,
    Strategy,
    Trigger,
    recall_facts,
)
from engram.stores.project import project_key
from engram.stores.sqlite import open_memory_store

TABLE = Path("tests/data/task_profiles.jsonl")
TAGS = ("production", "auth", "schema", "data-deletion", "multi-file", "no-tests", "has-tests")
WORDS = (
    "cache",
    "retry",
    "schema",
    "login",
    "deploy",
    "index",
    "parser",
    "queue",
    "token",
    "export",
    "billing",
    "search",
    "session",
    "config",
    "worker",
    "timeout",
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def seed(
    store,
    key: str,
    rng: random.Random,
    now: datetime,
    *,
    episodes=1000,
    patterns=200,
    strategies=50,
    facts=200,
) -> None:
    repo = ExperienceStore(store, key)
    for i in range(strategies):
        keys = rng.sample(TASK_TYPES + TAGS, k=rng.randint(1, 3))
        repo.put(
            Strategy(
                id=f"st-{i:04d}",
                principle=f"Strategy {i}: {_text(rng, 14)}",
                applies_to=tuple(keys),
                priority=rng.choice(("high", "medium", "low")),
                scope="global" if i % 10 == 0 else "project",
                created=now - timedelta(days=rng.randint(0, 300)),
            )
        )
    for i in range(patterns):
        trigger = Trigger(
            task_types=tuple(rng.sample(TASK_TYPES, k=rng.randint(0, 2))),
            min_files=rng.choice((None, None, 6)),
            has_tests=rng.choice((None, None, False, True)),
            production=rng.choice((None, None, True)),
            features=tuple(rng.sample(("auth", "schema"), k=rng.choice((0, 0, 1)))),
        )
        repo.put(
            Pattern(
                id=f"pat-{i:04d}",
                name=f"Pattern {i}: {_text(rng, 6)}",
                trigger=trigger,
                failure=_text(rng, 20),
                root_cause=_text(rng, 15),
                prevention=_text(rng, 25),
                confidence=rng.randint(1, 5),
                last_validated=now - timedelta(days=rng.randint(0, 200)),
                status="retired" if i % 25 == 0 else "active",
                evidence=(f"ep-{rng.randint(0, episodes - 1):05d}",),
            )
        )
    for i in range(episodes):
        repo.put(
            Episode(
                id=f"ep-{i:05d}",
                date=now - timedelta(days=rng.uniform(0, 365)),
                task_type=rng.choice(TASK_TYPES),
                summary=_text(rng, 12),
                outcome=rng.choice(("failure", "success", "success", "unknown")),
                files=tuple(f"src/{rng.choice(WORDS)}.py" for _ in range(2)),
                lesson=_text(rng, 18),
                prevention=_text(rng, 12),
                severity=rng.randint(1, 4),
            )
        )
    fact_store = FactStore(store)
    for i in range(facts):
        fact_store.add(
            f"Fact {i}: the {rng.choice(WORDS)} module uses {rng.choice(WORDS)} v{i}",
            scope="project",
            project_key=key,
            source="user",
            force=True,
            provenance={"via": "bench"},
            now=now,
        )


def accuracy(rows: list[dict]) -> dict:
    type_ok = risk_ok = 0
    high_as_low: list[str] = []
    confusion: Counter[str] = Counter()
    misses: list[dict] = []
    for row in rows:
        p = profile_task(row["task"])
        type_ok += p.task_type == row["type"]
        risk_ok += p.risk == row["risk"]
        confusion[f"{row['risk']}->{p.risk}"] += 1
        if row["risk"] == "high" and p.risk == "low":
            high_as_low.append(row["task"])
        if p.task_type != row["type"] or p.risk != row["risk"]:
            misses.append(
                {
                    "task": row["task"],
                    "got": [p.task_type, p.risk],
                    "want": [row["type"], row["risk"]],
                }
            )
    zh = sum(any("\u4e00" <= c <= "\u9fff" for c in r["task"]) for r in rows)
    return {
        "tasks": len(rows),
        "chinese": zh,
        "type_accuracy": type_ok / len(rows),
        "risk_accuracy": risk_ok / len(rows),
        "high_graded_low": high_as_low,
        "risk_confusion": dict(sorted(confusion.items())),
        "misses": misses,
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(round(0.95 * len(ordered))) - 1)] if ordered else 0.0


def latency(rows: list[dict], runs: int, rng: random.Random) -> dict:
    """Time whole Phase 0 calls; wall and CPU time (the machine may be shared)."""
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "tests").mkdir()
        context = Context(project=str(project), engram_home=str(Path(tmp) / "home"))
        with open_memory_store(context.home_path) as store:
            t0 = time.perf_counter()
            seed(store, project_key(project), rng, now)
            seeded_s = time.perf_counter() - t0
            modes = {
                # What the node does when the composition root registers the fact_memory resource.
                "node_cached_facts": partial(recall_facts, facts=FactStore(store)),
                # What `engram profile` does: one fresh FactStore per call.
                "fresh_facts": recall_facts,
                "experience_only": None,
            }
            out: dict[str, dict] = {}
            discipline: list[dict] = []
            for mode, recall in modes.items():
                wall: dict[str, list[float]] = {"low": [], "medium": [], "high": []}
                cpu: list[float] = []
                for _ in range(runs):
                    for row in rows:
                        t, c = time.perf_counter(), time.process_time()
                        result = run_phase0(
                            store,
                            row["task"],
                            context,
                            count_tokens=count_text,
                            now=now,
                            recall=recall,
                        )
                        cpu.append((time.process_time() - c) * 1000)
                        wall[result.profile.risk].append((time.perf_counter() - t) * 1000)
                        if mode == "node_cached_facts":
                            sel = result.selection
                            discipline.append(
                                {
                                    "risk": sel.risk,
                                    "tokens": sel.tokens,
                                    "budget": RISK_BUDGETS[sel.risk],
                                    "items": len(sel.items),
                                }
                            )
                all_ms = [v for vs in wall.values() for v in vs]
                out[mode] = {
                    "calls": len(all_ms),
                    "p50_ms": round(statistics.median(all_ms), 2),
                    "p95_ms": round(_p95(all_ms), 2),
                    "max_ms": round(max(all_ms), 2),
                    "p95_ms_by_risk": {k: round(_p95(v), 2) for k, v in wall.items()},
                    "cpu_p95_ms": round(_p95(cpu), 2),
                }
    return {
        "seed_seconds": round(seeded_s, 2),
        "modes": out,
        "discipline": discipline,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def oversized_discipline(rows: list[dict]) -> dict:
    now = datetime.now(UTC)
    long = "word " * 3000
    strategies = [
        Strategy(id=f"s{i}", principle=long, applies_to=TASK_TYPES + TAGS) for i in range(20)
    ]
    patterns = [
        Pattern(
            id=f"p{i}",
            name=long[:500],
            trigger=Trigger(),
            failure=long,
            root_cause=long,
            prevention=long,
        )
        for i in range(20)
    ]
    episodes = [
        Episode(
            id=f"e{i}",
            date=now,
            task_type=t,
            summary=long,
            outcome="failure",
            lesson=long,
            prevention=long,
            files=("a.py",) * 50,
        )
        for i, t in enumerate(TASK_TYPES * 3)
    ]
    worst = {"low": 0, "medium": 0, "high": 0}
    over = 0
    for row in rows:
        profile = profile_task(row["task"])
        sel = select_experience(
            profile,
            strategies=strategies,
            patterns=patterns,
            episodes=episodes,
            now=now,
            count_tokens=count_text,
        )
        worst[sel.risk] = max(worst[sel.risk], sel.tokens)
        over += sel.tokens > RISK_BUDGETS[sel.risk]
    return {"max_tokens_by_risk": worst, "over_budget": over}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench/phase0/results.json"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line]
    acc = accuracy(rows)
    lat = latency(rows, args.runs, random.Random(7))
    seeded = lat.pop("discipline")
    seeded_max = {
        r: max((d["tokens"] for d in seeded if d["risk"] == r), default=0) for r in RISK_BUDGETS
    }
    items_by_risk = {
        r: sorted({d["items"] for d in seeded if d["risk"] == r}) for r in RISK_BUDGETS
    }
    result = {
        "accuracy": acc,
        "latency": lat,
        "token_discipline": {
            "seeded": {
                "max_tokens_by_risk": seeded_max,
                "budgets": RISK_BUDGETS,
                "items_by_risk": items_by_risk,
                "over_budget": sum(d["tokens"] > d["budget"] for d in seeded),
            },
            "oversized_records": oversized_discipline(rows),
        },
    }
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items()}, indent=2, ensure_ascii=False)[:4000])


if __name__ == "__main__":
    main()
