"""Full-index speed of this checkout against a baseline checkout, and whether their results agree.

Usage:
    .venv/bin/python bench/index/build_speed.py TREE [TREE ...] --baseline CHECKOUT [--runs 3]

Each run is a whole process, ``bench/index/cli.py index TREE --json`` of one checkout (its own
copy of the script, with ``PYTHONPATH`` set to that checkout) with a fresh ENGRAM_HOME, so no
index exists and the embedding cache is cold. Runs alternate baseline, this checkout,
baseline, ... so load changes hit both alike; the table gives medians. The first run of each
side is kept and compared: the manifest's chunks (ids, places, embedded texts, BM25 tokens),
BM25 scores of every chunk for a set of queries, the relation index (everything but the
file's random id), the stored vectors of every chunk, and ``search --files`` (top 10) for the
same queries. The baseline is usually a clone of the main branch:
``git clone -q REPO /tmp/base && cp REPO/engram/stores/embeddings/static_minilm/table.npy
/tmp/base/engram/stores/embeddings/static_minilm/``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._env import serve_off  # noqa: E402

QUERIES = (
    "queryset filter exclude",
    "parse the http request headers",
    "migration operation rename field",
    "template engine render context",
    "password hashing algorithm",
    "url resolver reverse",
    "cache backend timeout",
    "form field validation error",
)
"""Queries compared between the two indexes (BM25 scores and ``search --files``)."""


def run_index(checkout: Path, tree: Path, home: Path) -> tuple[float, float, dict]:
    """Time one whole ``index`` process of ``checkout`` over ``tree``: wall and CPU seconds.

    CPU is user plus system time of the process and the worker processes it waited for.
    """
    env = serve_off(
        {
            **os.environ,
            "ENGRAM_HOME": str(home),
            "PYTHONPATH": str(checkout),
            "ANONYMIZED_TELEMETRY": "False",
        }
    )
    command = [sys.executable, str(checkout / "bench/index/cli.py"), "index", str(tree), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, json.loads(out.stdout)


def search_files(checkout: Path, tree: Path, home: Path, query: str) -> list[str]:
    """Return the top 10 files ``search --files`` gives for ``query``."""
    env = serve_off({**os.environ, "ENGRAM_HOME": str(home), "PYTHONPATH": str(checkout)})
    command = [sys.executable, str(checkout / "bench/index/cli.py"), "search", query]
    command += ["--files", "--json", "--path", str(tree)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return [row["path"] for row in json.loads(out.stdout)]


def index_folder(home: Path) -> Path:
    """Return the one project's index folder under ``home``."""
    (folder,) = (home / "projects").glob("*/index")
    return folder


def compare(tree: Path, baseline: Path, base_home: Path, new_home: Path) -> list[str]:
    """Return one line per compared part: identical or what differs."""
    from engram.stores.codeindex import LexicalIndex, code_tokens
    from engram.stores.codeindex._bm25 import query_tokens

    base, new = index_folder(base_home), index_folder(new_home)
    lines: list[str] = []
    chunks = [
        sqlite3.connect(f / "manifest.sqlite")
        .execute("SELECT * FROM chunks ORDER BY id")
        .fetchall()
        for f in (base, new)
    ]
    lines.append(f"manifest chunks ({len(chunks[0])}): " + _same(chunks[0] == chunks[1]))
    loaded = [LexicalIndex.load(f / "bm25" / "base") for f in (base, new)]
    assert loaded[0] is not None and loaded[1] is not None
    (bm_base, _), (bm_new, _) = loaded
    same_bm25 = bm_base.ids == bm_new.ids and all(
        np.array_equal(bm_base.scores(query_tokens(q)), bm_new.scores(query_tokens(q)))
        for q in QUERIES + tuple(code_tokens(" ".join(QUERIES)))
    )
    lines.append(
        f"BM25 scores of every chunk, {len(QUERIES)} queries and their terms: " + _same(same_bm25)
    )
    graphs = [
        (f / "code_graph.jsonl").read_text(encoding="utf-8").split("\n", 1)[1] for f in (base, new)
    ]
    lines.append("relation index (all but its random id): " + _same(graphs[0] == graphs[1]))
    lines.append("stored vectors of every chunk: " + _same(_vectors(base) == _vectors(new)))
    tops = [
        [search_files(checkout, tree, home, q) for q in QUERIES]
        for checkout, home in ((baseline, base_home), (ROOT, new_home))
    ]
    agree = sum(a == b for a, b in zip(*tops, strict=True))
    lines.append(f"`search --files` top 10: {agree} of {len(QUERIES)} queries identical")
    return lines


def _vectors(folder: Path) -> dict[str, bytes]:
    """Read every stored vector of an embedded Chroma index, by chunk id."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    (collection,) = [c for c in client.list_collections() if c.name.startswith("chunks_")]
    got = collection.get(include=["embeddings"])
    return {
        i: np.asarray(v, dtype=np.float32).tobytes()
        for i, v in zip(got["ids"], got["embeddings"], strict=True)
    }


def _same(equal: bool) -> str:
    return "identical" if equal else "DIFFERENT"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--baseline", required=True, help="checkout to compare with")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    baseline = Path(args.baseline).resolve()
    print(
        "| Tree | Chunks | Baseline s (median) | This checkout s (median) | Baseline chunks/s | "
        "This checkout chunks/s | Speed-up |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    notes: list[str] = []
    for raw in args.trees:
        tree = Path(raw).resolve()
        seconds: dict[Path, list[float]] = {baseline: [], ROOT: []}
        cpu: dict[Path, list[float]] = {baseline: [], ROOT: []}
        kept: dict[Path, Path] = {}
        chunks = 0
        for _ in range(args.runs):
            for checkout in (baseline, ROOT):
                home = Path(tempfile.mkdtemp(prefix="engram-build-speed-"))
                took, used, summary = run_index(checkout, tree, home)
                seconds[checkout].append(took)
                cpu[checkout].append(used)
                chunks = summary["chunks"]
                if checkout in kept:
                    shutil.rmtree(home, ignore_errors=True)
                else:
                    kept[checkout] = home
        base, new = statistics.median(seconds[baseline]), statistics.median(seconds[ROOT])
        print(
            f"| {tree.name} | {chunks} | {base:.1f} | {new:.1f} | {chunks / base:.0f} | "
            f"{chunks / new:.0f} | {base / new:.2f}x |",
            flush=True,
        )
        runs = {k.name: [round(s, 1) for s in v] for k, v in seconds.items()}
        used = {k.name: [round(s, 1) for s in v] for k, v in cpu.items()}
        notes.append(f"{tree.name}: wall s {runs}; CPU s {used}; load {os.getloadavg()}")
        notes += [f"  {line}" for line in compare(tree, baseline, kept[baseline], kept[ROOT])]
        for home in kept.values():
            shutil.rmtree(home, ignore_errors=True)
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
