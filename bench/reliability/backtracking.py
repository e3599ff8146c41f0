"""Sweep every compiled pattern in engram for backtracking on crafted text.

    .venv/bin/python bench/reliability/backtracking.py [--sizes 500 1000] [--ratio 2.8]

Each module-level ``re.Pattern`` of the ``engram`` package (also inside tuples and lists) is run
with ``finditer`` over texts made of a prefix and a repeated filler (a run of spaces, of ``a-``,
of newlines, …), at two sizes. A pattern whose time grows by more than ``--ratio`` when the text
doubles (and passes 2 ms) is listed with the prefix and filler that showed it: a quadratic or
worse pattern that a repository, an issue or a conversation could feed. ``finditer`` from every
position overstates patterns the code only ``match``-es at the start of a short name or line, so
each listed pattern still needs a look at how it is used. The credential patterns themselves
run behind ``engram.stores._scan_text`` (runs shortened, long lines windowed), which ``finditer``
here bypasses: they are listed as ``redaction`` when ``redact_secrets`` itself grows.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PREFIXES = ("", "x", "token", "password", 'File "', "def ", "http://", "#", "- ", "<", "[")
FILLERS = (" ", "\t", "\n", "(", "\\", "=", ":", '"', "-", "_", "a", "0", "/", ".", "a.", "-a")
FILLERS += ("a:", "a=", "ab", " =", "= ", ": ", " \n", "eyJ", "//", "password=", "a/", "a(")


def patterns() -> dict[str, re.Pattern[str]]:
    """Return every compiled pattern at module level in the engram package, by dotted name."""
    import engram

    found: dict[str, re.Pattern[str]] = {}
    for module_info in pkgutil.walk_packages(engram.__path__, "engram."):
        try:
            module = importlib.import_module(module_info.name)
        except Exception:  # noqa: BLE001, S112 - an optional extra that is not installed
            continue
        for name, value in vars(module).items():
            items = value if isinstance(value, tuple | list) else (value,)
            for i, item in enumerate(items):
                for inner in item if isinstance(item, tuple) else (item,):
                    if isinstance(inner, re.Pattern) and isinstance(inner.pattern, str):
                        suffix = f"[{i}]" if items is value else ""
                        found[f"{module_info.name}.{name}{suffix}"] = inner
    return found


def _grows(run, sizes: tuple[int, int], ratio: float) -> tuple[float, str, str] | None:  # noqa: ANN001
    """Return (time at the larger size, prefix, filler) of the worst growth, or None."""
    worst = None
    for prefix in PREFIXES:
        for filler in FILLERS:
            times = []
            for size in sizes:
                text = prefix + filler * (size // len(filler)) + "!"
                started = time.perf_counter()
                run(text)
                times.append(time.perf_counter() - started)
            if times[1] > 0.002 and times[1] > ratio * times[0]:
                if worst is None or times[1] > worst[0]:
                    worst = (times[1], prefix, filler)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs=2, default=(500, 1000))
    parser.add_argument("--ratio", type=float, default=2.8)
    args = parser.parse_args()
    from engram.stores import redact_secrets

    redact_secrets("warm the patterns")
    found = patterns()
    rows = []
    for name, pattern in sorted(found.items()):
        worst = _grows(lambda t, p=pattern: list(p.finditer(t)), args.sizes, args.ratio)
        if worst:
            rows.append((name, *worst))
    worst = _grows(lambda t: redact_secrets(t), args.sizes, args.ratio)
    if worst:
        rows.append(("redaction", *worst))
    print(f"{len(found)} patterns, sizes {args.sizes[0]} and {args.sizes[1]} characters")
    print("| pattern | ms at the larger size | prefix | filler |\n| --- | --- | --- | --- |")
    for name, seconds, prefix, filler in rows:
        print(f"| {name} | {seconds * 1000:.1f} | {prefix!r} | {filler!r} |")


if __name__ == "__main__":
    main()
