"""Shared fixtures: one fixed environment for every test, whatever the shell that started pytest.

The suite must pass the same on a developer's terminal, in CI, under cron or with output piped
to a file. Every test therefore runs with this environment, set here and nowhere else:

| variable | value | why |
| --- | --- | --- |
| ``COLUMNS`` / ``LINES`` | ``120`` / ``40`` | Rich sizes tables from them when there is no terminal |
| ``NO_COLOR``, ``TERM`` | ``1``, ``dumb`` | no escape codes in captured output |
| ``LANG``, ``LC_ALL`` | ``C.UTF-8`` | the same encoding and collation everywhere |
| ``TZ`` | ``UTC`` | dates printed and parsed the same in every time zone |
| ``ENGRAM_HOME`` | a fresh folder per test | no test sees another's stores |
| ``HOME`` | a fresh folder per test | a run setting left at ``~/.engram`` never reaches the user's home |
| ``GIT_CONFIG_GLOBAL`` | the user's ``~/.gitconfig`` (when there is one) | git keeps its identity with ``HOME`` moved |
| other ``ENGRAM_*``, ``OPENAI_*``, ``LANGSMITH_*`` | removed | no stray model, endpoint or tracing settings |
| ``HF_HUB_OFFLINE`` etc. | ``1`` | never reach for the network |
| ``ENGRAM_SERVE`` | ``off`` | no command starts a warm server (its tests start their own) |
| ``ENGRAM_AUTO_INDEX`` | ``off`` | no command indexes a project on its own (its tests turn it on) |

Standard input is ``/dev/null`` for the whole session, so a subprocess that would wait for an
answer sees end-of-file at once instead of inheriting the caller's terminal.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

FIXED_ENV = {
    "COLUMNS": "120",
    "LINES": "40",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "LANGSMITH_TRACING": "false",
    "PYTHONIOENCODING": "utf-8",
    "ENGRAM_SERVE": "off",
    "ENGRAM_AUTO_INDEX": "off",
}
CLEARED_PREFIXES = ("ENGRAM_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_")
CLEARED_NAMES = ("FORCE_COLOR", "CLICOLOR_FORCE", "PYTHONSTARTUP")


def _apply_fixed_env(delete, assign) -> None:
    """Remove the cleared variables and set FIXED_ENV through ``delete`` and ``assign``."""
    for name in list(os.environ):
        if name.startswith(CLEARED_PREFIXES) or name in CLEARED_NAMES:
            delete(name)
    for name, value in FIXED_ENV.items():
        assign(name, value)
    time.tzset()


def pytest_configure(config):
    """Apply the fixed environment before collection, so that what modules build at import
    time (Rich consoles read ``COLUMNS`` when they are created) sees it too."""
    _apply_fixed_env(os.environ.__delitem__, os.environ.__setitem__)


@pytest.fixture(scope="session", autouse=True)
def closed_stdin():
    """Point file descriptor 0 at /dev/null so no subprocess can wait on a terminal."""
    saved = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    yield
    os.dup2(saved, 0)
    os.close(saved)


@pytest.fixture(autouse=True)
def engram_home(tmp_path_factory, monkeypatch):
    """Give the test the fixed environment above and its own ENGRAM_HOME."""
    _apply_fixed_env(monkeypatch.delenv, monkeypatch.setenv)
    home = tmp_path_factory.mktemp("engram_home")
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    gitconfig = Path.home() / ".gitconfig"
    if "GIT_CONFIG_GLOBAL" not in os.environ and gitconfig.is_file():
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    yield home
    monkeypatch.undo()
    time.tzset()
