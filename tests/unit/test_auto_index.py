"""``ENGRAM_AUTO_INDEX``: the most files a project may have to be indexed on first use."""

from __future__ import annotations

import pytest

from engram.graph import ConfigError
from engram.graph.retrieval import AUTO_INDEX_FILES, auto_index_limit


@pytest.mark.parametrize(
    ("raw", "limit"),
    [
        ("", AUTO_INDEX_FILES),
        ("on", AUTO_INDEX_FILES),
        ("off", 0),
        ("OFF", 0),
        ("no", 0),
        ("0", 0),
        ("20000", 20_000),
        ("20,000", 20_000),
        ("20_000", 20_000),
        (" 300 ", 300),
    ],
)
def test_the_limit_reads_off_and_numbers(monkeypatch, raw: str, limit: int):
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", raw)
    assert auto_index_limit() == limit


def test_unset_is_the_default(monkeypatch):
    monkeypatch.delenv("ENGRAM_AUTO_INDEX", raising=False)
    assert auto_index_limit() == AUTO_INDEX_FILES


@pytest.mark.parametrize("raw", ["lots", "-5", "1e4"])
def test_anything_else_is_a_config_error_with_an_example(monkeypatch, raw: str):
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", raw)
    with pytest.raises(ConfigError) as caught:
        auto_index_limit()
    assert "ENGRAM_AUTO_INDEX=20000" in caught.value.hint
