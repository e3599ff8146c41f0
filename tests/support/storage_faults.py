"""Hostile and broken storage, as fixtures: a repository shipping its own index, damaged stores.

Each ``Case`` prepares a project and an ``ENGRAM_HOME``, runs one ``engram`` command as a
subprocess and judges the outcome: no traceback, no planted code run (a marker file), the exit
code and message wanted, and whatever the case checks afterwards. Used by the integration tests
and by ``bench/reliability/storage.py``.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.state import state_of

ENGRAM = str(Path(sys.executable).parent / "engram")
MARKER = "planted-code-ran"
SOURCE = {
    "shop/cart.py": (
        "from shop.prices import sum_prices\n\n\nclass Cart:\n"
        "    def total(self):\n        return sum_prices(self)\n"
    ),
    "shop/prices.py": "def sum_prices(cart):\n    return 0\n",
}


class Planted:
    """A pickle payload that creates the marker file when loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@dataclass(frozen=True)
class Case:
    """One fault: how to plant it, the command that meets it, and what holding means."""

    category: str
    name: str
    plant: Callable[[Path, Path], None]
    """Damage the project (first) or the home (second) before the command runs."""
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    exit_ok: bool = True
    """True: the command must succeed; False: it must fail with a message."""
    says: str = ""
    """Text the output must contain."""
    after: Callable[[Path, Path], str] | None = None
    """A check after the command: "" when it held, else what went wrong."""


def make_project(root: Path) -> Path:
    """Write the small project every case starts from."""
    for name, text in SOURCE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def engram(
    args: tuple[str, ...], project: Path, home: Path, extra: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run ``engram`` in ``project`` with its own home and the hash embedder (fast, offline)."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDING_PROVIDER": "hash", **extra}
    env.pop("ENGRAM_PROJECT", None)
    return subprocess.run(
        [ENGRAM, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def run_case(case: Case, workdir: Path) -> str:
    """Run ``case`` in a fresh folder under ``workdir``; return "" when it held, else why not."""
    project = make_project(workdir / "project")
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    case.plant(project, home)
    done = engram(case.command, project, home, case.env)
    output = done.stdout + done.stderr
    if (project / MARKER).exists() or (workdir / MARKER).exists():
        return "planted code ran"
    if "Traceback" in output:
        return "traceback: " + output[-600:]
    if case.exit_ok != (done.returncode == 0):
        return f"exit code {done.returncode}: {output[-600:]}"
    if case.says and case.says not in output:
        return f"output lacks {case.says!r}: {output[-600:]}"
    return case.after(project, home) if case.after is not None else ""


# -- hostile repositories: a project that ships its own .engram/index ----------------------


def _shipped_index(project: Path) -> Path:
    """The folder where older versions kept the index (in the project, which a clone controls)."""
    folder = project / ".engram" / "index"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _state_index(project: Path, home: Path) -> Path:
    """The index engram builds itself: in the project's state folder under ``home``."""
    folder = state_of(project, home).path("index")
    if not folder.is_dir():
        raise AssertionError(f"engram built no index in {folder}")
    return folder


def _payload(project: Path) -> bytes:
    """The pickle planted in the shipped index: it would create the marker when loaded."""
    return pickle.dumps({"version": 5, "facts": Planted(project / MARKER)})


def ship_pickles(project: Path, home: Path) -> None:
    """Ship pickles under every name engram's index uses, a forged stamp, broken JSON."""
    folder = _shipped_index(project)
    payload = _payload(project)
    for name in ("code_graph.pkl", "code_graph.jsonl", "code_graph.delta.jsonl"):
        (folder / name).write_bytes(payload)
    (folder / "stamp.json").write_text(
        json.dumps({"format": "engram-index", "version": 5, "engram": "0.1.0", "root": "0" * 64})
    )
    bm25 = folder / "bm25" / "base"
    bm25.mkdir(parents=True)
    (bm25 / "ids.json").write_text('{"generation": 1, "ids": ["x"]')  # malformed JSON
    (bm25 / "data.csc.index.npy").write_bytes(payload)
    (folder / "manifest.sqlite").write_bytes(b"SQLite format 3\x00" + payload)


def stamped(plant: Callable[[Path], None]) -> Callable[[Path, Path], None]:
    """Plant damage in an index that engram itself built and stamped (local corruption)."""

    def prepare(project: Path, home: Path) -> None:
        done = engram(("index", "."), project, home, {})
        assert done.returncode == 0, done.stderr
        plant(_state_index(project, home))

    return prepare


def graph_rebuilt(project: Path, home: Path) -> str:
    """Check engram answers from a graph it wrote itself (in the state folder)."""
    done = engram(("graph", "sum_prices", "--relation", "callers", "--json"), project, home, {})
    if done.returncode != 0 or "Cart.total" not in done.stdout:
        return f"graph not rebuilt: {done.stdout[-300:]} {done.stderr[-300:]}"
    if not state_of(project, home).path("index", "code_graph.jsonl").is_file():
        return "no relation index in the project's state folder"
    return ""


def shipped_left_alone(project: Path, home: Path) -> str:
    """Check the shipped ``.engram/index`` was neither used nor rewritten: still as planted."""
    shipped = project / ".engram" / "index"
    payload = _payload(project)
    planted = {
        "code_graph.jsonl": payload,
        "manifest.sqlite": b"SQLite format 3\x00" + payload,
    }
    for name, wanted in planted.items():
        if not (shipped / name).is_file() or (shipped / name).read_bytes() != wanted:
            return f"engram rewrote the shipped .engram/index/{name}"
    return ""


def _both(*checks: Callable[[Path, Path], str]) -> Callable[[Path, Path], str]:
    """Run ``checks`` in order; the first failure is the answer."""

    def check(project: Path, home: Path) -> str:
        for one in checks:
            found = one(project, home)
            if found:
                return found
        return ""

    return check


def search_works(project: Path, home: Path) -> str:
    """Check hybrid search answers from the rebuilt index."""
    done = engram(("search", "sum_prices", "--json"), project, home, {})
    if done.returncode != 0 or "shop/prices.py" not in done.stdout:
        return f"search failed after recovery: {done.stdout[-300:]} {done.stderr[-300:]}"
    return ""


def _garbage(name: str) -> Callable[[Path], None]:
    def plant(folder: Path) -> None:
        target = next(folder.rglob(name))
        target.write_bytes(target.read_bytes()[:4096] + b"\x00garbage" * 64)
        for side in ("-wal", "-shm"):
            Path(f"{target}{side}").unlink(missing_ok=True)

    return plant


def _malformed_graph(folder: Path) -> None:
    (folder / "code_graph.jsonl").write_text('{"format": "engram-code-graph", "version": 5\n[[[')


# -- damaged or unavailable stores in ENGRAM_HOME --------------------------------------------


def _truncated(name: str, command: tuple[str, ...]) -> Callable[[Path, Path], None]:
    def plant(project: Path, home: Path) -> None:
        engram(command, project, home, {})
        target = home / name
        target.write_bytes(target.read_bytes()[:3000])
        for side in ("-wal", "-shm"):
            Path(f"{target}{side}").unlink(missing_ok=True)

    return plant


def _home_is_a_file(project: Path, home: Path) -> None:
    home.rmdir()
    home.write_text("not a folder\n")


def _import_file(project: Path, home: Path) -> None:
    lines = [
        json.dumps({"text": "The build uses Gradle 8", "scope": "global"}),
        "[" * 5000 + "]" * 5000,
        '{"text": "huge", "scope": "global", "seq": ' + "9" * 30 + "}",
        '{"text": "huger", "scope": "global", "seq": ' + "9" * 5000 + "}",
        json.dumps({"text": "Releases are cut on Tuesdays", "scope": "global"}),
    ]
    (project / "facts.jsonl").write_text("\n".join(lines) + "\n")


def _both_facts_imported(project: Path, home: Path) -> str:
    done = engram(("memory", "list", "--json"), project, home, {})
    found = "Gradle 8" in done.stdout and "Tuesdays" in done.stdout
    return "" if found else f"the good lines were not imported: {done.stdout[-300:]}"


def _memory_untouched(project: Path, home: Path) -> str:
    size = (home / "memory.sqlite").stat().st_size
    return "" if size == 3000 else f"doctor changed the damaged memory.sqlite ({size} bytes)"


CASES: tuple[Case, ...] = (
    Case(
        "hostile repository",
        "pickles shipped, `engram graph`",
        ship_pickles,
        ("graph", "sum_prices", "--relation", "callers"),
        after=_both(graph_rebuilt, shipped_left_alone),
    ),
    Case(
        "hostile repository",
        "pickles shipped, `engram context`",
        ship_pickles,
        ("context", "where is the cart total computed?"),
        after=_both(graph_rebuilt, shipped_left_alone),
    ),
    Case(
        "hostile repository",
        "pickles shipped, `engram index`",
        ship_pickles,
        ("index", "."),
        after=_both(search_works, shipped_left_alone),
    ),
    Case(
        "hostile repository",
        "pickles shipped, `engram search`",
        ship_pickles,
        ("search", "sum_prices"),
        after=shipped_left_alone,
    ),
    Case(
        "corrupt index",
        "malformed graph file",
        stamped(_malformed_graph),
        ("graph", "sum_prices", "--relation", "callers"),
        after=graph_rebuilt,
    ),
    Case(
        "corrupt index",
        "damaged manifest, `engram index`",
        stamped(_garbage("manifest.sqlite")),
        ("index", "."),
        after=search_works,
    ),
    Case(
        "corrupt index",
        "damaged Chroma store, `engram index`",
        stamped(_garbage("chroma.sqlite3")),
        ("index", "."),
        after=search_works,
    ),
    Case(
        "corrupt store",
        "truncated memory.sqlite",
        _truncated("memory.sqlite", ("memory", "save", "Deploys run from main")),
        ("memory", "list"),
        exit_ok=False,
        says="memory.sqlite",
    ),
    Case(
        "corrupt store",
        "truncated checkpoints.sqlite",
        _truncated("checkpoints.sqlite", ("sessions", "list")),
        ("sessions", "list"),
        exit_ok=False,
        says="checkpoints.sqlite",
    ),
    Case(
        "unavailable store",
        "ENGRAM_HOME is a file",
        _home_is_a_file,
        ("memory", "list"),
        exit_ok=False,
        says="a file is in the way",
    ),
    Case(
        "unavailable store",
        "invalid ENGRAM_DATABASE_URL",
        lambda project, home: None,
        ("memory", "list"),
        env={"ENGRAM_DATABASE_URL": "host=db user"},
        exit_ok=False,
        says="ENGRAM_DATABASE_URL",
    ),
    Case(
        "doctor",
        "damaged manifest is rebuilt",
        stamped(_garbage("manifest.sqlite")),
        ("doctor",),
        says="repaired",
        after=search_works,
    ),
    Case(
        "doctor",
        "truncated memory.sqlite is reported, not touched",
        _truncated("memory.sqlite", ("memory", "save", "Deploys run from main")),
        ("doctor",),
        exit_ok=False,
        says="broken",
        after=_memory_untouched,
    ),
    Case(
        "bad import",
        "5,000-deep line and huge integers",
        _import_file,
        ("memory", "import", "facts.jsonl"),
        says="skipped line 2",
        after=_both_facts_imported,
    ),
)
