"""Golden tests of the tree-sitter chunker, one block per language plus the fallbacks."""

from __future__ import annotations

import hashlib

from engram.stores.codeindex._chunk_limits import (
    MAX_CHUNK_CHARS,
    MAX_CHUNKED_FILE_CHARS,
    SUMMARY_CHARS,
)
from engram.stores.codeindex._chunker import MAX_FILE_CHUNK_CHARS, Chunk, chunk_file, embedding_text


def summary(chunks: list[Chunk]) -> list[tuple[str, str, int, int, str]]:
    return [(c.kind, c.symbol, c.start_line, c.end_line, c.parent) for c in chunks]


PYTHON = '''"""Module doc."""
import os
from typing import Any

LIMIT = 3


@register
class Store(Base, metaclass=Meta):
    """Keeps things."""

    size: int = 0

    def get(self, key: str) -> Any:
        return os.environ.get(key)

    class Entry:
        def touch(self):
            pass


def helper(a, b=2):
    def inner():
        return a

    return inner()
'''


def test_python_golden():
    chunks = chunk_file("pkg/store.py", PYTHON)
    assert summary(chunks) == [
        ("file", "store.py", 1, 5, ""),
        ("class", "Store", 8, 12, ""),
        ("method", "Store.get(self, key: str)", 14, 15, "Store"),
        ("class", "Store.Entry", 17, 17, "Store"),
        ("method", "Store.Entry.touch(self)", 18, 19, "Store.Entry"),
        ("function", "helper(a, b=2)", 22, 26, ""),
    ]
    head = chunks[1].text
    assert head.startswith("@register\nclass Store(Base, metaclass=Meta):")
    assert '"""Keeps things."""' in head and "size: int = 0" in head
    assert "get(self, key: str)" in head and "return os.environ" not in head
    assert chunks[2].text.strip().startswith("def get(self, key: str)")
    assert all(c.imports == ("import os", "from typing import Any") for c in chunks)
    assert all(c.language == "python" for c in chunks)


JAVA = """package demo;
import java.util.List;

/** A repository. */
public class Repo extends Base implements Store {
    private final List<String> items;

    public Repo(List<String> items) { this.items = items; }

    public int count(String prefix, int limit) {
        return items.size();
    }

    enum Mode { FAST, SLOW; boolean quick() { return this == FAST; } }
}
"""


def test_java_golden():
    chunks = chunk_file("src/Repo.java", JAVA)
    assert summary(chunks) == [
        ("file", "Repo.java", 1, 2, ""),
        ("class", "Repo", 4, 6, ""),
        ("method", "Repo.Repo(List<String> items)", 8, 8, "Repo"),
        ("method", "Repo.count(String prefix, int limit)", 10, 12, "Repo"),
        ("class", "Repo.Mode", 14, 14, "Repo"),
        ("method", "Repo.Mode.quick()", 14, 14, "Repo.Mode"),
    ]
    assert chunks[1].text.startswith("/** A repository. */")
    assert chunks[0].imports == ("import java.util.List;",)


JAVASCRIPT = """import { join } from "path";

// Loads settings.
export class Loader extends Base {
  constructor(root) { super(); this.root = root; }
  load(name) { return join(this.root, name); }
}

export const parse = (text) => JSON.parse(text);

function* ids() { yield 1; }
"""


def test_javascript_golden():
    chunks = chunk_file("lib/loader.js", JAVASCRIPT)
    assert summary(chunks) == [
        ("file", "loader.js", 1, 1, ""),
        ("class", "Loader", 3, 4, ""),
        ("method", "Loader.constructor(root)", 5, 5, "Loader"),
        ("method", "Loader.load(name)", 6, 6, "Loader"),
        ("function", "parse(text)", 9, 9, ""),
        ("function", "ids()", 11, 11, ""),
    ]


TYPESCRIPT = """import type { Item } from "./item";

export interface Store {
  get(id: string): Item;
}

export abstract class Cache implements Store {
  private size = 0;
  get(id: string): Item { return this.items[id]; }
  clear = (): void => { this.size = 0; };
}

export function build(n: number): Cache { return new Memory(n); }
"""


def test_typescript_golden():
    chunks = chunk_file("src/cache.ts", TYPESCRIPT)
    assert summary(chunks) == [
        ("file", "cache.ts", 1, 1, ""),
        ("class", "Store", 3, 5, ""),
        ("class", "Cache", 7, 8, ""),
        ("method", "Cache.get(id: string)", 9, 9, "Cache"),
        ("method", "Cache.clear()", 10, 10, "Cache"),
        ("function", "build(n: number)", 13, 13, ""),
    ]
    assert chunks[0].language == "typescript"


def test_tsx_component():
    source = """export function Button(props: Props) {
  return <button onClick={props.onClick}>{props.label}</button>;
}
"""
    chunks = chunk_file("ui/Button.tsx", source)
    assert summary(chunks) == [("function", "Button(props: Props)", 1, 3, "")]
    assert chunks[0].language == "tsx"


GO = """package server

import "net/http"

// Server answers requests.
type Server struct {
	addr string
}

type Handler interface { Serve() }

func (s *Server) Handle(w http.ResponseWriter, r *http.Request) error {
	return nil
}

func New(addr string) *Server { return &Server{addr: addr} }
"""


def test_go_golden():
    chunks = chunk_file("server/server.go", GO)
    assert summary(chunks) == [
        ("file", "server.go", 1, 3, ""),
        ("class", "Server", 5, 8, ""),
        ("class", "Handler", 10, 10, ""),
        ("method", "Server.Handle(w http.ResponseWriter, r *http.Request)", 12, 14, "Server"),
        ("function", "New(addr string)", 16, 16, ""),
    ]


def test_syntax_error_falls_back_to_file_chunks_for_the_broken_part():
    source = "def ok():\n    return 1\n\n\ndef broken(:\n    return 2\n"
    chunks = chunk_file("pkg/bad.py", source)
    assert chunks[0].kind == "function" and chunks[0].symbol == "ok()"
    rest = chunks[1:]
    assert rest and all(c.kind == "file" for c in rest)
    assert any("def broken(:" in c.text for c in rest)


def test_text_file_is_split_on_lines_within_the_limit():
    lines = [f"line {i} " + "x" * 90 for i in range(100)]
    chunks = chunk_file("docs/guide.md", "\n".join(lines))
    assert len(chunks) > 1
    assert all(c.kind == "file" and c.language == "text" for c in chunks)
    assert all(len(c.text) <= MAX_FILE_CHUNK_CHARS for c in chunks)
    assert "\n".join(c.text for c in chunks) == "\n".join(lines)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 100
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.start_line == before.end_line + 1


def test_single_very_long_line_is_cut():
    prose = "a line of ordinary notes\n" * 400
    chunks = chunk_file("data/blob.txt", prose + "y" * (MAX_FILE_CHUNK_CHARS * 2 + 10))
    assert [len(c.text) for c in chunks if c.text.startswith("y")] == [
        MAX_FILE_CHUNK_CHARS,
        MAX_FILE_CHUNK_CHARS,
        10,
    ]


def _minified_js(chars: int) -> str:
    parts, size, i = [], 0, 0
    while size < chars:
        parts.append(f"function f{i}(a,b){{return a+b*{i}}}")
        size += len(parts[-1]) + 1
        i += 1
    return ";".join(parts)


def test_a_minified_file_is_summarised_as_one_small_chunk():
    text = _minified_js(200_000)
    chunks = chunk_file("dist/bundle.min.js", text)
    assert len(chunks) == 1
    only = chunks[0]
    assert only.kind == "file" and only.symbol == "bundle.min.js"
    assert "minified or generated" in only.text and len(only.text) <= SUMMARY_CHARS + 200
    assert only.text.splitlines()[1].startswith("function f0(a,b)")


def test_a_file_over_the_size_cap_is_summarised():
    text = "x = 1\n" * (MAX_CHUNKED_FILE_CHARS // 6 + 10)
    chunks = chunk_file("gen/table.py", text)
    assert len(chunks) == 1 and "large file" in chunks[0].text


def test_chunk_texts_are_bounded_whatever_the_definitions():
    body = "\n".join(f"    total += {i}" for i in range(MAX_CHUNK_CHARS // 10))
    text = f"def huge():\n    total = 0\n{body}\n    return total\n"
    chunks = chunk_file("pkg/huge.py", text)
    assert chunks[0].symbol == "huge()" and chunks[0].text.startswith("def huge():")
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    # Many small functions on a few long lines (dense, below the minified share): each chunk
    # is bounded, so the total stays linear in the file, not in file x definitions.
    dense = "\n".join(_minified_js(3_000) for _ in range(3)) + "\n" + "// note\n" * 2_000
    chunks = chunk_file("lib/dense.js", dense)
    assert len(chunks) > 100
    assert sum(len(c.text) for c in chunks) <= 2 * len(dense)


def test_blank_file_has_no_chunks():
    assert chunk_file("empty.py", "\n\n  \n") == []


def test_hash_and_id_are_stable_and_positional():
    a = chunk_file("a.py", "def f():\n    return 1\n")[0]
    b = chunk_file("b.py", "def f():\n    return 1\n")[0]
    assert a.content_hash == hashlib.sha256(a.text.encode()).hexdigest() == b.content_hash
    assert a.id == chunk_file("a.py", "def f():\n    return 1\n")[0].id
    assert a.id != b.id


def test_embedding_text_carries_path_parent_and_imports():
    method = chunk_file("pkg/store.py", PYTHON)[2]
    text = embedding_text(method)
    assert text.startswith("# pkg/store.py\n# method Store.get(self, key: str) in class Store")
    assert "# imports: import os; from typing import Any" in text
    assert text.endswith(method.text)
