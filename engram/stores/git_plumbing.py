"""Run git for engram's own plumbing: no secrets in its environment, no hook or monitor started.

A repository's configuration can name programs git starts on its own (``core.fsmonitor``,
hooks under ``core.hooksPath``); engram's snapshots and status checks turn those off and pass
git the same environment a command gets, without keys or tokens.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from engram.stores.secrets import without_secrets

__all__ = ["PLUMBING_CONFIG", "git_environment", "run_plumbing"]

PLUMBING_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
"""Settings for every plumbing call: no hook, no file-system monitor program."""
QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
}


def git_environment(
    extra: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Return the environment engram runs git with: no secrets, no prompts, plus ``extra``."""
    return {
        **without_secrets(os.environ if environ is None else environ),
        **QUIET_ENV,
        **(extra or {}),
    }


def run_plumbing(
    root: Path, *args: str, data: bytes | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``root`` for engram's own plumbing (hooks and monitor off).

    Raises:
        OSError: git is not installed.
    """
    return subprocess.run(
        ["git", *PLUMBING_CONFIG, *args],
        cwd=root,
        input=data,
        capture_output=True,
        env=git_environment(env),
        check=False,
    )
