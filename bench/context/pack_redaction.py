"""What redacting credentials costs: per pack, and per megabyte of source, prefilter on and off.

    .venv/bin/python bench/context/pack_redaction.py --captures CAPTURE.pkl [CAPTURE.pkl ...] \
        --tree TREE [--megabytes 2] [--runs 3]

CAPTURE.pkl comes from ``bench/locbench/pack_lines.py --capture`` (each case's retrieval
evidence as the pack node received it): every case's 8K pack is assembled again with no
redaction, with each slice's text redacted alone (as before slices were redacted among their
files' lines), with the shipped redaction (``redact_slice``) and its literal prefilter
(``engram.stores._regex_literals``), and with that redaction but no prefilter, the redaction
cache cleared per pack; medians and p90 in ms.
TREE's ``.py`` files (the first MEGABYTES of them, sorted by path) are redacted whole, as code
and as text, with and without the prefilter: median seconds and MB/s. Each setting runs in the
same process, alternating, so the ratios compare like with like. ``--hostile SIZES`` times
texts a hostile file can hold to make the patterns backtrack (``HOSTILE``), with the shipped
limits on runs and line widths and, up to ``--before-up-to`` characters, without them.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "locbench"))


def _no_prefilter() -> Callable[[], None]:
    """Turn the prefilter off (every pattern searched); return what turns it back on."""
    from engram.stores._regex_literals import TextCheck

    kept = TextCheck.may_match
    TextCheck.may_match = lambda self, pattern: True  # type: ignore[method-assign]

    def restore() -> None:
        TextCheck.may_match = kept  # type: ignore[method-assign]

    return restore


def _packs(captures: list[Path], runs: int) -> None:
    from pack_replay import assemble_captured

    import engram.graph.pack._assembly as assembly

    items = [
        item
        for capture in captures
        for item in pickle.loads(capture.read_bytes())
        if item["context"].budget == 8000
    ]
    cached, shipped = assembly.redacted, assembly.redacted_item

    def whole(item, redactor_of=None):  # noqa: ANN001, ANN202 - each slice's text alone
        return shipped(item)

    times: dict[str, list[float]] = {
        "none": [],
        "each slice alone": [],
        "among the file's lines (shipped)": [],
        "among the file's lines, no prefilter": [],
    }
    for _ in range(runs):
        for label in times:
            restore = _no_prefilter() if "no prefilter" in label else (lambda: None)
            if label == "none":
                assembly.redacted_item = lambda item, redactor_of=None: item.text  # type: ignore[assignment]
            elif label == "each slice alone":
                assembly.redacted_item = whole  # type: ignore[assignment]
            for item in items:
                cached.cache_clear()
                started = time.perf_counter()
                assemble_captured(item, 8000)
                times[label].append(time.perf_counter() - started)
            assembly.redacted_item = shipped  # type: ignore[assignment]
            restore()
    print(f"8K packs assembled: {len(items)} cases x {runs} runs")
    print("| redaction | median ms | p90 ms |\n| --- | --- | --- |")
    for label, values in times.items():
        p90 = sorted(values)[int(len(values) * 0.9)]
        print(f"| {label} | {statistics.median(values) * 1000:.1f} | {p90 * 1000:.1f} |")


def _throughput(tree: Path, megabytes: float, runs: int) -> None:
    from engram.stores import redact_secrets

    text = ""
    for path in sorted(tree.rglob("*.py")):
        text += path.read_text(encoding="utf-8", errors="replace") + "\n"
        if len(text) >= megabytes * 1e6:
            break
    size = len(text.encode()) / 1e6
    redact_secrets("warm the patterns")
    print(f"\n{tree.name}: {size:.2f} MB of .py text, {runs} runs")
    print("| read as | prefilter | median s | MB/s | spans |\n| --- | --- | --- | --- | --- |")
    for code in (True, False):
        for on in (True, False):
            restore = (lambda: None) if on else _no_prefilter()
            taken, spans = [], 0
            for _ in range(runs):
                started = time.perf_counter()
                spans = redact_secrets(text, code=code)[1]
                taken.append(time.perf_counter() - started)
            restore()
            median = statistics.median(taken)
            print(
                f"| {'code' if code else 'text'} | {'on' if on else 'off'} | {median:.3f} | "
                f"{size / median:.2f} | {spans} |"
            )


HOSTILE = {
    "spaces after a credential word": lambda n: "token" + " " * n + "!",
    "spaces in an IBM key's assignment": lambda n: "ibm_api_key" + " " * n + "= x",
    "a web token's prefix repeated": lambda n: "x " + "eyJ" * (n // 3),
    "a password assignment repeated": lambda n: "export API_TOKEN=" + "password=" * (n // 9),
    "a host name run after a scheme": lambda n: "https://" + "a." * (n // 2),
}
"""Texts a hostile file can hold to make the patterns backtrack, by size in characters."""


def _hostile(sizes: list[int], before_up_to: int, skip: list[str]) -> None:
    """Time redacting each hostile text, with the shipped defences and, up to a size, without."""
    import engram.stores._redaction as redaction
    from engram.stores import redact_secrets
    from engram.stores._scan_text import Squeezed

    squeezed, pieces = Squeezed.of, redaction.scan_pieces
    redact_secrets("warm the patterns")
    print("\n| hostile text | characters | shipped s | no run or line limits s |")
    print("| --- | --- | --- | --- |")
    for name, build in HOSTILE.items():
        if any(word in name for word in skip):
            continue
        for size in sizes:
            text = build(size)
            started = time.perf_counter()
            redact_secrets(text)
            shipped = time.perf_counter() - started
            before = "not run"
            if size <= before_up_to:
                Squeezed.of = classmethod(lambda cls, t: cls(t, []))  # type: ignore[assignment]
                redaction.scan_pieces = lambda t: iter([(0, t)])  # type: ignore[assignment]
                started = time.perf_counter()
                redact_secrets(text)
                before = f"{time.perf_counter() - started:.3f}"
                Squeezed.of, redaction.scan_pieces = squeezed, pieces  # type: ignore[method-assign]
            print(f"| {name} | {size:,} | {shipped:.3f} | {before} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--captures", nargs="*", default=[])
    parser.add_argument("--tree", default="")
    parser.add_argument("--megabytes", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--hostile", type=int, nargs="*", default=[], help="sizes of the hostile texts to time"
    )
    parser.add_argument(
        "--before-up-to", type=int, default=1_000, help="largest size also timed without limits"
    )
    parser.add_argument("--skip", action="append", default=[], help="leave out texts naming this")
    args = parser.parse_args()
    if args.captures:
        _packs([Path(c) for c in args.captures], args.runs)
    if args.tree:
        _throughput(Path(args.tree), args.megabytes, args.runs)
    if args.hostile:
        _hostile(args.hostile, args.before_up_to, args.skip)


if __name__ == "__main__":
    main()
