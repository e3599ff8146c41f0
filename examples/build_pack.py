"""Build engram's context pack for a task from Python, with no model.

Usage: python examples/build_pack.py [PROJECT] [TASK] [BUDGET]
"""

from __future__ import annotations

import sys

from engram.api import build_pack


def main() -> None:
    """Print the pack's sections, the files it chose and why, then its text."""
    project = sys.argv[1] if len(sys.argv) > 1 else "."
    task = sys.argv[2] if len(sys.argv) > 2 else "where is the entry point of this project?"
    budget = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
    pack = build_pack(task, project, budget)
    print(f"pack: {pack.tokens} of {pack.budget} tokens")
    for section in pack.sections:
        print(f"  {section.name}: {section.tokens} tokens, {len(section.items)} items")
    code_map = pack.section("code_map")
    for item in code_map.items if code_map else ():
        print(f"  file {item.path} score={item.score:.4f} why: {'; '.join(item.reasons)}")
    slices = pack.section("slices")
    for item in slices.items if slices else ():
        first, last = item.lines
        print(f"  slice {item.path}:{first}-{last} {item.symbol}")
    for note in pack.notes:
        print(f"  note: {note}")
    print(pack.text)


if __name__ == "__main__":
    main()
