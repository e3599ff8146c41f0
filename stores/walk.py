"""Walk a project's files the way every index and tool sees them (ignore rules, size, binaries)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from stores.paths import is_secret_path, is_skipped_dir

__all__ = ["MAX_FILE_BYTES", "ProjectFile", "WalkReport", "read_text", "walk_project"]

MAX_FILE_BYTES = 1_000_000
"""Files larger than this are skipped (and reported)."""

BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class ProjectFile:
    """A text file of the project that indexes and tools may read."""

    path: str
    """Posix path relative to the project root."""
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass
class WalkReport:
    """Files found and files skipped, with the reason for each skip."""

    files: list[ProjectFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _load_spec(folder: Path, names: tuple[str, ...]) -> pathspec.PathSpec | None:
    lines: list[str] = []
    for name in names:
        try:
            lines += (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    if not lines:
        return None
    return pathspec.PathSpec.from_lines("gitignore", lines)


def _ignored(specs: list[tuple[Path, pathspec.PathSpec]], path: Path, is_dir: bool) -> bool:
    for base, spec in specs:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False


def _is_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        return b"\x00" in handle.read(BINARY_SNIFF_BYTES)


def read_text(path: Path) -> str:
    """Read a file as UTF-8, replacing undecodable bytes instead of failing."""
    return path.read_bytes().decode("utf-8", errors="replace")


def walk_project(root: Path, *, max_bytes: int = MAX_FILE_BYTES) -> WalkReport:
    """List the project's indexable text files, sorted by path.

    Honours ``.gitignore`` files at every level plus ``.engram/ignore``; skips VCS folders,
    virtualenvs, dependency and build folders, secrets files, binaries (NUL bytes), files over
    ``max_bytes``, unreadable files and symlinks leaving the root. Symlink loops are walked once.
    """
    root = root.resolve()
    report = WalkReport()
    for entry in _iter_files(root, report):
        try:
            stat = entry.stat()
            if stat.st_size > max_bytes:
                report.skipped.append((entry.relative_to(root).as_posix(), "too large"))
                continue
            if _is_binary(entry):
                report.skipped.append((entry.relative_to(root).as_posix(), "binary"))
                continue
        except OSError as exc:
            report.skipped.append((entry.relative_to(root).as_posix(), f"unreadable: {exc}"))
            continue
        report.files.append(
            ProjectFile(entry.relative_to(root).as_posix(), entry, stat.st_size, stat.st_mtime_ns)
        )
    report.files.sort(key=lambda f: f.path)
    return report


def _iter_files(root: Path, report: WalkReport) -> Iterator[Path]:
    root_spec = _load_spec(root / ".engram", ("ignore",))
    base_specs: list[tuple[Path, pathspec.PathSpec]] = [(root, root_spec)] if root_spec else []
    seen_dirs: set[tuple[int, int]] = set()
    stack: list[tuple[Path, list[tuple[Path, pathspec.PathSpec]]]] = [(root, base_specs)]
    while stack:
        folder, specs = stack.pop()
        try:
            st = folder.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        local = _load_spec(folder, (".gitignore",))
        if local is not None:
            specs = [*specs, (folder, local)]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            rel = folder.relative_to(root).as_posix() or "."
            report.skipped.append((rel, f"unreadable: {exc}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):
                    continue
                if target != root and root not in target.parents:
                    continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if is_skipped_dir(entry.name) or _ignored(specs, path, True):
                    continue
                stack.append((path, specs))
            elif entry.is_file():
                if is_secret_path(entry.name) or _ignored(specs, path, False):
                    continue
                yield path
