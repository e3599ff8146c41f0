"""Indexing a minified one-line bundle: memory stays bounded and the run is quick."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")
BUNDLE_CHARS = 990_000
"""Just under the walk's 1 MB file limit, so the bundle is indexed, not skipped."""
MAX_GROWTH_MB = 400
MAX_SECONDS = 120

MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, peak_kb, flush=True)
sys.stderr.write(done.stdout + done.stderr)
"""


def minified_bundle(chars: int) -> str:
    """Return a one-line bundle of small functions, the shape a JS minifier emits."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < chars:
        parts.append(
            f'function f{i}(a,b){{var c=a+b*{i};return c>{i}?g{i % 7}(c):[a,b,"s{i}"].join(",")}}'
        )
        size += len(parts[-1]) + 1
        i += 1
    return ";".join(parts)[:chars]


def peak_index_rss(project: Path) -> tuple[int, float, str]:
    """Run ``engram index --json`` on ``project``; return (peak RSS in MB, seconds, output)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, ENGRAM, "index", str(project), "--json"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=MAX_SECONDS * 3,
    )
    seconds = time.monotonic() - started
    code, peak_kb = done.stdout.split()
    assert code == "0", done.stderr
    return int(peak_kb) // 1024, seconds, done.stderr


def test_a_one_line_minified_bundle_is_indexed_in_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "hash")
    base = tmp_path / "base"
    (base / "src").mkdir(parents=True)
    (base / "src" / "app.js").write_text("export function start() {\n  return 1;\n}\n")
    baseline_mb, _, _ = peak_index_rss(base)

    bundled = tmp_path / "bundled"
    (bundled / "static").mkdir(parents=True)  # not dist/: build folders are never walked
    (bundled / "src").mkdir()
    (bundled / "src" / "app.js").write_text("export function start() {\n  return 1;\n}\n")
    (bundled / "static" / "bundle.min.js").write_text(minified_bundle(BUNDLE_CHARS))
    peak_mb, seconds, output = peak_index_rss(bundled)

    summary = json.loads(output[output.index("{") :])
    assert summary["files"] == 2
    assert peak_mb - baseline_mb < MAX_GROWTH_MB, (peak_mb, baseline_mb)
    assert seconds < MAX_SECONDS
