"""``kill -9`` in the middle of ``edit_file``, ``write_file`` and ``apply_patch``.

A child process flips files between two versions with the real write tools, as fast as it
can; it is SIGKILLed at varied moments many times. After each kill every file holds exactly
its old or its new bytes (never a torn mix or a prefix; a patch killed between two files is
rolled back from its journal, so the files are one version again), the project shows no temp
file (nothing is written into its ``.engram/``), and the temp files a killed writer leaves are
in ``tmp/`` of the project's state folder under ``ENGRAM_HOME`` (outside the tree, never
snapshotted or read), where the next write removes those older than a minute.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.graph import Context
from engram.graph.tools._write import (
    SCRATCH_FOLDER,
    STALE_TEMP_S,
    build_write_tools,
    roll_back_interrupted_writes,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

KILLS = 12
LINES = 14_000
"""About 0.9 MB per version: the write tools' size limit is 1 MB."""
PATCHED = ("a.py", "pkg/b.py", "pkg/c.py")

CHILD = r"""
import os
import sys
import time
from pathlib import Path
from engram.graph._context import Context
from engram.graph.tools._write import build_write_tools

root, kind = Path(sys.argv[1]), sys.argv[2]
PATCHED_FIRST = "a.py"
if os.environ.get("PAUSE_AFTER_FIRST_FILE"):  # hold still where a kill is hardest to survive
    import engram.graph.tools._write as write_tools
    real_put = write_tools._put

    def put(target, text, scratch, **kwargs):
        real_put(target, text, scratch, **kwargs)
        if target.name == PATCHED_FIRST:
            print("between", flush=True)
            time.sleep(60)

    write_tools._put = put
tools = {t.name: t for t in build_write_tools(Context(project=str(root)))}
versions = [Path(sys.argv[3]).read_text(), Path(sys.argv[4]).read_text()]
calls = {
    "edit_file": lambda i: tools["edit_file"].invoke({
        "path": "big.txt", "old_string": f"state = {i % 2}\n",
        "new_string": f"state = {(i + 1) % 2}\n"}),
    "write_file": lambda i: tools["write_file"].invoke({
        "path": "big.txt", "content": versions[(i + 1) % 2]}),
    "apply_patch": lambda i: tools["apply_patch"].invoke({"patch": versions[i % 2]}),
}
# start from the version on disk (the last child may have been killed after any flip)
on_disk = (root / ("a.py" if kind == "apply_patch" else "big.txt")).read_text()
i = {"edit_file": "state = 1\n" in on_disk, "write_file": on_disk == versions[1],
     "apply_patch": "in version" in on_disk}[kind]
print("ready", flush=True)
while True:
    calls[kind](i)
    i += 1
    print(i, flush=True)
"""


def _version(tag: str, lines: int) -> str:
    return f"state = {tag}\n" + "".join(f"line {n:06d} of version {tag}\n" for n in range(lines))


def _patch(old: dict[str, str], new: dict[str, str]) -> str:
    import difflib

    return "".join(
        "".join(
            difflib.unified_diff(
                old[p].splitlines(keepends=True),
                new[p].splitlines(keepends=True),
                f"a/{p}",
                f"b/{p}",
            )
        )
        for p in PATCHED
    )


def _setup(root: Path, kind: str) -> tuple[dict[str, set[bytes]], list[Path]]:
    """Write the project's first version; return each file's allowed contents and the args."""
    root.mkdir()
    (root / "pkg").mkdir()
    side = root.parent / "versions"
    side.mkdir()
    if kind == "edit_file":
        first, second = (
            _version("0", LINES),
            _version("0", LINES).replace("state = 0", "state = 1", 1),
        )
        (root / "big.txt").write_text(first)
        allowed = {"big.txt": {first.encode(), second.encode()}}
        args = [first, second]
    elif kind == "write_file":
        first, second = _version("0", LINES), _version("1", LINES - 3_000)
        (root / "big.txt").write_text(first)
        allowed = {"big.txt": {first.encode(), second.encode()}}
        args = [first, second]
    else:
        old = {p: _version(f"old {p}", 4_000) for p in PATCHED}
        new = {
            p: "".join(
                line.replace("of version", "in version") if n % 40 == 0 else line
                for n, line in enumerate(o.splitlines(keepends=True))
            )
            for p, o in old.items()
        }
        for path, text in old.items():
            (root / path).write_text(text)
        allowed = {p: {old[p].encode(), new[p].encode()} for p in PATCHED}
        args = [_patch(old, new), _patch(new, old)]
    files = []
    for index, text in enumerate(args):
        files.append(side / f"v{index}")
        files[-1].write_text(text)
    return allowed, files


def test_a_patch_killed_between_two_files_is_put_back_by_the_next_session(tmp_path):
    root = tmp_path / "proj"
    allowed, versions = _setup(root, "apply_patch")
    old = {path: (root / path).read_bytes() for path in PATCHED}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), "apply_patch", *map(str, versions)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PAUSE_AFTER_FIRST_FILE": "1"},
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert lines == ["ready\n", "between\n"], proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    now = {path: (root / path).read_bytes() for path in PATCHED}
    assert now["a.py"] != old["a.py"] and now["pkg/b.py"] == old["pkg/b.py"]  # half patched
    assert all(data in allowed[path] for path, data in now.items())
    assert list(_scratch(root).glob("*.json"))  # the killed patch's journal, in the state
    build_write_tools(Context(project=str(root)))  # the next session's tools
    assert {path: (root / path).read_bytes() for path in PATCHED} == old
    assert not list(_scratch(root).glob("*.json"))


def _kill_at(root: Path, kind: str, versions: list[Path], writes: int, delay_s: float) -> None:
    """Start a writer, let it finish ``writes`` writes, kill it ``delay_s`` into the next."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), kind, *map(str, versions)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n", (
            proc.stderr.read() if proc.stderr else ""
        )
        for _ in range(writes):
            assert proc.stdout.readline(), proc.stderr.read() if proc.stderr else ""
        time.sleep(delay_s)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _one_version(root: Path) -> bool:
    """Put back a patch killed between two files; return whether the files are one version."""
    roll_back_interrupted_writes(root, Context(project=str(root)).state)
    return len({b"in version" in (root / path).read_bytes() for path in PATCHED}) == 1


def _scratch(root: Path) -> Path:
    """The temp folder of the state the write tools use (``Context``'s default home, as here)."""
    return Context(project=str(root)).state.path(SCRATCH_FOLDER)


def _project_files(root: Path) -> set[str]:
    """Every file in the project, engram's ``.engram/`` included (it must write none there)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["edit_file", "write_file", "apply_patch"])
def test_a_killed_write_leaves_the_old_or_the_new_file_and_no_temp_file(kind, tmp_path):
    root = tmp_path / "proj"
    allowed, versions = _setup(root, kind)
    rng = random.Random(kind)
    seen: dict[str, set[bytes]] = {path: set() for path in allowed}
    for _ in range(KILLS):
        _kill_at(root, kind, versions, rng.randint(0, 2), rng.uniform(0.0, 0.15))
        assert _project_files(root) == set(allowed)  # no temp file beside the files
        for path, contents in allowed.items():
            data = (root / path).read_bytes()
            assert data in contents, f"{path} is torn: {len(data)} bytes"
            seen[path].add(data)
        if kind == "apply_patch":
            assert _one_version(root), "a killed patch was not rolled back"
    # the kills landed at different points: both versions were seen on disk
    assert all(len(found) == 2 for found in seen.values()), {p: len(s) for p, s in seen.items()}
    _next_write_clears_leftovers(root)


def _next_write_clears_leftovers(root: Path) -> None:
    """Temp files a kill left in the state's tmp/ go with the next write once they are stale."""
    scratch = _scratch(root)
    assert scratch.is_dir() and not scratch.is_relative_to(root)
    leftovers = list(scratch.iterdir())
    old = time.time() - STALE_TEMP_S - 5
    for leftover in leftovers:
        os.utime(leftover, (old, old))
    fresh = scratch / ".in-flight.tmp"  # another writer's temp file, being written now
    fresh.write_bytes(b"")
    tools = {t.name: t for t in build_write_tools(Context(project=str(root)))}
    tools["write_file"].invoke({"path": "after.txt", "content": "written after the kills\n"})
    assert sorted(scratch.iterdir()) == [fresh]
    assert (root / "after.txt").read_text() == "written after the kills\n"
