"""Search and write latency of the facts memory with 10,000 facts in one project scope.

Facts are synthetic sentences of words drawn (seeded) from the bundled MiniLM vocabulary,
imported into a SQLite memory store; searches and conflict-checked writes go through the
in-process ``FactStore`` API.

    .venv/bin/python bench/memory/latency.py --facts 10000 --home bench/data/home
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from tokenizers import Tokenizer

from engram.stores._errors import ConflictError
from engram.stores.embeddings import STATIC_FOLDER, make_embedder
from engram.stores.memory import FactStore, import_jsonl
from engram.stores.sqlite import open_memory_store

KEY = "/bench/latency-project"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def vocabulary() -> list[str]:
    tokenizer = Tokenizer.from_file(str(STATIC_FOLDER / "tokenizer.json"))
    by_id = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    words = [w for w, _ in by_id if re.fullmatch(r"[a-z]{3,12}", w)]
    return words[:8000]


def sentence(rng: random.Random, words: list[str]) -> str:
    body = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
    if rng.random() < 0.3:
        body += f" version {rng.randint(1, 30)}.{rng.randint(0, 9)}"
    return body[0].upper() + body[1:]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": percentile(values, 0.5),
        "p95": percentile(values, 0.95),
        "mean": round(statistics.mean(values), 2),
        "n": len(values),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="ENGRAM_HOME with the distilled static table, for the hybrid run",
    )
    args = parser.parse_args()
    rng = random.Random(0)
    words = vocabulary()
    texts = [sentence(rng, words) for _ in range(args.facts)]
    queries = [
        " ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) for _ in range(args.queries)
    ]
    report: dict[str, object] = {"facts": args.facts}
    with tempfile.TemporaryDirectory() as tmp, open_memory_store(Path(tmp)) as store:
        lines = [
            json.dumps({"id": f"f{i}", "text": t, "scope": "project"}) for i, t in enumerate(texts)
        ]
        t0 = time.perf_counter()
        import_jsonl(store, lines, project_key=KEY, now=NOW)
        report["import_s"] = round(time.perf_counter() - t0, 2)

        runs = [("lexical", None)]
        if args.home is not None:
            runs.append(("hybrid-default", make_embedder("default", home=args.home, cache=False)))
        for name, embedder in runs:
            facts = FactStore(store, embedder=embedder)
            t0 = time.perf_counter()
            facts.search("warm up", project_key=KEY)
            cold = time.perf_counter() - t0
            times = []
            for query in queries:
                t0 = time.perf_counter()
                facts.search(query, project_key=KEY, k=10)
                times.append((time.perf_counter() - t0) * 1000)
            report[f"search_{name}_ms"] = summary(times)
            report[f"search_{name}_first_call_s"] = round(cold, 2)

        facts = FactStore(store)
        facts.facts(project_key=KEY)
        write_times, conflicts = [], 0
        for _ in range(args.writes):
            text = sentence(rng, words)
            t0 = time.perf_counter()
            try:
                facts.add(text, scope="project", project_key=KEY, source="user", now=NOW)
            except ConflictError:
                conflicts += 1
            write_times.append((time.perf_counter() - t0) * 1000)
        report["write_with_conflict_check_ms"] = summary(write_times)
        report["write_conflicts"] = conflicts
        t0 = time.perf_counter()
        FactStore(store).add(
            sentence(rng, words), scope="project", project_key=KEY, source="user", now=NOW
        )
        report["write_fresh_process_first_call_s"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
