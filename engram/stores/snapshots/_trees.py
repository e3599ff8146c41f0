"""Whole-tree snapshots of a project: git tree objects, or content-addressed copies.

In a git repository a snapshot is a tree object written through a private index file, so the
user's index, HEAD and branches never change; a ref under ``refs/engram/snapshots/`` keeps
each tree from ``git gc``. Elsewhere each file's bytes are stored once under ``snapshots/objects/``
of the project's state folder (under ENGRAM_HOME) and a snapshot is the manifest of paths to
blobs. Either way ``.engram/``, ``.git/`` and secrets files are left out, and git also leaves out
ignored files. Every object read back is checked against its id before it is returned, so a
planted or damaged object is never written into a user's file; git runs with hooks and the
file-system monitor off and without secrets in its environment.

Errors: ``SnapshotError(StoreError)`` — git failed or a snapshot is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engram.stores._errors import StoreError
from engram.stores.files import (
    PROTECTED_DIRS,
    is_protected_dir,
    is_protected_or_secret,
    read_regular,
    run_plumbing,
    write_atomically,
)
from engram.stores.project import ProjectState

SNAPSHOT_FOLDER = "snapshots"
"""In the project's state folder: the snapshot log, private git index and (without git) copies."""
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

    def __init__(self, root: Path, prefix: str, state: ProjectState) -> None:
        """Bind to a project ``root`` lying at ``prefix`` (``""`` or ``"sub/"``) in its repo."""
        self.root = root
        self.prefix = prefix
        self.state = state
        self.index = state.path(SNAPSHOT_FOLDER, "git-index")

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        done = run_plumbing(self.root, *args, data=data, env={"GIT_INDEX_FILE": str(self.index)})
        if done.returncode != 0:
            raise SnapshotError(
                f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}"
            )
        return done.stdout

    def snapshot(self) -> str:
        """Stage every file into the private index and write it as a tree; keep it with a ref."""
        self.state.make(SNAPSHOT_FOLDER)
        excluded = (f":(exclude,glob,icase)**/{d}/**" for d in PROTECTED_DIRS)
        self._git("add", "-A", "--", ".", *excluded)
        staged = self._git("ls-files", "-z", "--", ".").decode(errors="surrogateescape")
        secrets = [p for p in staged.split("\0") if p and is_protected_or_secret(p)]
        if secrets:
            self._git(
                "rm",
                "--cached",
                "-q",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                data="\0".join(secrets).encode(),
            )
        prefix = [f"--prefix={self.prefix}"] if self.prefix else []
        tree_id = self._git("write-tree", *prefix).decode().strip()
        self._git("update-ref", REF_NAMESPACE + tree_id, tree_id)
        return tree_id

    def files(self, tree: str) -> dict[str, FileEntry]:
        """List a tree's files (``git ls-tree -r``)."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", tree).decode(errors="surrogateescape")
        entries: dict[str, FileEntry] = {}
        for line in filter(None, out.split("\0")):
            meta, path = line.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind == "blob":
                entries[path] = FileEntry(blob, mode == "100755")
        return entries

    def read(self, entry: FileEntry) -> bytes:
        """Return a blob's bytes (``git cat-file blob``), checked against the blob's id."""
        data = self._git("cat-file", "blob", entry.blob)
        if _git_blob_id(data, len(entry.blob)) != entry.blob:
            raise SnapshotError(
                f"snapshot object {entry.blob} does not match its content; it is not restored"
            )
        return data


class CopyTrees:
    """Snapshots as content-addressed copies under the state folder's ``snapshots/``."""

    def __init__(self, root: Path, state: ProjectState) -> None:
        """Bind to a resolved project root and its state folder."""
        self.root = root
        self.state = state
        self.folder = state.path(SNAPSHOT_FOLDER)
        self.cache_path = self.folder / "stat-cache.json"

    def _object(self, digest: str) -> Path:
        return self.folder / "objects" / digest[:2] / digest[2:]

    def _store(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self._object(digest)
        if not target.exists():
            self.state.make(SNAPSHOT_FOLDER, "objects", digest[:2])
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
        self.state.make(SNAPSHOT_FOLDER)
        write_atomically(self.cache_path, json.dumps(fresh).encode())
        return self._store(json.dumps(manifest, sort_keys=True).encode())

    def files(self, tree: str) -> dict[str, FileEntry]:
        """Read a manifest back."""
        try:
            manifest = json.loads(self._checked(tree))
        except (OSError, ValueError) as exc:
            raise SnapshotError(f"snapshot {tree} is missing or damaged: {exc}") from exc
        return {path: FileEntry(str(blob), bool(ex)) for path, (blob, ex) in manifest.items()}

    def read(self, entry: FileEntry) -> bytes:
        """Return a stored file's bytes, checked against their digest."""
        try:
            return self._checked(entry.blob)
        except OSError as exc:
            raise SnapshotError(f"snapshot object {entry.blob} is missing: {exc}") from exc

    def _checked(self, digest: str) -> bytes:
        """Return an object's bytes if they hash to ``digest`` (a planted object never does)."""
        data = read_regular(self._object(digest))
        if hashlib.sha256(data).hexdigest() != digest:
            raise SnapshotError(
                f"snapshot object {digest} does not match its content; it is not restored"
            )
        return data


def _git_blob_id(data: bytes, id_chars: int) -> str:
    """Return git's id of a blob holding ``data`` (SHA-1, or SHA-256 for 64-character ids)."""
    header = f"blob {len(data)}\0".encode()
    digest = hashlib.sha256 if id_chars == 64 else hashlib.sha1
    return digest(header + data).hexdigest()


def _git_prefix(root: Path) -> str | None:
    """Return the project's place in its git work tree, or None when it is not in one."""
    try:
        done = run_plumbing(root, "rev-parse", "--is-inside-work-tree", "--show-prefix")
    except OSError:  # no git installed
        return None
    lines = done.stdout.decode(errors="replace").splitlines()
    if done.returncode != 0 or not lines or lines[0] != "true":
        return None
    return lines[1] if len(lines) > 1 else ""


def open_trees(root: Path, state: ProjectState) -> TreeStore:
    """Return the snapshot store for a project: git trees in a work tree, copies elsewhere."""
    prefix = _git_prefix(root)
    return CopyTrees(root, state) if prefix is None else GitTrees(root, prefix, state)
