"""Run every reliability module in this folder and print one table: tried / held / failed.

Each ``bench/reliability/<name>.py`` (other than this runner) defines ``main()`` returning rows
``(category, tried, held, failures)``, where ``failures`` lists what did not hold. Usage: ``python bench/reliability/run.py [MODULE ...]`` (``make
bench-reliability``); the exit code is 1 when anything failed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# Run as a script, this folder leads sys.path, and its secrets.py would shadow the standard
# library's ``secrets`` (which starlette, under the MCP client, imports).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(ROOT))

Row = tuple[str, int, int, list[str]]


def modules(names: list[str]) -> list[Path]:
    """Return the reliability modules to run (all of them by default)."""
    found = sorted(
        p for p in HERE.glob("*.py") if p.name != "run.py" and not p.name.startswith("_")
    )
    return [p for p in found if not names or p.stem in names]


def run_module(path: Path) -> list[Row]:
    """Import one module from its file and return its ``main()`` rows."""
    spec = importlib.util.spec_from_file_location(f"reliability_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    result = module.main()
    if isinstance(result, int):  # a module that prints its own table returns an exit code
        return [("(table above)", 1, int(result == 0), [f"exit {result}"] if result else [])]
    return list(result)


def print_table(rows: list[tuple[str, Row]]) -> None:
    """Print the combined table and every failure under it."""
    print(f"{'suite':<12} {'category':<22} {'tried':>5} {'held':>5} {'failed':>6}")  # noqa: T201
    for suite, (category, tried, held, failures) in rows:
        print(f"{suite:<12} {category:<22} {tried:>5} {held:>5} {len(failures):>6}")  # noqa: T201
    tried = sum(r[1] for _, r in rows)
    held = sum(r[2] for _, r in rows)
    print(f"{'total':<35} {tried:>5} {held:>5} {tried - held:>6}")  # noqa: T201
    for suite, (category, _, _, failures) in rows:
        for failure in failures:
            print(f"FAILED {suite}/{category}: {failure}")  # noqa: T201


def main() -> int:
    """Run the modules named on the command line (all by default); 1 when anything failed."""
    rows = [(path.stem, row) for path in modules(sys.argv[1:]) for row in run_module(path)]
    print_table(rows)
    return 1 if any(row[3] for _, row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
