"""Run git for engram's own plumbing: no secrets in its environment, no program it would start.

A repository's configuration can name programs git starts on its own: ``core.fsmonitor``, hooks
under ``core.hooksPath``, and filter drivers (``filter.<name>.clean``/``process``, which
``git add`` runs for files whose attributes name them — a repository that ships its ``.git/``
can plant one). engram's snapshots and status checks turn all of those off (every configured
filter is overridden with an empty command) and pass git the same environment a command gets,
without keys or tokens.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from engram.stores._secrets import without_secrets

PLUMBING_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
"""Settings for every plumbing call: no hook, no file-system monitor program."""
FILTER_KEYS = r"^filter\..*\.(clean|smudge|process)$"
"""The configuration keys of filter drivers (programs ``git add`` would start)."""
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


def filter_overrides(root: Path, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Return ``-c`` settings that empty every filter driver the repository configures.

    Raises:
        OSError: git is not installed.
    """
    done = subprocess.run(
        ["git", *PLUMBING_CONFIG, "config", "--get-regexp", FILTER_KEYS],
        cwd=root,
        capture_output=True,
        env=dict(environ),
        check=False,
    )
    names = set()
    for line in done.stdout.decode(errors="replace").splitlines():
        key = line.split(" ", 1)[0]
        names.add(key[len("filter.") : key.rfind(".")])
    overrides: list[str] = []
    for name in sorted(names):
        for setting in ("clean=", "smudge=", "process=", "required=false"):
            overrides += ["-c", f"filter.{name}.{setting}"]
    return tuple(overrides)


def run_plumbing(
    root: Path,
    *args: str,
    data: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``root`` for engram's own plumbing (hooks, monitor, filters off).

    Args:
        root: The folder git runs in.
        *args: git's arguments.
        data: What git reads on its standard input.
        env: Variables added to the secret-free environment.
        timeout: Seconds git may run before it is killed; None waits.

    Raises:
        OSError: git is not installed.
        subprocess.TimeoutExpired: git ran longer than ``timeout`` (it has been killed).
    """
    environ = git_environment(env)
    return subprocess.run(
        ["git", *PLUMBING_CONFIG, *filter_overrides(root, environ), *args],
        cwd=root,
        input=data,
        capture_output=True,
        env=environ,
        check=False,
        timeout=timeout,
    )
