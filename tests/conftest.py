"""Shared fixtures: every test gets its own ENGRAM_HOME and no stray model settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def engram_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("engram_home")
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    for name in ("ENGRAM_MODEL", "ENGRAM_BASE_URL", "OPENAI_BASE_URL", "ENGRAM_PROJECT",
                 "ENGRAM_CHROMA_URL", "ENGRAM_DATABASE_URL", "ENGRAM_CONTEXT_WINDOW"):
        monkeypatch.delenv(name, raising=False)
    return home
