"""Files in the project: access policy, walk, atomic writes, derived files, git plumbing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.files._atomic import FileTimeoutError, within_time_limit, write_atomically
    from engram.stores.files._derived import SETTLED_NS, FileDerived
    from engram.stores.files._git import (
        PLUMBING_CONFIG,
        filter_overrides,
        git_environment,
        run_plumbing,
    )
    from engram.stores.files._languages import language_of, parse
    from engram.stores.files._paths import (
        PROTECTED_DIRS,
        SECRET_NAME_PATTERNS,
        SECRET_PATH_PATTERNS,
        SKIP_DIRS,
        TERMINAL_UNSAFE,
        PathEscapeError,
        UnsafeFileError,
        confine,
        display_path,
        escape_controls,
        inert_json,
        is_protected_dir,
        is_protected_or_secret,
        is_skipped_dir,
        listable,
        open_regular,
        read_regular,
        relative_posix,
    )
    from engram.stores.files._spill import (
        find_spill_path,
        session_spill_folder,
        spill_if_large,
        spilled_folder,
    )
    from engram.stores.files._walk import (
        BINARY_SNIFF_BYTES,
        MAX_FILE_BYTES,
        ProjectFile,
        WalkReport,
        read_text,
        walk_project,
    )

__all__ = [
    "BINARY_SNIFF_BYTES",
    "FileDerived",
    "FileTimeoutError",
    "MAX_FILE_BYTES",
    "PLUMBING_CONFIG",
    "PROTECTED_DIRS",
    "PathEscapeError",
    "ProjectFile",
    "SECRET_NAME_PATTERNS",
    "SECRET_PATH_PATTERNS",
    "SETTLED_NS",
    "SKIP_DIRS",
    "TERMINAL_UNSAFE",
    "UnsafeFileError",
    "WalkReport",
    "confine",
    "display_path",
    "escape_controls",
    "filter_overrides",
    "find_spill_path",
    "git_environment",
    "inert_json",
    "is_protected_dir",
    "is_protected_or_secret",
    "is_skipped_dir",
    "language_of",
    "listable",
    "open_regular",
    "parse",
    "read_regular",
    "read_text",
    "relative_posix",
    "run_plumbing",
    "session_spill_folder",
    "spill_if_large",
    "spilled_folder",
    "walk_project",
    "within_time_limit",
    "write_atomically",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.files._atomic": (
            "FileTimeoutError",
            "within_time_limit",
            "write_atomically",
        ),
        "engram.stores.files._derived": ("FileDerived", "SETTLED_NS"),
        "engram.stores.files._git": (
            "PLUMBING_CONFIG",
            "filter_overrides",
            "git_environment",
            "run_plumbing",
        ),
        "engram.stores.files._languages": ("language_of", "parse"),
        "engram.stores.files._paths": (
            "PROTECTED_DIRS",
            "PathEscapeError",
            "SECRET_NAME_PATTERNS",
            "SECRET_PATH_PATTERNS",
            "SKIP_DIRS",
            "UnsafeFileError",
            "confine",
            "TERMINAL_UNSAFE",
            "display_path",
            "escape_controls",
            "inert_json",
            "is_protected_dir",
            "is_protected_or_secret",
            "is_skipped_dir",
            "listable",
            "open_regular",
            "read_regular",
            "relative_posix",
        ),
        "engram.stores.files._spill": (
            "find_spill_path",
            "session_spill_folder",
            "spill_if_large",
            "spilled_folder",
        ),
        "engram.stores.files._walk": (
            "BINARY_SNIFF_BYTES",
            "MAX_FILE_BYTES",
            "ProjectFile",
            "WalkReport",
            "read_text",
            "walk_project",
        ),
    },
)
