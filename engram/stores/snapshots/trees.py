"""Whole-tree snapshots of a project: git tree objects, or content-addressed copies.

In a git repository a snapshot is a tree object written through a private index file, so the
user's index, HEAD and branches never change; a ref under ``refs/engram/snapshots/`` keeps
each tree from ``git gc``. Elsewhere each file's bytes are stored once under
``.engram/snapshots/objects/`` and a snapshot is the manifest of paths to blobs. Either way
``.engram/``, ``.git/`` and secrets files are left out, and git also leaves out ignored files.

Errors: ``SnapshotError(StoreError)`` — git failed or a snapshot is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engram.stores.atomic_file import write_atomically
from engram.stores.errors import StoreError
from engram.stores.paths import PROTECTED_DIRS, is_protected_dir, is_protected_or_secret

__all__ = [
    "SNAPSHOT_FOLDER",
    "FileEntry",
    "SnapshotError",
    "TreeStore",
    "changed_paths",
    "open_trees",
]

SNAPSHOT_FOLDER = Path(".engram") / "snapshots"
"""Where a project's snapshot log, private git index and (without git) copies live."""
REF_NAMESPACE = "refs/engram/snapshots/"
EXECUTABLE = 0o755
REGULAR = 0o644


class SnapshotError(StoreError):
    """A snapshot could not be written or read (git failed, an object is missing)."""


@dataclass(frozen=True)
class FileEntry:
    """One file of a snapshot: its content's id and whether it is executable."""

    blob: str
    executable: bool = False


class TreeStore(Protocol):
    """Writes and reads whole-tree snapshots of one project."""

    def snapshot(self) -> str:
        """Record the project's files as they are now; return the snapshot's id."""
        ...

    def files(self, tree: str) -> dict[str, FileEntry]:
        """Return a snapshot's files by project-relative POSIX path."""
        ...

    def read(self, entry: FileEntry) -> bytes:
        """Return a file's bytes as a snapshot holds them."""
        ...


def changed_paths(old: dict[str, FileEntry], new: dict[str, FileEntry]) -> set[str]:
    """Return the paths whose content or mode differs between two snapshots, either side."""
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


class GitTrees:
    """Snapshots as git tree objects, written through a private index."""

    def __init__(self, root: Path, prefix: str) -> None:
        """Bind to a project ``root`` lying at ``prefix`` (``""`` or ``"sub/"``) in its repo."""
        self.root = root
        self.prefix = prefix
        self.index = root / SNAPSHOT_FOLDER / "git-index"

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        env = {**os.environ, "GIT_INDEX_FILE": str(self.index), "GIT_OPTIONAL_LOCKS": "0"}
        done = subprocess.run(["git", *args], cwd=self.root, input=data, capture_output=True,
                              env=env, check=False)
        if done.returncode != 0:
            raise SnapshotError(f"git {args[0]} failed: "
                                f"{done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    def snapshot(self) -> str:
        """Stage every file into the private index and write it as a tree; keep it with a ref."""
        self.index.parent.mkdir(parents=True, exist_ok=True)
        excluded = (f":(exclude,glob,icase)**/{d}/**" for d in PROTECTED_DIRS)
        self._git("add", "-A", "--", ".", *excluded)
        staged = self._git("ls-files", "-z", "--", ".").decode(errors="surrogateescape")
        secrets = [p for p in staged.split("\0") if p and is_protected_or_secret(p)]
        if secrets:
            self._git("rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                      "--pathspec-file-nul", data="\0".join(secrets).encode())
        prefix = [f"--prefix={self.prefix}"] if self.prefix else []
        tree_id = self._git("write-tree", *prefix).decode().strip()
        self._git("update-ref", REF_NAMESPACE + tree_id, tree_id)
        return tree_id

    def files(self, tree: str) -> dict[str, FileEntry]:
        """List a tree's files (``git ls-tree -r``)."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", tree).decode(
            errors="surrogateescape")
        entries: dict[str, FileEntry] = {}
        for line in filter(None, out.split("\0")):
            meta, path = line.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind == "blob":
                entries[path] = FileEntry(blob, mode == "100755")
        return entries

    def read(self, entry: FileEntry) -> bytes:
        """Return a blob's bytes (``git cat-file blob``)."""
        return self._git("cat-file", "blob", entry.blob)


class CopyTrees:
    """Snapshots as content-addressed copies under ``.engram/snapshots/``."""

    def __init__(self, root: Path) -> None:
        """Bind to a resolved project root."""
        self.root = root
        self.folder = root / SNAPSHOT_FOLDER
        self.cache_path = self.folder / "stat-cache.json"

    def _object(self, digest: str) -> Path:
        return self.folder / "objects" / digest[:2] / digest[2:]

    def _store(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self._object(digest)
        if not target.exists():
            write_atomically(target, data)
        return digest

    def _walk(self) -> list[tuple[str, os.stat_result]]:
        found: list[tuple[str, os.stat_result]] = []
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = [d for d in dirs if not is_protected_dir(d)]
            base = Path(folder).relative_to(self.root).as_posix()
            for name in names:
                relative = name if base == "." else f"{base}/{name}"
                info = os.lstat(os.path.join(folder, name))
                if stat.S_ISREG(info.st_mode) and not is_protected_or_secret(relative):
                    found.append((relative, info))
        return found

    def _load_cache(self) -> dict[str, list[object]]:
        try:
            cache = json.loads(self.cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return cache if isinstance(cache, dict) else {}

    def snapshot(self) -> str:
        """Copy each changed file into the object store; store and return the manifest's id."""
        cache = self._load_cache()
        fresh: dict[str, list[object]] = {}
        manifest: dict[str, list[object]] = {}
        for relative, info in sorted(self._walk()):
            key = [info.st_size, info.st_mtime_ns]
            cached = cache.get(relative)
            if cached and cached[:2] == key and self._object(str(cached[2])).exists():
                digest = str(cached[2])
            else:
                digest = self._store((self.root / relative).read_bytes())
            fresh[relative] = [*key, digest]
            manifest[relative] = [digest, bool(info.st_mode & stat.S_IXUSR)]
        write_atomically(self.cache_path, json.dumps(fresh).encode())
        return self._store(json.dumps(manifest, sort_keys=True).encode())

    def files(self, tree: str) -> dict[str, FileEntry]:
        """Read a manifest back."""
        try:
            manifest = json.loads(self._object(tree).read_bytes())
        except (OSError, ValueError) as exc:
            raise SnapshotError(f"snapshot {tree} is missing or damaged: {exc}") from exc
        return {path: FileEntry(str(blob), bool(ex)) for path, (blob, ex) in manifest.items()}

    def read(self, entry: FileEntry) -> bytes:
        """Return a stored file's bytes."""
        try:
            return self._object(entry.blob).read_bytes()
        except OSError as exc:
            raise SnapshotError(f"snapshot object {entry.blob} is missing: {exc}") from exc


def _git_prefix(root: Path) -> str | None:
    """Return the project's place in its git work tree, or None when it is not in one."""
    try:
        done = subprocess.run(["git", "rev-parse", "--is-inside-work-tree", "--show-prefix"],
                              cwd=root, capture_output=True, text=True, check=False)
    except OSError:  # no git installed
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or lines[0] != "true":
        return None
    return lines[1] if len(lines) > 1 else ""


def open_trees(root: Path) -> TreeStore:
    """Return the snapshot store for a project: git trees in a work tree, copies elsewhere."""
    prefix = _git_prefix(root)
    return CopyTrees(root) if prefix is None else GitTrees(root, prefix)
