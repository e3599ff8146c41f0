"""Precision and recall of the facts' conflict check on a written set of fact pairs.

    .venv/bin/python bench/memory/conflicts.py [--pairs bench/memory/data/conflict_pairs.jsonl]

Each line holds an existing fact ``old``, a new one ``new`` and whether a person would call
them a conflict (same subject, another value) or not (they only look alike). The check is the
one ``FactStore.add`` runs (``ConflictIndex.matches``); "seed rules" counts only the duplicate,
numbers and bigram-similarity kinds, "all rules" adds the same-subject, other-value kind.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engram.stores.memory._conflicts import ConflictIndex

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "conflict_pairs.jsonl")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text("utf-8").splitlines() if line]
    print("| rules | pairs | conflicts | caught | false alarms | precision | recall |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, kinds in (
        ("seed rules", {"duplicate", "numbers", "similar"}),
        ("all rules", {"duplicate", "numbers", "similar", "value"}),
    ):
        caught = alarms = 0
        misses: list[str] = []
        for pair in pairs:
            found = [
                m for m in ConflictIndex([pair["old"]]).matches(pair["new"]) if m.kind in kinds
            ]
            if found and pair["conflict"]:
                caught += 1
            elif found:
                alarms += 1
                misses.append(f"  false alarm ({found[0].kind}): {pair['old']} / {pair['new']}")
            elif pair["conflict"]:
                misses.append(f"  missed: {pair['old']} / {pair['new']}")
        conflicts = sum(p["conflict"] for p in pairs)
        precision = caught / (caught + alarms) if caught + alarms else 1.0
        print(
            f"| {name} | {len(pairs)} | {conflicts} | {caught} | {alarms} | "
            f"{precision:.3f} | {caught / conflicts:.3f} |"
        )
        for line in misses:
            print(line)


if __name__ == "__main__":
    main()
