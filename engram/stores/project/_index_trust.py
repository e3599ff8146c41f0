"""Trust in a project's index folder: only data this engram wrote here, for this root, is read.

A cloned repository can ship its own ``.engram/index/``. Every loader reads data formats only
(SQLite, JSON, numpy without pickles), so such files cannot execute code; beyond that, the
folder carries ``stamp.json`` naming the index format, the engram version and a fingerprint of
the project root on this machine. A folder whose stamp is missing, unreadable or different
(written elsewhere, in another index format, or shipped in a repository) is set aside and
deleted before anything in it is opened, and the index is rebuilt from the files. The engram
version that wrote it is recorded but not compared: an upgrade that keeps the index format
keeps every project's index (INDEX_FORMAT_VERSION changes when the format does).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import socket
import uuid
from pathlib import Path

from engram import __version__
from engram.stores._write_lock import file_lock
from engram.stores.project._state import private_dir

STAMP_FILE = "stamp.json"
INDEX_FORMAT_VERSION = 5
"""Version of everything under ``.engram/index``; another version is rebuilt, not read."""
MAX_STAMP_BYTES = 4096
RECORDED_ONLY = "engram"
"""The stamp's field that is written but not compared: the engram version (see above)."""
MACHINE_ID_FILES = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))


@functools.lru_cache(maxsize=1)
def _machine() -> str:
    for candidate in MACHINE_ID_FILES:
        try:
            text = candidate.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            return text
    return socket.gethostname()


def expected_stamp(root: Path) -> dict[str, object]:
    """Return the stamp an index of ``root`` written here by this engram carries."""
    fingerprint = hashlib.sha256(
        json.dumps(
            [str(root.resolve()), _machine(), os.getuid() if hasattr(os, "getuid") else 0]
        ).encode("utf-8")
    ).hexdigest()
    return {
        "format": "engram-index",
        "version": INDEX_FORMAT_VERSION,
        "engram": __version__,
        "root": fingerprint,
    }


def index_is_trusted(index_dir: Path, root: Path) -> bool:
    """Return True when ``index_dir`` carries the stamp of ``root`` on this machine."""
    try:
        with (index_dir / STAMP_FILE).open("rb") as handle:
            raw = handle.read(MAX_STAMP_BYTES + 1)
        stamp = json.loads(raw) if len(raw) <= MAX_STAMP_BYTES else None
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(stamp, dict) or not isinstance(stamp.get(RECORDED_ONLY), str):
        return False
    expected = expected_stamp(root)
    return {**stamp, RECORDED_ONLY: ""} == {**expected, RECORDED_ONLY: ""}


def claim_index_dir(index_dir: Path, root: Path, *, home: Path, discard: bool = False) -> bool:
    """Make ``index_dir`` a trusted, stamped folder; discard whatever it held otherwise.

    Args:
        index_dir: The project's index folder (in its state folder under ``home``).
        root: The project root it indexes.
        home: ENGRAM_HOME, below which no link is followed.
        discard: Discard the contents even when stamped (they were found unreadable).

    Returns:
        True when contents were discarded (the caller rebuilds from the files).
    """
    if not discard and index_is_trusted(index_dir, root):
        return False
    private_dir(index_dir.parent, home)
    with file_lock(index_dir.parent / "index.lock")("claim"):
        if not discard and index_is_trusted(
            index_dir, root
        ):  # another process claimed it meanwhile
            return False
        discarded = index_dir.is_symlink() or (index_dir.is_dir() and any(index_dir.iterdir()))
        if discarded:
            aside = index_dir.with_name(f".{index_dir.name}.untrusted-{uuid.uuid4().hex[:8]}")
            os.replace(index_dir, aside)
            if aside.is_symlink():  # a shipped link: drop the link, never what it points at
                aside.unlink()
            else:
                shutil.rmtree(aside, ignore_errors=True)
        elif index_dir.exists() and not index_dir.is_dir():
            index_dir.unlink()
        private_dir(index_dir, home)
        _write_stamp(index_dir, root)
    return discarded


def _write_stamp(index_dir: Path, root: Path) -> None:
    target = index_dir / STAMP_FILE
    tmp = index_dir / f".{STAMP_FILE}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(json.dumps(expected_stamp(root)), encoding="utf-8")
    os.replace(tmp, target)
