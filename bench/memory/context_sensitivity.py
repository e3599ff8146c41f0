"""How recall@10 on LoCoMo depends on the recording-context settings, and whether they transfer.

Grid over ``context_weight`` × ``context_window`` (lexical search, as ``FactStore`` ranks a
large memory), then a leave-one-conversation-out check: for each conversation, the setting
best on the other conversations is scored on the held-out one, beside the shipped default.

    .venv/bin/python -m bench.memory.context_sensitivity [--no-speaker]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace

from bench.memory.locomo_recall import DEFAULT_DATA, load
from engram.stores.memory._search import DEFAULT_SETTINGS, FactIndex
from engram.stores.memory._store import DENSE_MIN_FACTS

WEIGHTS = (0.0, 0.2, 0.3, 0.5, 0.7, 1.0)
WINDOWS = (1, 2, 3)
K = 10


def recalls(conversation: dict, weight: float, window: int) -> list[float]:
    """Recall@10 of each question of one conversation under one setting."""
    settings = replace(DEFAULT_SETTINGS, context_weight=weight, context_window=window)
    texts = [t["text"] for t in conversation["turns"]]
    index = FactIndex(texts, settings=settings, context_results=len(texts) > DENSE_MIN_FACTS)
    ids = [t["id"] for t in conversation["turns"]]
    out = []
    for question in conversation["questions"]:
        top = {ids[row] for row, _ in index.search(question["q"], K)}
        out.append(len(top & set(question["gold"])) / len(question["gold"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-speaker", action="store_true")
    args = parser.parse_args()
    conversations = load(DEFAULT_DATA, speaker=not args.no_speaker)
    grid = [(w, n) for w in WEIGHTS for n in WINDOWS if w > 0 or n == 1]
    table = {p: [recalls(c, *p) for c in conversations] for p in grid}
    print("weight window recall@10 (all questions)")
    for (weight, window), per_conv in table.items():
        flat = [r for rows in per_conv for r in rows]
        print(f"{weight:6.1f} {window:6d} {statistics.mean(flat):.3f}")
    default = (DEFAULT_SETTINGS.context_weight, DEFAULT_SETTINGS.context_window)
    held_out, shipped = [], []
    print("held-out conversation: setting chosen on the others -> recall@10 (default)")
    for i, conversation in enumerate(conversations):

        def others(p: tuple[float, int], i: int = i) -> float:
            return statistics.mean(r for j, rows in enumerate(table[p]) if j != i for r in rows)

        best = max(grid, key=others)
        held_out += table[best][i]
        shipped += table[default][i]
        print(
            f"{conversation['name']}: {best} -> {statistics.mean(table[best][i]):.3f} "
            f"({statistics.mean(table[default][i]):.3f})"
        )
    print(
        f"leave-one-out {statistics.mean(held_out):.3f}, default {default} "
        f"{statistics.mean(shipped):.3f}"
    )


if __name__ == "__main__":
    main()
