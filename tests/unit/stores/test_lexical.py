"""Identifier-aware tokenizing and the bm25s index wrapper."""

from __future__ import annotations

from engram.stores.codeindex import LexicalIndex, code_tokens
from engram.stores.codeindex._bm25 import query_tokens


def test_tokenize_splits_snake_and_camel_and_keeps_whole_identifiers():
    assert code_tokens("parseHTTPResponse_v2") == [
        "parsehttpresponse_v2",
        "parse",
        "http",
        "response",
        "v",
        "2",
    ]
    assert code_tokens("get_user_name") == ["get_user_name", "get", "user", "name"]
    assert code_tokens("The path of the file") == ["path", "file"]


def test_query_tokens_are_unique():
    assert query_tokens("fix fix the parser parser") == ["fix", "parser"]


def test_bm25_ranks_matching_documents(tmp_path):
    ids = ["a", "b", "c"]
    docs = [
        code_tokens("def parse_url(url): split scheme"),
        code_tokens("class Cookie jar"),
        code_tokens("render template html"),
    ]
    index = LexicalIndex.build(ids, docs)
    top = index.top(query_tokens("how are urls parsed? parse_url"), 3)
    assert [i for i, _ in top] == ["a"]
    index.save(tmp_path / "bm25", generation=7)
    loaded, generation = LexicalIndex.load(tmp_path / "bm25")
    assert generation == 7
    assert [i for i, _ in loaded.top(["cookie"], 3)] == ["b"]
    assert loaded.top(["nothing"], 3) == []


def test_empty_index_and_missing_folder(tmp_path):
    assert LexicalIndex.build([], []).top(["x"], 5) == []
    assert LexicalIndex.load(tmp_path / "absent") is None
