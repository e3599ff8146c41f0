"""Fit the issue localizer's weights on locbench-dev, with cross-validation by repository.

    .venv/bin/python bench/locbench/fit.py bench/out/locbench_features.jsonl \
        [--write stores/codeindex/localizer_weights.json]

Input: the per-file features ``bench/locbench/rank.py --features`` writes. The model is linear:
a weight per feature plus a log-prior per file kind (source fixed at 0). Weights are fitted by
coordinate ascent on mean reciprocal rank, features kept >= 0 and kind priors in [-4, 0].
Leave-one-repository-out: for each repository, fit on the other nine and score it, so every
figure printed as "held-out" comes from weights that never saw that repository. ``--write``
saves the weights fitted on all ten.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engram.stores.codeindex._localization import FEATURES, WEIGHTS_FILE  # noqa: E402

KINDS = ("script", "example", "test", "docs", "stub", "data", "vendored")
FEATURE_STEPS = (0.0, 0.5, 0.8, 1.25, 2.0)
KIND_STEPS = (-1.0, -0.5, -0.25, 0.25, 0.5)
ROUNDS = 4


def load(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def scores(case: dict, w: dict, k: dict) -> list[tuple[float, str]]:
    out = []
    for path, kind, vector in case["files"]:
        s = sum(w[f] * v for f, v in zip(FEATURES, vector, strict=True)) + (
            0.0 if kind == "source" else k.get(kind, 0.0)
        )
        out.append((-s, path))
    out.sort()
    return out


def case_metrics(case: dict, w: dict, k: dict) -> dict[str, float]:
    ranked = [p for _, p in scores(case, w, k)]
    gold = set(case["gold"])
    rr = next((1 / i for i, p in enumerate(ranked, 1) if p in gold), 0.0)
    return {
        "mrr": rr,
        "r1": len(gold & set(ranked[:1])) / len(gold),
        "acc5": float(gold <= set(ranked[:5])),
        "r5": len(gold & set(ranked[:5])) / len(gold),
    }


def objective(cases: list[dict], w: dict, k: dict) -> float:
    return statistics.mean(case_metrics(c, w, k)["mrr"] for c in cases)


def fit(cases: list[dict], w: dict, k: dict) -> tuple[dict, dict]:
    w, k = dict(w), dict(k)
    best = objective(cases, w, k)
    for _ in range(ROUNDS):
        improved = False
        for f in FEATURES:
            base = w[f] if w[f] > 0 else 0.1
            for step in FEATURE_STEPS:
                trial = dict(w, **{f: base * step})
                value = objective(cases, trial, k)
                if value > best + 1e-9:
                    best, w, improved = value, trial, True
        for kind in KINDS:
            for step in KIND_STEPS:
                trial = dict(k, **{kind: min(0.0, max(-4.0, k.get(kind, 0.0) + step))})
                value = objective(cases, w, trial)
                if value > best + 1e-9:
                    best, k, improved = value, trial, True
        if not improved:
            break
    return w, k


def report(rows: list[tuple[dict, dict]], label: str) -> None:
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for case, m in rows:
        by_repo[case["repo"]].append(m)
        by_repo["All"].append(m)
        if case["repo"] != "yt-dlp/yt-dlp":
            by_repo["All but yt-dlp"].append(m)
    print(
        f"\n{label}\n| repo | cases | R@1 | R@5 | Acc@5 | MRR |\n| --- | --- | --- | --- | --- | --- |"
    )
    for repo in sorted(by_repo, key=lambda r: (r.startswith("All"), r)):
        ms = by_repo[repo]
        avg = {key: statistics.mean(m[key] for m in ms) for key in ("r1", "r5", "acc5", "mrr")}
        print(
            f"| {repo} | {len(ms)} | {avg['r1']:.3f} | {avg['r5']:.3f} | {avg['acc5']:.3f} | {avg['mrr']:.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("features")
    parser.add_argument("--write", default="")
    args = parser.parse_args()
    cases = load(args.features)
    start = json.loads(WEIGHTS_FILE.read_text())
    w0 = {f: float(start["features"].get(f, 0.0)) for f in FEATURES}
    k0 = {kind: float(start["kinds"].get(kind, 0.0)) for kind in KINDS}
    report([(c, case_metrics(c, w0, k0)) for c in cases], "shipped weights (in-sample for any fit)")
    held_out = []
    for repo in sorted({c["repo"] for c in cases}):
        train = [c for c in cases if c["repo"] != repo]
        w, k = fit(train, w0, k0)
        held_out += [(c, case_metrics(c, w, k)) for c in cases if c["repo"] == repo]
    report(
        held_out,
        "leave-one-repository-out (each repository scored by weights fitted on the others)",
    )
    w, k = fit(cases, w0, k0)
    report([(c, case_metrics(c, w, k)) for c in cases], "fitted on all ten (in-sample)")
    print(
        "\nweights:",
        json.dumps({f: round(v, 4) for f, v in w.items()}),
        json.dumps({kind: round(v, 3) for kind, v in k.items()}),
    )
    if args.write:
        data = {
            "note": "Fitted by bench/locbench/fit.py on locbench-dev (93 issues, 10 repositories); "
            "held-out figures in bench/RESULTS.md.",
            "features": {f: round(v, 4) for f, v in w.items()},
            "kinds": {"source": 0.0, **{kind: round(v, 3) for kind, v in k.items()}},
        }
        Path(args.write).write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
