"""Unit tests start no process and no server: a test that needs one is marked integration."""

from __future__ import annotations

import subprocess

import pytest


class _NoSubprocess(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, *args, **kwargs):
        raise AssertionError(
            "a unit test started a subprocess; mark it @pytest.mark.integration "
            f"or move it to tests/integration ({args[0] if args else kwargs.get('args')!r})"
        )


@pytest.fixture(autouse=True)
def no_subprocess(request, monkeypatch):
    """Fail a unit test that starts a subprocess unless it is marked integration."""
    if request.node.get_closest_marker("integration") is None:
        monkeypatch.setattr(subprocess, "Popen", _NoSubprocess)
