"""Fit the issue localizer's weights on locbench-dev, with cross-validation by repository.

    .venv/bin/python bench/locbench/fit.py FEATURES.jsonl [MORE.jsonl ...] \
        [--drop FEATURE ...] [--no-history] [--write stores/codeindex/localizer_weights.json]

Input: the per-file features ``bench/locbench/rank.py --features`` writes, one file per case
file (``cases.jsonl``, ``cases-longtail.jsonl``); they are fitted together. The model is linear:
a weight per feature plus a log-prior per file kind (source fixed at 0). Weights are fitted by
coordinate ascent on mean reciprocal rank, features kept >= 0 and kind priors in [-4, 0].
Leave-one-repository-out: for each repository, fit on all the others (of every file) and score
it, so every figure printed as "held-out" comes from weights that never saw that repository.
Figures are printed per input file and for their union. ``--drop`` holds a feature at 0 (an
ablation); ``--no-history`` drops the history features, which is how a checkout without git
ranks (they are 0 there). ``--write`` saves the weights fitted on every case.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.stores.codeindex._localization import (  # noqa: E402
    FEATURES,
    HISTORY_FEATURES,
    RANK_OFFSET,
    WEIGHTS_FILE,
)

KINDS = ("script", "example", "test", "docs", "stub", "data", "vendored")
FEATURE_STEPS = (0.0, 0.25, 0.5, 0.8, 1.25, 2.0, 4.0)
KIND_STEPS = (-1.0, -0.5, -0.25, 0.25, 0.5)
ROUNDS = 4
NEW_FEATURE_START = 0.5
"""Starting weight of a feature the shipped weights do not have yet."""


class Case:
    """One issue's candidate files as a feature matrix."""

    def __init__(self, row: dict, source: str, as_ranks: tuple[int, ...] = ()) -> None:
        self.repo = row["repo"]
        self.source = source
        self.paths = [p for p, _, _ in row["files"]]
        self.kinds = [k for _, k, _ in row["files"]]
        self.x = np.array([v for _, _, v in row["files"]], dtype=float).reshape(
            len(self.paths), len(FEATURES)
        )
        for f in as_ranks:  # an experiment: a feature's rank among the candidates instead
            column = self.x[:, f]
            order = np.argsort(-column, kind="stable")
            ranked = np.zeros_like(column)
            ranked[order] = 1 / (RANK_OFFSET + np.arange(1, len(column) + 1))
            self.x[:, f] = np.where(column > 0, ranked, 0.0)
        gold = set(row["gold"])
        self.gold = np.array([p in gold for p in self.paths])
        self.n_gold = len(gold)
        # ties are broken by path, as rank_evidence does
        self.order = np.argsort(np.array(self.paths, dtype=object), kind="stable")
        self.kind_index = np.array([KINDS.index(k) if k in KINDS else -1 for k in self.kinds])

    def ranked(self, w: np.ndarray, k: np.ndarray) -> np.ndarray:
        prior = np.where(self.kind_index >= 0, k[self.kind_index], 0.0)
        s = (self.x @ w + prior)[self.order]
        return self.order[np.argsort(-s, kind="stable")]

    def metrics(self, w: np.ndarray, k: np.ndarray) -> dict[str, float]:
        gold = self.gold[self.ranked(w, k)]
        hits = np.flatnonzero(gold)
        rr = 1 / (hits[0] + 1) if len(hits) else 0.0
        return {
            "mrr": float(rr),
            "r1": float(gold[:1].sum()) / self.n_gold,
            "r5": float(gold[:5].sum()) / self.n_gold,
            "acc5": float(gold[:5].sum() == self.n_gold),
        }


def objective(cases: list[Case], w: np.ndarray, k: np.ndarray) -> float:
    return statistics.mean(c.metrics(w, k)["mrr"] for c in cases)


def fit(
    cases: list[Case], w: np.ndarray, k: np.ndarray, frozen: set[int], kinds: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    w, k = w.copy(), k.copy()
    best = objective(cases, w, k)
    for _ in range(ROUNDS):
        improved = False
        for f in range(len(FEATURES)):
            if f in frozen:
                continue
            base = w[f] if w[f] > 0 else 0.1
            for step in FEATURE_STEPS:
                trial = w.copy()
                trial[f] = base * step
                value = objective(cases, trial, k)
                if value > best + 1e-9:
                    best, w, improved = value, trial, True
        for j in range(len(KINDS) if kinds else 0):
            for step in KIND_STEPS:
                trial = k.copy()
                trial[j] = min(0.0, max(-4.0, k[j] + step))
                value = objective(cases, w, trial)
                if value > best + 1e-9:
                    best, k, improved = value, trial, True
        if not improved:
            break
    return w, k


def report(rows: list[tuple[Case, dict]], label: str, by_repo: bool = False) -> None:
    groups: dict[str, list[dict]] = defaultdict(list)
    for case, m in rows:
        groups[f"{case.source} (all)"].append(m)
        groups["union (all)"].append(m)
        if by_repo:
            groups[case.repo].append(m)
    print(
        f"\n{label}\n| group | cases | R@1 | R@5 | Acc@5 | MRR |\n| --- | --- | --- | --- | --- | --- |"
    )
    for name in sorted(groups, key=lambda g: (g.endswith("(all)"), g.startswith("union"), g)):
        ms = groups[name]
        avg = {key: statistics.mean(m[key] for m in ms) for key in ("r1", "r5", "acc5", "mrr")}
        print(
            f"| {name} | {len(ms)} | {avg['r1']:.3f} | {avg['r5']:.3f} | {avg['acc5']:.3f} "
            f"| {avg['mrr']:.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("features", nargs="+")
    parser.add_argument("--drop", action="append", default=[], help="hold this feature at 0")
    parser.add_argument("--no-history", action="store_true", help="drop the history features")
    parser.add_argument(
        "--as-ranks", action="append", default=[], help="use this feature's rank (experiment)"
    )
    parser.add_argument(
        "--fit-only",
        action="append",
        default=[],
        help="fit only these features; the others and the kind priors keep the shipped values",
    )
    parser.add_argument("--by-repo", action="store_true", help="print each repository too")
    parser.add_argument(
        "--start",
        default=str(WEIGHTS_FILE),
        help="weights file the fits start from (default: the shipped one); held-out figures "
        "must start from weights not fitted on the held-out repository",
    )
    parser.add_argument("--write", default="")
    args = parser.parse_args()
    cases = []
    for path in args.features:
        source = Path(path).stem
        cases += [
            Case(json.loads(line), source, tuple(FEATURES.index(f) for f in args.as_ranks))
            for line in Path(path).read_text().splitlines()
            if line.strip()
        ]
    drop = set(args.drop) | (set(HISTORY_FEATURES) if args.no_history else set())
    frozen = {FEATURES.index(f) for f in drop}
    if args.fit_only:
        frozen |= {i for i, f in enumerate(FEATURES) if f not in args.fit_only}
    fit_kinds = not args.fit_only
    start = json.loads(Path(args.start).read_text())
    w0 = np.array(
        [float(start["features"].get(f, NEW_FEATURE_START)) for f in FEATURES], dtype=float
    )
    w0[[FEATURES.index(f) for f in drop]] = 0.0
    shipped = np.array([float(start["features"].get(f, 0.0)) for f in FEATURES], dtype=float)
    k0 = np.array([float(start["kinds"].get(kind, 0.0)) for kind in KINDS], dtype=float)
    print("dropped:", ", ".join(sorted(drop)) or "none")
    report([(c, c.metrics(shipped, k0)) for c in cases], "shipped weights", args.by_repo)
    held_out, blind = [], []
    history = [FEATURES.index(f) for f in HISTORY_FEATURES]
    for repo in sorted({c.repo for c in cases}):
        w, k = fit([c for c in cases if c.repo != repo], w0, k0, frozen, fit_kinds)
        held_out += [(c, c.metrics(w, k)) for c in cases if c.repo == repo]
        no_history = w.copy()
        no_history[history] = 0.0  # what these weights give a checkout without git
        blind += [(c, c.metrics(no_history, k)) for c in cases if c.repo == repo]
    report(
        held_out,
        "leave-one-repository-out (weights fitted on the other repositories)",
        args.by_repo,
    )
    if not drop >= set(HISTORY_FEATURES):
        report(blind, "the same held-out weights on a checkout without git (history features 0)")
    w, k = fit(cases, w0, k0, frozen, fit_kinds)
    report([(c, c.metrics(w, k)) for c in cases], "fitted on every case (in-sample)", args.by_repo)
    weights = {f: round(float(v), 4) for f, v in zip(FEATURES, w, strict=True)}
    kinds = {kind: round(float(v), 3) for kind, v in zip(KINDS, k, strict=True)}
    print("\nweights:", json.dumps(weights), json.dumps(kinds))
    if args.write:
        data = {
            "note": "Fitted by bench/locbench/fit.py on locbench-dev (cases.jsonl and "
            "cases-longtail.jsonl: 149 issues, 36 repositories); held-out figures in "
            "bench/RESULTS.md.",
            "features": weights,
            "kinds": {"source": 0.0, **kinds},
        }
        Path(args.write).write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
