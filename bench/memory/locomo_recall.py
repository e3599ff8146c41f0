"""LoCoMo retrieval recall of the facts memory, beside a plain BM25 baseline.

Each conversation's turns are imported (``import_jsonl``, ids = dia_id) into their own project
scope of one SQLite memory store; each question searches its conversation's scope through
``FactStore.search``. recall@k = |gold ∩ top-k| / |gold|, mean over questions, overall and per
category; p50/p95 search latency; any result from another scope is counted as a leak.

The data stays outside the repository (CC BY-NC 4.0):

    .venv/bin/python bench/memory/locomo_recall.py \
        --data ../shared/bench/memory/locomo-dev.json --home bench/data/home \
        --modes bm25-plain,lexical,hybrid-default,hybrid-minilm,dense-minilm

Modes: ``bm25-plain`` (bm25s defaults over the same texts), ``cli`` (the installed
``engram memory import`` then one ``engram memory search --batch`` per conversation, each in
its own project folder, default settings), ``lexical`` (engram's default search without an
embedder), ``hybrid-<provider>`` (the default search given that embedder: dense similarity
re-ranks the lexical top 50), ``dense-<provider>`` (embedding similarity alone). Ranking
variants build a ``FactIndex`` over the same texts with the textbook settings in
``FEATURES``: ``lexical+rm3`` (RM3 feedback), ``lexical+bm25plus`` (BM25+), ``lexical+sdm``
(sequential dependence pairs), ``hybrid-<provider>+rrf`` (reciprocal rank fusion instead of
re-ranking), and combinations such as ``hybrid-default+bm25plus``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np

from engram.stores.embeddings import make_embedder
from engram.stores.memory import FactStore, import_jsonl
from engram.stores.memory._search import DEFAULT_SETTINGS, FactIndex, RankSettings
from engram.stores.memory._store import DENSE_MIN_FACTS
from engram.stores.memory._vectors import load_vectors
from engram.stores.project import project_key
from engram.stores.sqlite import open_memory_store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._env import serve_off  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared/bench/memory/locomo-dev.json"


def turn_text(turn: dict, speaker: bool = True) -> str:
    text = f"{turn['speaker']}: {turn['text']}" if speaker else turn["text"]
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def clean_evidence(raw: list[str], known: set[str]) -> list[str]:
    out = []
    for entry in raw:
        for part in re.split(r"[;\s]+", entry):
            part = part.strip()
            if not part:
                continue
            part = re.sub(r"^D:(\d+)", r"D\1", part)
            match = re.match(r"^D(\d+):0*(\d+)$", part)
            if match:
                part = f"D{match.group(1)}:{match.group(2)}"
            if part in known and part not in out:
                out.append(part)
    return out


def load(path: Path, speaker: bool = True) -> list[dict]:
    conversations = []
    for index, sample in enumerate(json.loads(path.read_text())):
        conv = sample["conversation"]
        turns = []
        for key in sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
        ):
            turns += [{"id": t["dia_id"], "text": turn_text(t, speaker)} for t in conv[key]]
        known = {t["id"] for t in turns}
        questions = []
        for qa in sample["qa"]:
            gold = clean_evidence(qa.get("evidence") or [], known)
            if gold:
                questions.append({"q": qa["question"], "gold": gold, "cat": qa["category"]})
        name = sample.get("sample_id") or f"conv-{index}"
        conversations.append({"name": name, "turns": turns, "questions": questions})
    return conversations


def plain_bm25_factory(conversation: dict):
    corpus = [t["text"] for t in conversation["turns"]]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )
    ids = [t["id"] for t in conversation["turns"]]

    def search(query: str, k: int) -> list[tuple[str, str]]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=k, show_progress=False)
        return [(ids[i], conversation["key"]) for i in docs[0].tolist()]

    return search


def dense_only_factory(conversation: dict, store, embedder):
    texts = [t["text"] for t in conversation["turns"]]
    vectors = load_vectors(store, embedder, texts)
    ids = [t["id"] for t in conversation["turns"]]

    def search(query: str, k: int) -> list[tuple[str, str]]:
        scores = vectors @ embedder.embed([query])[0]
        return [(ids[i], conversation["key"]) for i in np.argsort(-scores)[:k].tolist()]

    return search


def cli_factory(conversation: dict, home: Path, work: Path):
    """Run the installed ``engram`` as a user would: import the turns, then one ``--batch``."""
    engram = Path(sys.executable).with_name("engram")
    folder = work / conversation["name"]
    folder.mkdir(parents=True, exist_ok=True)
    turns, queries = folder / "turns.jsonl", folder / "queries.jsonl"
    turns.write_text(
        "".join(
            json.dumps({"id": t["id"], "text": t["text"], "scope": "project"}) + "\n"
            for t in conversation["turns"]
        )
    )
    asked = list(dict.fromkeys(q["q"] for q in conversation["questions"]))
    queries.write_text(
        "".join(json.dumps({"id": n, "query": q}) + "\n" for n, q in enumerate(asked))
    )
    env = serve_off({**os.environ, "ENGRAM_HOME": str(home)})
    subprocess.run(
        [engram, "memory", "import", turns, "--path", folder],
        env=env,
        check=True,
        capture_output=True,
    )
    started = time.perf_counter()
    out = subprocess.run(
        [engram, "memory", "search", "--batch", queries, "--path", folder, "-k", str(max(KS))],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    conversation["cli_seconds"] = time.perf_counter() - started
    answers = {}
    for line in out.splitlines():
        row = json.loads(line)
        answers[asked[row["id"]]] = [(r["id"], r.get("project_key", "")) for r in row["results"]]
    conversation["cli_key"] = project_key(folder)

    def search(query: str, k: int) -> list[tuple[str, str]]:
        return answers[query][:k]

    return search


FEATURES = {
    "rm3": {"feedback_docs": 10, "feedback_terms": 10, "original_weight": 0.5},
    "bm25plus": {"method": "bm25+", "delta": 1.0},
    "sdm": {"phrase_weights": (0.85, 0.10, 0.05), "window": 8},
    "rrf": {"dense_fusion": "rrf"},
    "nocontext": {"context_weight": 0.0},
}
"""Textbook settings of each ranking variant, fixed before measuring."""


def variant_settings(mode: str) -> tuple[RankSettings, str | None]:
    """Parse ``lexical+F1+F2`` or ``hybrid-PROVIDER+F...`` into settings and an embedder."""
    head, *features = mode.split("+")
    options: dict = {}
    for feature in features:
        options.update(FEATURES[feature])
    provider = head.split("-", 1)[1] if head.startswith("hybrid-") else None
    return replace(DEFAULT_SETTINGS, **options), provider


def variant_factory(conversation: dict, store, settings: RankSettings, embedder):
    texts = [t["text"] for t in conversation["turns"]]
    vectors = load_vectors(store, embedder, texts) if embedder is not None else None
    # As FactStore does: large memories let a match's neighbours be results too.
    index = FactIndex(texts, vectors, settings, context_results=len(texts) > DENSE_MIN_FACTS)
    ids = [t["id"] for t in conversation["turns"]]

    def search(query: str, k: int) -> list[tuple[str, str]]:
        vector = embedder.embed([query])[0] if embedder is not None else None
        return [(ids[i], conversation["key"]) for i, _ in index.search(query, k, vector)]

    return search


def run_mode(mode: str, conversations: list[dict], store, home: Path) -> dict:
    embedder = None
    variant = "+" in mode
    settings, provider = variant_settings(mode) if variant else (DEFAULT_SETTINGS, None)
    if not variant and mode.startswith(("hybrid-", "dense-")):
        provider = mode.split("-", 1)[1]
    if provider:
        embedder = make_embedder(provider, home=home, cache=False)
    facts = FactStore(store, embedder=embedder)
    hits: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    work_dir = tempfile.TemporaryDirectory()
    work = Path(work_dir.name)
    latencies, leaks, searched = [], 0, 0
    started = time.perf_counter()
    for conv in conversations:
        if mode == "bm25-plain":
            search = plain_bm25_factory(conv)
        elif mode == "cli":
            search = cli_factory(conv, work / "home", work / "projects")
        elif mode.startswith("dense-"):
            search = dense_only_factory(conv, store, embedder)
        elif variant:
            search = variant_factory(conv, store, settings, embedder)
        else:
            key = conv["key"]

            def search(query: str, k: int, key=key) -> list[tuple[str, str]]:
                found = facts.search(query, project_key=key, k=k)
                return [(h.fact.id, h.fact.project_key) for h in found]

            search("warm up the index", 1)
        own = {t["id"] for t in conv["turns"]}
        for question in conv["questions"]:
            t0 = time.perf_counter()
            results = search(question["q"], max(KS))
            latencies.append((time.perf_counter() - t0) * 1000)
            searched += 1
            expected = conv["cli_key"] if mode == "cli" else conv["key"]
            leaks += sum(1 for fid, key in results if key != expected or fid not in own)
            ranked = [fid for fid, _ in results]
            for k in KS:
                recall = len(set(ranked[:k]) & set(question["gold"])) / len(question["gold"])
                hits["all"][k].append(recall)
                hits[CATEGORIES[question["cat"]]][k].append(recall)
    latencies.sort()
    work_dir.cleanup()
    if mode == "cli":
        # One process per conversation answers all its questions: report its time per query.
        per_query = [c["cli_seconds"] * 1000 / len(c["questions"]) for c in conversations]
        latencies = sorted(per_query * 2)
    return {
        "mode": mode,
        "questions": searched,
        "leaks": leaks,
        "recall": {
            name: {f"@{k}": round(statistics.mean(v), 4) for k, v in by_k.items()}
            for name, by_k in hits.items()
        },
        "counts": {name: len(by_k[KS[0]]) for name, by_k in hits.items()},
        "latency_ms": {
            "p50": round(latencies[len(latencies) // 2], 2),
            "p95": round(latencies[int(len(latencies) * 0.95)], 2),
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="ENGRAM_HOME holding the distilled static table (models/)",
    )
    parser.add_argument("--modes", default="bm25-plain,lexical,hybrid-default")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    parser.add_argument(
        "--no-speaker",
        action="store_true",
        help="import the turn text without the 'speaker: ' prefix",
    )
    args = parser.parse_args()
    conversations = load(args.data, speaker=not args.no_speaker)
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        with open_memory_store(Path(tmp)) as store:
            for conv in conversations:
                conv["key"] = f"/locomo/{conv['name']}"
                lines = [
                    json.dumps({"id": t["id"], "text": t["text"], "scope": "project"})
                    for t in conv["turns"]
                ]
                report = import_jsonl(store, lines, project_key=conv["key"], now=NOW)
                assert report.imported == len(lines), report.skipped[:3]
            reports = [run_mode(m, conversations, store, home) for m in args.modes.split(",")]
    text = json.dumps(reports, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
