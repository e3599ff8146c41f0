"""Walk a project's files the way every index and tool sees them (ignore rules, size, binaries)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engram.stores.files._paths import (
    allowed_target,
    display_path,
    is_secret_path,
    is_skipped_dir,
    open_regular,
    read_regular,
    unprintable_name,
)

if TYPE_CHECKING:
    from engram.stores.files._ignore_rules import IgnoreRules

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
    stopped: bool = False
    """The walk stopped at its ``stop_after`` files: there are more."""


def _load_spec(folder: Path, names: tuple[str, ...]) -> IgnoreRules | None:
    from engram.stores.files._ignore_rules import MAX_IGNORE_FILE_BYTES, IgnoreRules

    lines: list[str] = []
    cut = False
    for name in names:
        if os.path.islink(folder / name):
            continue  # as git (2.32 on): a linked ignore file is not followed
        try:
            data = read_regular(folder / name, MAX_IGNORE_FILE_BYTES + 1)
        except OSError:
            continue
        if len(data) > MAX_IGNORE_FILE_BYTES:  # cut: the last line may be a piece of a rule
            data = data[: data.rfind(b"\n", 0, MAX_IGNORE_FILE_BYTES) + 1]
            cut = True
        lines += data.decode("utf-8", errors="replace").splitlines()
    if not lines:
        return None
    spec = IgnoreRules.from_lines(lines)
    spec.truncated = spec.truncated or cut
    return spec


def _ignored(specs: list[tuple[str, IgnoreRules]], path: str, is_dir: bool) -> bool:
    """Match ``path`` against specs keyed by their folder (with a trailing separator)."""
    for base, spec in specs:
        rel = path[len(base) :]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if spec.match_file(rel + "/" if is_dir else rel):
            return True
    return False


def _is_binary(path: str) -> bool:
    with open_regular(Path(path)) as handle:
        return b"\x00" in handle.read(BINARY_SNIFF_BYTES)


def read_text(path: Path) -> str:
    """Read a regular file as UTF-8, replacing undecodable bytes instead of failing.

    Raises:
        OSError: The file cannot be read, or is not a plain regular file
            (:class:`~engram.stores.files._paths.UnsafeFileError`).
    """
    return read_regular(path).decode("utf-8", errors="replace")


def walk_project(
    root: Path,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    known: Mapping[str, tuple[int, int]] | None = None,
    stop_after: int | None = None,
) -> WalkReport:
    """List the project's indexable text files, sorted by path.

    Honours ``.gitignore`` files at every level plus ``.engram/ignore``; skips VCS folders,
    virtualenvs, dependency and build folders, secrets files, names with control characters
    (a line break, a terminal escape, a bidi control: reported escaped), binaries (NUL
    bytes), files over ``max_bytes``, unreadable files, non-regular files (FIFOs, sockets,
    devices), hard-linked files and symlinks that leave the root or point at anything the policy of
    :mod:`engram.stores.files._paths` refuses. Symlink loops are walked once.

    Args:
        root: Project root.
        max_bytes: Size above which a file is skipped as too large.
        known: Files already known to be text, as posix path -> (size, mtime_ns) (e.g. an
            index manifest); a file whose size and mtime still match is not read again to
            check for binary content.
        stop_after: Stop once this many files are found and one more is met (``stopped``):
            enough to tell that a project is larger than that, at the cost of that many.
    """
    root = root.resolve()
    report = WalkReport()
    known = known or {}
    prefix = len(os.path.join(root, ""))
    for abs_path in _iter_files(root, report):
        rel = abs_path[prefix:] if os.sep == "/" else abs_path[prefix:].replace(os.sep, "/")
        try:
            stat = os.stat(abs_path)
            if stat.st_nlink > 1:
                report.skipped.append((rel, "hard link (another name may be outside the project)"))
                continue
            if stat.st_size > max_bytes:
                report.skipped.append((rel, f"too large: over {max_bytes:,} bytes"))
                continue
            if known.get(rel) != (stat.st_size, stat.st_mtime_ns) and _is_binary(abs_path):
                report.skipped.append((rel, "binary"))
                continue
        except OSError as exc:
            report.skipped.append((rel, f"unreadable: {exc}"))
            continue
        if stop_after is not None and len(report.files) >= stop_after:
            report.stopped = True
            break
        report.files.append(ProjectFile(rel, Path(abs_path), stat.st_size, stat.st_mtime_ns))
    report.files.sort(key=lambda f: f.path)
    return report


def _iter_files(root: Path, report: WalkReport) -> Iterator[str]:
    """Yield the absolute paths (``os.sep`` joined under ``root``) of candidate files."""
    root_str = str(root)
    root_spec = _load_spec(root / ".engram", ("ignore",))
    base_specs: list[tuple[str, IgnoreRules]] = []
    if root_spec is not None:
        base_specs.append((os.path.join(root_str, ""), root_spec))
    seen_dirs: set[tuple[int, int]] = set()
    prefix = len(os.path.join(root_str, ""))
    stack: list[tuple[str, list[tuple[str, IgnoreRules]]]] = [(root_str, base_specs)]
    while stack:
        folder, specs = stack.pop()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        local = _load_spec(Path(folder), (".gitignore",))
        if local is not None:
            specs = [*specs, (os.path.join(folder, ""), local)]
            if local.truncated:
                from engram.stores.files._ignore_rules import TRUNCATED

                shown = display_path(os.path.join(folder, ".gitignore")[prefix:])
                report.skipped.append((shown, TRUNCATED))
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            rel = Path(folder).relative_to(root).as_posix() or "."
            report.skipped.append((rel, f"unreadable: {exc}"))
            continue
        for entry in entries:
            path = entry.path
            if unprintable_name(entry.name):
                shown = display_path(path[prefix:].replace(os.sep, "/"))
                report.skipped.append((shown, "name with control characters"))
                continue
            if entry.is_symlink() and not allowed_target(root, path):
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
                if is_secret_path(path[prefix:]) or _ignored(specs, path, False):
                    continue
                yield path
