"""Dependency-closure slices: a function plus what is needed to understand it, within a budget.

A slice starts at one function or method and adds, by priority: the bodies of the functions it
calls, the method it overrides, the constants it uses and the declarations (not method bodies)
of the classes it instantiates, raises or names; then the same for the callees, transitively,
to ``max_depth``. Each piece is parse-checked with tree-sitter on its own and dropped if it does
not parse; pieces are added best-first while they fit the token budget.
"""

from __future__ import annotations

import heapq
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engram.stores.files import confine, parse, read_text
from engram.stores.relations._model import RelationIndex
from engram.stores.relations._names import Resolver
from engram.stores.relations._symbols import CLASS_KINDS, references_of

PRIORITY = {"target": 0, "calls": 1, "overrides": 2, "constant": 3, "type": 4}
"""Rank of each reason at the same depth; lower goes in first."""
DEFAULT_MAX_DEPTH = 3
WRAP = {
    "java": ("class _Slice {\n", "\n}"),
    "javascript": ("class _Slice {\n", "\n}"),
    "typescript": ("class _Slice {\n", "\n}"),
    "tsx": ("class _Slice {\n", "\n}"),
}
"""How a method is wrapped so that it parses alone (languages without top-level methods)."""


def estimate_tokens(text: str) -> int:
    """Default token estimate: about four characters per token."""
    return len(text) // 4 + 1


@dataclass(frozen=True)
class SlicePiece:
    """One piece of source in a slice."""

    node: str
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    reason: str
    """target, calls, overrides, constant or type."""
    depth: int
    text: str
    tokens: int


@dataclass(frozen=True)
class Slice:
    """A dependency-closure slice fitted to a budget."""

    target: str
    pieces: tuple[SlicePiece, ...]
    budget: int
    tokens: int
    omitted: tuple[str, ...] = ()
    """Symbols that belonged to the closure but did not fit or did not parse."""


@dataclass
class _Source:
    root: Path
    lines: dict[str, list[str]]

    def text(self, path: str, start: int, end: int) -> str:
        if path not in self.lines:
            try:
                self.lines[path] = read_text(confine(self.root, path)).splitlines()
            except OSError:  # gone, unreadable, or refused by the project policy
                self.lines[path] = []
        return "\n".join(self.lines[path][start - 1 : end])


def slice_symbol(
    relation_index: RelationIndex,
    node: str,
    project: Path,
    *,
    budget: int,
    count_tokens: Callable[[str], int] | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    resolver: Resolver | None = None,
) -> Slice:
    """Build the dependency-closure slice of ``node`` within ``budget`` tokens.

    Raises:
        KeyError: ``node`` is not in the graph.
    """
    count = count_tokens or estimate_tokens
    g = relation_index.graph
    if node not in g:
        raise KeyError(node)
    resolver = resolver or relation_index.resolver()
    source = _Source(project.resolve(), {})
    queue: list[tuple[int, int, int, str, str]] = [(0, 0, 0, node, "target")]
    order = 1
    seen: set[str] = set()
    pieces: list[SlicePiece] = []
    omitted: list[str] = []
    used = 0
    while queue:
        depth, _, _, current, reason = heapq.heappop(queue)
        if current in seen:
            continue
        seen.add(current)
        piece = _piece(relation_index, source, current, reason, depth, count)
        if piece is None or (pieces and used + piece.tokens > budget):
            omitted.append(current)
            continue
        pieces.append(piece)
        used += piece.tokens
        if reason not in ("target", "calls") or depth >= max_depth:
            continue
        for dep, dep_reason in _dependencies(relation_index, resolver, current):
            if dep not in seen:
                heapq.heappush(queue, (depth + 1, PRIORITY[dep_reason], order, dep, dep_reason))
                order += 1
    return Slice(node, tuple(pieces), budget, used, tuple(omitted))


def _dependencies(
    relation_index: RelationIndex, resolver: Resolver, node: str
) -> list[tuple[str, str]]:
    """Return (node, reason) of what ``node``'s body needs, constants as ``path#NAME``."""
    g = relation_index.graph
    out: list[tuple[str, str]] = []
    for _, dst, rel in g.out_edges(node, keys=True):
        if rel == "calls" and dst != node:
            kind = g.nodes[dst]["kind"]
            out.append((dst, "type" if kind in CLASS_KINDS else "calls"))
    owner = resolver.index.owner.get(node)
    name = g.nodes[node]["name"]
    if owner is not None and resolver.index.is_class(owner):
        parents = resolver.index.class_members(owner, name, skip_self=True)
        out += [(p, "overrides") for p in parents[:1]]
    path, _, qualname = node.partition("::")
    facts = relation_index.facts.get(path)
    if facts is None:
        return out
    constants = {c[0]: c for c in facts.constants}
    for ref in references_of(facts):
        if ref.kind != "use" or ref.scope != qualname:
            continue
        word = ref.chain[0]
        if word in constants:
            out.append((f"{path}#{word}", "constant"))
            continue
        found = resolver.resolve(path, qualname, ref.chain)
        if len(found) == 1 and resolver.index.is_class(found[0]) and found[0] != owner:
            out.append((found[0], "type"))
    return out


def _piece(
    relation_index: RelationIndex,
    source: _Source,
    node: str,
    reason: str,
    depth: int,
    count: Callable[[str], int],
) -> SlicePiece | None:
    if "#" in node:
        path, name = node.split("#", 1)
        facts = relation_index.facts[path]
        span = next((c for c in facts.constants if c[0] == name), None)
        if span is None:
            return None
        text = source.text(path, span[1], span[2])
        kind, symbol, start, end, language = "constant", name, span[1], span[2], facts.language
    else:
        attrs = relation_index.graph.nodes[node]
        path, kind, symbol = attrs["path"], attrs["kind"], attrs["qualname"]
        start, end, language = attrs["start_line"], attrs["end_line"], attrs["language"]
        if reason == "type" and kind in CLASS_KINDS:
            end = _declaration_end(relation_index, node, end)
        text = source.text(path, start, end)
        if reason == "type" and end < attrs["end_line"]:
            text += _closing(language, text)
    if not text.strip() or not parses(text, language, kind):
        return None
    return SlicePiece(node, path, start, end, symbol, kind, reason, depth, text, count(text))


def _declaration_end(relation_index: RelationIndex, node: str, end: int) -> int:
    """Last line of a class's declaration part: before its first method."""
    starts = [
        relation_index.graph.nodes[c]["start_line"]
        for _, c, rel in relation_index.graph.out_edges(node, keys=True)
        if rel == "contains"
    ]
    return min(starts) - 1 if starts else end


def _closing(language: str, text: str) -> str:
    if language == "python":
        indent = "    " if not text.splitlines()[-1].startswith(" ") else ""
        return "\n" + (indent or "    ") + "..."
    if language == "go":
        return ""
    return "\n}"


def parses(text: str, language: str, kind: str = "function") -> bool:
    """Return whether a piece of source parses on its own (methods wrapped as needed)."""
    body = textwrap.dedent(text)
    if kind == "method" and language in WRAP:
        head, tail = WRAP[language]
        body = head + body + tail
    return not parse(body.encode("utf-8"), language).root_node.has_error
