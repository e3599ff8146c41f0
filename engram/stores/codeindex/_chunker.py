"""Cut source files into retrieval chunks: functions, methods, class heads and file slices.

Code files are parsed with tree-sitter. Each function or method becomes one chunk with its full
source (leading doc comments and decorators included) named ``Class.method(params)``; each class
becomes a "head" chunk (declaration line, docstring, fields, member signatures); module-level
code left over, non-code text files, and definitions whose subtree holds a syntax error become
``file`` chunks split on line boundaries to at most ``MAX_FILE_CHUNK_CHARS``.

Every chunk text is bounded (``chunk_limits``): definitions longer than ``MAX_CHUNK_CHARS`` keep
their head, and minified, generated or very large files become one summary chunk.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

import tree_sitter

from engram.stores.codeindex._chunk_grammar import SPECS, LanguageSpec
from engram.stores.codeindex._chunk_limits import (
    MAX_CHUNK_CHARS,
    SUMMARY_CHARS,
    cap_chunk_text,
    unchunkable_reason,
)
from engram.stores.files import language_of, parse

ChunkKind = Literal["function", "method", "class", "file"]

TreeHook = Callable[[str, str, bytes, tree_sitter.Tree], None]
"""Called with (path, language, source, tree) for each syntax tree the chunker parses, so
another consumer of the tree (the relation index) can use it without parsing the file again;
the tree is not kept after the call."""

MAX_FILE_CHUNK_CHARS = 2000
"""Largest file chunk, in characters (lines are never split unless one line is longer)."""

MAX_HEAD_LINES = 60
"""Lines of a class head kept (declaration, docstring, fields, member signatures)."""

MAX_SIGNATURE_CHARS = 160
MAX_IMPORTS = 40
EMBED_IMPORTS = 8
"""Imports named in a chunk's embedding text; more would drown the chunk's own words."""


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a file."""

    path: str
    """Posix path relative to the project root."""
    language: str
    """tree-sitter language name, or "text" for files that are not parsed."""
    kind: ChunkKind
    symbol: str
    """Qualified name with signature (``Class.method(self, x)``); the file name for files."""
    start_line: int
    """First line, 1-based."""
    end_line: int
    """Last line, inclusive."""
    text: str
    content_hash: str
    """sha256 of ``text``."""
    parent: str = ""
    """Enclosing class (dotted when nested), or empty."""
    imports: tuple[str, ...] = ()
    """Import statements of the file (normalized whitespace)."""

    @property
    def id(self) -> str:
        """Stable id: the same chunk at the same place always gets the same id."""
        key = f"{self.path}\x00{self.start_line}\x00{self.symbol}\x00{self.content_hash}"
        return hashlib.sha1(key.encode("utf-8")).hexdigest()


def embedding_text(chunk: Chunk) -> str:
    """Return the text embedded for ``chunk``: its place (path, class, imports) and source."""
    parts = [f"# {chunk.path}"]
    if chunk.kind != "file":
        owner = f" in class {chunk.parent}" if chunk.parent else ""
        parts.append(f"# {chunk.kind} {chunk.symbol}{owner}")
    if chunk.imports:
        parts.append("# imports: " + "; ".join(chunk.imports[:EMBED_IMPORTS]))
    parts.append(chunk.text)
    return "\n".join(parts)


def chunk_file(path: str, text: str, *, on_tree: TreeHook | None = None) -> list[Chunk]:
    """Split one file's text into chunks.

    Args:
        path: Posix path relative to the project root (decides the language).
        text: The file's content, already decoded.
        on_tree: Given the syntax tree when the file is parsed (code files that are not
            minified, generated or too large).

    Returns:
        Chunks in source order; an empty list for a blank file.
    """
    if not text.strip():
        return []
    language = language_of(path)
    reason = unchunkable_reason(text)
    if reason:
        return [_summary_chunk(path, language or "text", text, reason)]
    lines = text.splitlines()
    spec = SPECS.get(language or "")
    if language is None or spec is None:
        return _file_chunks(path, "text", lines, range(len(lines)), ())
    source = text.encode("utf-8", errors="replace")
    tree = parse(source, language)
    if on_tree is not None:
        on_tree(path, language, source, tree)
    return _CodeChunker(path, language, spec, lines).run(tree.root_node)


def _summary_chunk(path: str, language: str, text: str, reason: str) -> Chunk:
    """Return the one chunk of a file that is not chunked: its name, why, and its start."""
    name = PurePosixPath(path).name
    body = f"{name} ({reason}; not chunked)\n{text[:SUMMARY_CHARS]}"
    return _make(path, language, "file", name, 0, text.count("\n"), body)


def _bounded_join(lines: Iterable[str]) -> str:
    """Join lines with newlines, reading no more of them than ``MAX_CHUNK_CHARS`` needs.

    A line is cut at ``MAX_FILE_CHUNK_CHARS``: a long line shared by several definitions then
    costs each of them a bounded piece, not the whole line.
    """
    parts: list[str] = []
    size = 0
    for line in lines:
        parts.append(line[: min(MAX_FILE_CHUNK_CHARS, MAX_CHUNK_CHARS + 1 - size)])
        size += len(parts[-1]) + 1
        if size > MAX_CHUNK_CHARS:
            break
    return cap_chunk_text("\n".join(parts))


def _make(
    path: str,
    language: str,
    kind: ChunkKind,
    symbol: str,
    start: int,
    end: int,
    text: str,
    parent: str = "",
    imports: tuple[str, ...] = (),
) -> Chunk:
    digest = hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()
    return Chunk(path, language, kind, symbol, start + 1, end + 1, text, digest, parent, imports)


def _file_chunks(
    path: str, language: str, lines: list[str], rows: range | list[int], imports: tuple[str, ...]
) -> list[Chunk]:
    """Pack the given rows into file chunks of at most MAX_FILE_CHUNK_CHARS, in order."""
    name = PurePosixPath(path).name
    chunks: list[Chunk] = []
    buf: list[tuple[int, str]] = []
    size = 0

    def flush() -> None:
        nonlocal buf, size
        kept = [i for i, (_, t) in enumerate(buf) if t.strip()]
        if kept:
            rows = buf[kept[0] : kept[-1] + 1]
            body = "\n".join(t for _, t in rows)
            chunks.append(
                _make(path, language, "file", name, rows[0][0], rows[-1][0], body, "", imports)
            )
        buf, size = [], 0

    for row in rows:
        for piece in _split_long(lines[row]):
            if size + len(piece) + 1 > MAX_FILE_CHUNK_CHARS and buf:
                flush()
            buf.append((row, piece))
            size += len(piece) + 1
    flush()
    return chunks


def _split_long(line: str) -> list[str]:
    if len(line) <= MAX_FILE_CHUNK_CHARS:
        return [line]
    return [line[i : i + MAX_FILE_CHUNK_CHARS] for i in range(0, len(line), MAX_FILE_CHUNK_CHARS)]


def _compact(text: str, limit: int = MAX_SIGNATURE_CHARS) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _CodeChunker:
    """Walk one syntax tree and collect definition chunks plus leftover file chunks."""

    def __init__(self, path: str, language: str, spec: LanguageSpec, lines: list[str]) -> None:
        self.path = path
        self.language = language
        self.spec = spec
        self.lines = lines
        self.chunks: list[Chunk] = []
        self.covered = [False] * len(lines)
        self.imports: tuple[str, ...] = ()

    def run(self, root: tree_sitter.Node) -> list[Chunk]:
        self.imports = self._collect_imports(root)
        stack: list[tuple[tree_sitter.Node, tuple[str, ...]]] = [(root, ())]
        while stack:
            node, owners = stack.pop()
            children = self._visit(node, owners)
            stack.extend(reversed(children))
        leftover = [row for row, done in enumerate(self.covered) if not done]
        self.chunks += _file_chunks(self.path, self.language, self.lines, leftover, self.imports)
        self.chunks.sort(key=lambda c: (c.start_line, c.kind != "class", c.end_line))
        return self.chunks

    def _collect_imports(self, root: tree_sitter.Node) -> tuple[str, ...]:
        found: list[str] = []
        for child in root.named_children:
            if child.type in self.spec.import_types:
                found.append(_compact(_text(child)))
        return tuple(found[:MAX_IMPORTS])

    def _visit(
        self, node: tree_sitter.Node, owners: tuple[str, ...]
    ) -> list[tuple[tree_sitter.Node, tuple[str, ...]]]:
        """Emit chunks for ``node`` and return the children still to visit."""
        definition = self.spec.definition_of(node)
        if definition is None:
            return [(child, owners) for child in node.named_children]
        kind, target = definition
        if node.has_error:
            return []  # left uncovered, so its lines end up in file chunks
        if kind == "class":
            name = self.spec.class_name(target)
            self._emit_class(node, target, name, owners)
            inner = (*owners, name)
            return [(child, inner) for child in self.spec.class_members(target)]
        self._emit_function(node, target, owners)
        return []

    def _span(self, node: tree_sitter.Node) -> tuple[int, int]:
        start = node.start_point.row
        prev = node.prev_named_sibling
        # Doc comments directly above a definition belong to it.
        while prev is not None and prev.type in self.spec.comment_types:
            if prev.end_point.row < start - 1:
                break
            start = prev.start_point.row
            prev = prev.prev_named_sibling
        end = node.end_point.row
        if node.end_point.column == 0 and end > start:
            end -= 1
        return start, min(end, len(self.lines) - 1)

    def _emit_function(
        self, outer: tree_sitter.Node, target: tree_sitter.Node, owners: tuple[str, ...]
    ) -> None:
        start, end = self._span(outer)
        name, params, receiver = self.spec.function_parts(target)
        parent = ".".join(owners) or receiver
        qualified = f"{parent}.{name}" if parent else name
        kind: ChunkKind = "method" if parent else "function"
        if start == end and len(self.lines[start]) > MAX_FILE_CHUNK_CHARS:
            text = cap_chunk_text(_text(outer))  # one of many definitions on a long line
        else:
            text = _bounded_join(self.lines[row] for row in range(start, end + 1))
        symbol = f"{qualified}({_compact(params.strip('()'))})"
        self.chunks.append(
            _make(self.path, self.language, kind, symbol, start, end, text, parent, self.imports)
        )
        self._cover(start, end)

    def _emit_class(
        self,
        outer: tree_sitter.Node,
        target: tree_sitter.Node,
        name: str,
        owners: tuple[str, ...],
    ) -> None:
        start, end = self._span(outer)
        members = self.spec.class_members(target)
        body = self.spec.class_body(target)
        header_end = end if body is None else body.start_point.row
        if members and members[0].start_point.row > target.start_point.row:
            header_end = min(header_end, members[0].start_point.row - 1)
        rows = list(range(start, header_end + 1))
        signatures: list[str] = []
        last_head_row = header_end
        seen_definition = False
        for member in members:
            definition = self.spec.definition_of(member)
            if definition is not None:
                seen_definition = True
                signatures.append("    " + self._signature_line(definition))
                continue
            if seen_definition and member.type in self.spec.comment_types:
                continue
            m_rows = range(member.start_point.row, member.end_point.row + 1)
            rows += [r for r in m_rows if r > rows[-1]] if rows else list(m_rows)
            if not seen_definition:
                last_head_row = max(last_head_row, member.end_point.row)
        head = [self.lines[r] for r in rows] + signatures
        text = _bounded_join(head[:MAX_HEAD_LINES])
        # A class without methods is all head: keep its closing line too.
        head_last = end if not seen_definition else min(max(last_head_row, start), end)
        qualified = ".".join((*owners, name))
        self.chunks.append(
            _make(
                self.path,
                self.language,
                "class",
                qualified,
                start,
                head_last,
                text,
                ".".join(owners),
                self.imports,
            )
        )
        self._cover(start, end)

    def _signature_line(self, definition: tuple[str, tree_sitter.Node]) -> str:
        kind, target = definition
        if kind == "class":
            return f"class {self.spec.class_name(target)}"
        name, params, _ = self.spec.function_parts(target)
        return f"{name}({_compact(params.strip('()'))})"

    def _cover(self, start: int, end: int) -> None:
        for row in range(start, end + 1):
            self.covered[row] = True


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
