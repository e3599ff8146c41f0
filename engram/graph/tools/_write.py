"""The model's file-changing tools: edit_file, write_file and apply_patch, confined and atomic."""

from __future__ import annotations

import contextlib
import logging
import re
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from engram.graph._context import Context
from engram.graph._errors import ToolError
from engram.graph.tools._file_reading import confined_path
from engram.graph.tools._text_edits import FileChange, render_diff, replace_exact
from engram.graph.tools._unified_diff import FilePatch, apply_file_patch, parse_patch
from engram.graph.tools._write_journal import (
    begin_write,
    finish_write,
    roll_back_interrupted,
)
from engram.stores.files import (
    BINARY_SNIFF_BYTES,
    MAX_FILE_BYTES,
    FileTimeoutError,
    UnsafeFileError,
    read_regular,
    within_time_limit,
    write_atomically,
)
from engram.stores.project import ProjectState

EDIT_TOOL_NAMES = ("edit_file", "write_file", "apply_patch")
MAX_WRITE_CHARS = MAX_FILE_BYTES
"""Largest content a write may produce (files past it are not indexed either)."""
RESULT_DIFF_CHARS = 4_000
"""Characters of the applied diff echoed back to the model."""
SCRATCH_FOLDER = "tmp"
"""Inside the project's state folder (under ENGRAM_HOME): write journals and temp files, out
of the project's sight even when a ``kill -9`` mid-write leaves one behind."""
STALE_TEMP_S = 60
"""Age past which a temp file in the scratch folder is a killed writer's leftover."""
_TEMP_NAME = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp")
"""What ``write_atomically`` names its temp files (``.<name>.<random>.tmp``)."""

log = logging.getLogger(__name__)

Changed = tuple[str, list[str]]
"""A write tool's result: the report for the model, and the paths changed (the artifact)."""


class PlannedFiles:
    """Reads project files for writing, seeing the changes already planned in this batch."""

    def __init__(self, root: Path) -> None:
        """Bind to a resolved project root."""
        self.root = root
        self.pending: dict[Path, str | None] = {}

    def target(self, path: str) -> tuple[Path, str]:
        """Return the resolved target and its project-relative path, for writing.

        Raises:
            PathOutsideProjectError: The path escapes the project, is a secrets file, or lies
                in a protected folder (``.git/``, ``.engram/``, … at any depth).
            ToolError: The path names a folder.
        """
        target = confined_path(self.root, path)  # no ``allowed``: nothing in .engram/
        relative = target.relative_to(self.root)
        if not relative.parts:
            raise ToolError(f"{path!r} is the project folder, not a file")
        if target.is_dir():
            raise ToolError(f"{path} is a folder, not a file")
        return target, relative.as_posix()

    def read(self, target: Path, path: str) -> str | None:
        """Return the file's current (or planned) text, or None when it does not exist.

        Raises:
            ToolError: The file is binary or not UTF-8 (editing it as text would corrupt it).
        """
        if target in self.pending:
            return self.pending[target]

        def read() -> bytes | None:
            # never blocks on a FIFO, never reads a hard-linked file through another name
            return read_regular(target) if target.exists() else None

        try:
            data = within_time_limit(f"reading {path}", read)
        except UnsafeFileError as exc:
            raise ToolError(f"refused: {exc}") from None
        except FileTimeoutError as exc:
            raise ToolError(f"{exc.strerror}; nothing was written") from None
        if data is None:
            return None
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise ToolError(f"{path} is a binary file; it cannot be edited as text")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not UTF-8 text; editing it could corrupt it") from None

    def change(self, path: str, after: Callable[[str | None, str], str | None]) -> FileChange:
        """Plan a change of ``path`` computed from its current text; remember it for the batch."""
        target, relative = self.target(path)
        before = self.read(target, relative)
        new = after(before, relative)
        if new is not None and len(new) > MAX_WRITE_CHARS:
            raise ToolError(
                f"the new {relative} would be {len(new):,} characters; the limit "
                f"is {MAX_WRITE_CHARS:,}"
            )
        self.pending[target] = new
        return FileChange(relative, target, before, new)


def _edit(old: str, new: str, replace_all: bool) -> Callable[[str | None, str], str]:
    def after(before: str | None, path: str) -> str:
        if before is None:
            raise ToolError(f"no such file: {path}", hint="use write_file to create a file")
        return replace_exact(before, old, new, replace_all=replace_all, path=path)[0]

    return after


def plan_edit(files: PlannedFiles, tool: str, args: Mapping[str, Any]) -> list[FileChange]:
    """Return the file changes a write tool call would make, without making them.

    Raises:
        ToolError: The call cannot be carried out (the message says why).
    """
    if tool == "edit_file":
        return [
            files.change(
                str(args["path"]),
                _edit(
                    str(args["old_string"]), str(args["new_string"]), bool(args.get("replace_all"))
                ),
            )
        ]
    if tool == "write_file":
        content = str(args["content"])
        return [files.change(str(args["path"]), lambda before, path: content)]
    if tool == "apply_patch":
        return [c for patch in parse_patch(str(args["patch"])) for c in _plan_patch(files, patch)]
    raise ToolError(f"{tool} does not change files")


def _plan_patch(files: PlannedFiles, patch: FilePatch) -> list[FileChange]:
    source = patch.old_path or patch.new_path or ""
    if patch.new_path is None or patch.old_path in (None, patch.new_path):
        return [
            files.change(source, lambda before, path: apply_file_patch(before, patch, path=path))
        ]
    moved = files.change(source, lambda before, path: None)  # a rename
    return [
        moved,
        files.change(
            patch.new_path, lambda before, path: apply_file_patch(moved.before, patch, path=path)
        ),
    ]


def write_changes(root: Path, state: ProjectState, changes: list[FileChange]) -> None:
    """Write every change atomically; if one fails, put back the files already written.

    Raises:
        OSError: A write failed (the files are as they were before the call).
    """
    scratch = _scratch_folder(root, state)
    journal = begin_write(scratch, changes)
    done: list[FileChange] = []
    try:
        for change in changes:
            _put(change.target, change.after, scratch)
            done.append(change)
    except FileTimeoutError:
        # The hung write may still land: the journal stays, so the next write puts the
        # files back as they were (all or nothing).
        raise
    except OSError:
        for change in reversed(done):
            _put(change.target, change.before, scratch)
        finish_write(journal)
        raise
    finish_write(journal)


def roll_back_interrupted_writes(root: Path, state: ProjectState) -> list[str]:
    """Put back the files of writes a killed process left half done; return their paths.

    The journals are engram's own, in the state folder under ENGRAM_HOME (a repository cannot
    plant one), and a file is put back only where a write tool may write now.

    Raises:
        OSError: A file could not be put back (the next write tries again).
    """
    scratch = state.path(SCRATCH_FOLDER)
    if not scratch.is_dir() or scratch.is_symlink():
        return []

    def restore(path: str, before: str | None, mode: int | None) -> None:
        try:
            target, _ = PlannedFiles(root).target(path)
        except ToolError:  # a refused path (outside, secret, protected) or a folder
            return  # not a file a write tool could have written
        _put(target, before, scratch, mode=mode)

    restored = roll_back_interrupted(scratch, restore)
    if restored:
        log.warning(
            "engram: a write over several files was killed half done; put back as they were: %s",
            ", ".join(dict.fromkeys(restored)),
        )
    return restored


def _scratch_folder(root: Path, state: ProjectState) -> Path | None:
    """Return the project's folder for temp files, cleared of killed writers' leftovers.

    None when it cannot be made (a read-only ENGRAM_HOME): temp files then go beside the
    files they replace. Only engram's own temp files (by name, regular files) that a killed
    writer left are removed, and only from this private folder.
    """
    try:
        folder = state.make(SCRATCH_FOLDER)
        roll_back_interrupted_writes(root, state)
        leftovers = [p for p in folder.iterdir() if _TEMP_NAME.fullmatch(p.name)]
    except OSError:
        return None
    now = time.time()
    for leftover in leftovers:
        try:
            info = leftover.lstat()
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_TEMP_S:
                leftover.unlink()
        except OSError:
            continue  # another session removed it first
    return folder


def _put(target: Path, text: str | None, scratch: Path | None, *, mode: int | None = None) -> None:
    """Write (or, for None, delete) one file, within the file-operation time limit."""
    within_time_limit(f"writing {target.name}", lambda: _put_now(target, text, scratch, mode=mode))


def _put_now(target: Path, text: str | None, scratch: Path | None, *, mode: int | None) -> None:
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    # a rename is atomic only within one file system (a folder may be a mount point)
    same_device = scratch is not None and scratch.stat().st_dev == target.parent.stat().st_dev
    # a new file gets the permissions any other program would give it (not the temp file's 0600)
    if mode is None and not target.exists():
        mode = 0o666 & ~_umask()
    write_atomically(
        target, text.encode("utf-8"), mode=mode, temp_dir=scratch if same_device else None
    )


def _umask() -> int:
    """Return the process umask without setting it (setting it races other threads)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _report(verb: str, changes: list[FileChange]) -> str:
    names = ", ".join(dict.fromkeys(c.path for c in changes))
    diff = render_diff(changes)
    if len(diff) > RESULT_DIFF_CHARS:
        diff = diff[:RESULT_DIFF_CHARS] + f"\n[… diff cut at {RESULT_DIFF_CHARS:,} characters]"
    return f"{verb} {names}\n{diff}".rstrip()


class EditFileArgs(BaseModel):
    """Arguments of ``edit_file``."""

    path: str = Field(description="File path relative to the project root.")
    old_string: str = Field(
        description="Exact text to replace, including indentation; it "
        "must occur once unless replace_all is true."
    )
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class WriteFileArgs(BaseModel):
    """Arguments of ``write_file``."""

    path: str = Field(description="File path relative to the project root.")
    content: str = Field(description="The whole new content of the file.")


class ApplyPatchArgs(BaseModel):
    """Arguments of ``apply_patch``."""

    patch: str = Field(
        description="A unified diff ('--- a/PATH', '+++ b/PATH', @@ hunks); "
        "/dev/null creates or deletes a file. All hunks apply or none."
    )


def build_write_tools(context: Context) -> list[BaseTool]:
    """Return the file-changing tools bound to the run's project root.

    Invoked with a tool call, each returns a ``ToolMessage`` whose artifact lists the paths it
    changed; invoked with plain arguments, the report alone.
    """
    root = context.project_path
    state = context.state
    with contextlib.suppress(OSError):  # a session killed mid-patch left files half patched
        roll_back_interrupted_writes(root, state)

    def run(tool: str, args: dict[str, Any], verb: str) -> Changed:
        changes = plan_edit(PlannedFiles(root), tool, args)
        write_changes(root, state, changes)
        return _report(verb, changes), list(dict.fromkeys(c.path for c in changes))

    def edit_file(
        path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> Changed:
        return run(
            "edit_file",
            {
                "path": path,
                "old_string": old_string,
                "new_string": new_string,
                "replace_all": replace_all,
            },
            "edited",
        )

    def write_file(path: str, content: str) -> Changed:
        return run("write_file", {"path": path, "content": content}, "wrote")

    def apply_patch(patch: str) -> Changed:
        return run("apply_patch", {"patch": patch}, "patched")

    specs: list[tuple[Callable[..., Changed], type[BaseModel], str]] = [
        (
            edit_file,
            EditFileArgs,
            "Replace an exact passage of a project file (read it first). Fails, naming the nearest "
            "lines, when old_string is missing or matches more than once.",
        ),
        (write_file, WriteFileArgs, "Create a file, or replace all of an existing file."),
        (
            apply_patch,
            ApplyPatchArgs,
            "Apply a unified diff to one or more files; nothing changes if any hunk fails.",
        ),
    ]
    return [
        StructuredTool.from_function(
            func=f,
            name=f.__name__,
            description=d,
            args_schema=a,
            response_format="content_and_artifact",
        )
        for f, a, d in specs
    ]
