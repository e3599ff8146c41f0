"""Turn one parsed source file into language-neutral facts: definitions, imports, references.

Definitions, imports and references are named tuples rather than dataclasses: a large project
has hundreds of thousands of them, and tuples load from the saved graph several times faster.

The per-language walkers (``extract_<lang>.py``) only read the syntax tree; resolving
names across files happens later in ``engram.stores.relations._names``, which sees every
file's facts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

import tree_sitter

DefKind = Literal["class", "interface", "struct", "function", "method"]
RefKind = Literal["call", "new", "use"]
CLASS_KINDS: frozenset[str] = frozenset({"class", "interface", "struct"})


class Definition(NamedTuple):
    """A class-like or function-like definition inside one file."""

    qualname: str
    """Dotted name inside the file (``Outer.method``); Java overloads get ``/arity``."""
    name: str
    kind: DefKind
    start_line: int
    end_line: int
    parent: str = ""
    """Qualname of the enclosing definition; empty for top level."""
    bases: tuple[tuple[str, str], ...] = ()
    """(type expression, "inherits" | "implements") pairs as written."""
    var_types: tuple[tuple[str, str], ...] = ()
    """Declared types: parameters and locals for functions, fields for classes."""
    arity: int = -1
    receiver: str = ""
    """Go methods: the receiver type name (the method's owner may live in another file)."""
    returns: str = ""
    """Declared return type of a function, as written (empty when not declared)."""


class Import(NamedTuple):
    """One imported binding as written in the file."""

    module: str
    """Module spec as written: ``os.path``, ``.models``, ``./x``, ``com.a.Foo``, ``a.com/pkg``."""
    name: str = ""
    """Imported member (``from m import name``); empty when the module itself is bound."""
    alias: str = ""
    """Local name bound by the import; empty means no local binding (side-effect import)."""
    line: int = 0


class Reference(NamedTuple):
    """A use of a name inside a scope: a call, an instantiation or a plain use."""

    scope: str
    """Qualname of the innermost enclosing definition; empty for file level."""
    chain: tuple[str, ...]
    """Dotted access chain, e.g. ``("self", "repo", "find")``."""
    kind: RefKind
    line: int
    arity: int = -1


@dataclass(frozen=True, slots=True)
class FileFacts:
    """Everything the graph needs from one file, independent of every other file."""

    path: str
    language: str
    digest: str
    package: str = ""
    """Java package or Go package name; empty for other languages."""
    definitions: tuple[Definition, ...] = ()
    imports: tuple[Import, ...] = ()
    references: tuple[Reference, ...] = ()
    constants: tuple[tuple[str, int, int], ...] = ()
    """Top-level constants and variables: (name, start_line, end_line)."""
    exports: tuple[tuple[str, str], ...] = ()
    """JS/TS export aliases: (exported name, local name), including ``default``."""
    line_count: int = 0


def references_of(facts: FileFacts) -> Iterator[Reference]:
    """Yield a file's references as ``Reference`` tuples.

    A loaded graph keeps them as plain tuples (pickling named tuples costs a Python call
    each, and a large project has hundreds of thousands); they are named again on use.
    """
    return map(Reference._make, facts.references)


def imports_of(facts: FileFacts) -> Iterator[Import]:
    """Yield a file's imports as ``Import`` tuples (see ``references_of``)."""
    return map(Import._make, facts.imports)


def plain(facts: FileFacts) -> FileFacts:
    """Return ``facts`` with imports and references as plain tuples, for saving."""
    return replace(
        facts,
        imports=tuple(map(tuple, facts.imports)),  # type: ignore[arg-type]
        references=tuple(map(tuple, facts.references)),  # type: ignore[arg-type]
    )


@dataclass
class FactsBuilder:
    """Mutable accumulator the language walkers fill while visiting a tree."""

    source: bytes
    definitions: list[Definition] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    constants: list[tuple[str, int, int]] = field(default_factory=list)
    exports: list[tuple[str, str]] = field(default_factory=list)
    package: str = ""
    _uses: set[tuple[str, str]] = field(default_factory=set)
    _types: dict[str, dict[str, str]] = field(default_factory=dict)

    def add_type(self, qualname: str, name: str, type_expr: str) -> None:
        """Record a local name of definition ``qualname`` with its declared type (maybe empty).

        Untyped names are kept too: a local variable shadows an imported name of the same
        spelling, so resolution must know it exists even without a type.
        """
        if not name:
            return
        types = self._types.setdefault(qualname, {})
        if not types.get(name):
            types[name] = type_expr

    def text(self, node: tree_sitter.Node | None) -> str:
        """Return the source text of ``node`` (empty for None)."""
        return node_text(node, self.source)

    def types_of(self, qualname: str) -> dict[str, str]:
        """Return the declared types recorded so far for definition ``qualname``."""
        return self._types.get(qualname, {})

    def ref(
        self,
        scope: str,
        chain: tuple[str, ...],
        kind: RefKind,
        node: tree_sitter.Node,
        arity: int = -1,
    ) -> None:
        """Record a reference; plain uses are kept once per scope and name."""
        if not chain or not all(chain):
            return
        if kind == "use":
            key = (scope, chain[0])
            if key in self._uses:
                return
            self._uses.add(key)
        self.references.append(Reference(scope, chain, kind, node.start_point[0] + 1, arity))

    def build(self, path: str, language: str, digest: str) -> FileFacts:
        """Freeze the accumulated facts."""
        return FileFacts(
            path=path,
            language=language,
            digest=digest,
            package=self.package,
            definitions=tuple(
                d._replace(var_types=tuple(self._types[d.qualname].items()))
                if d.qualname in self._types
                else d
                for d in self.definitions
            ),
            imports=tuple(self.imports),
            references=tuple(self.references),
            constants=tuple(self.constants),
            exports=tuple(self.exports),
            line_count=self.source.count(b"\n") + 1,
        )


def node_text(node: tree_sitter.Node | None, source: bytes) -> str:
    """Return the UTF-8 text a node spans in ``source``."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


UNKNOWN = "?"
"""Chain head standing for a receiver that static analysis cannot name (a call result, …)."""


CALL_NODES = {"call": "function", "call_expression": "function"}
"""Call node types whose result may be the receiver of a member access."""
NEW_NODES = {"new_expression": "constructor", "object_creation_expression": "type"}
"""Instantiations (JS/TS, Java) whose result may be the receiver of a member access."""


def access_chain(
    node: tree_sitter.Node,
    source: bytes,
    members: dict[str, tuple[str, str]],
    leaves: frozenset[str],
) -> tuple[str, ...]:
    """Flatten a member-access expression into a chain of names.

    Args:
        node: The expression (``a.b.c``, ``this.x``, ``pkg.F``, ``repo.find(1).name``).
        source: File content.
        members: Member-access node types mapped to their (object field, name field).
        leaves: Node types whose text is a chain head (identifiers, ``this``, ``self``).

    Returns:
        The names from head to tail. A name whose call result is accessed further ends in
        ``()`` (``("repo", "find()", "name")``); the head is ``UNKNOWN`` when the receiver is
        not a plain name (an index or literal), and ``super()`` for a Python super call.
    """
    parts: list[str] = []
    current: tree_sitter.Node | None = node
    called = False
    while current is not None:
        suffix = "()" if called else ""
        called = False
        if current.type == "call" and node_text(current, source).startswith("super("):
            parts.append("super()")
            return tuple(reversed(parts))
        spec = members.get(current.type)
        if spec is not None:
            # Java's method_invocation is both the access and the call: below the top it
            # is a call result.
            if current.type == "method_invocation" and current is not node:
                suffix = "()"
            parts.append(node_text(current.child_by_field_name(spec[1]), source) + suffix)
            current = current.child_by_field_name(spec[0])
            continue
        if current.type in CALL_NODES and current is not node:
            called = True
            current = current.child_by_field_name(CALL_NODES[current.type])
            continue
        if current.type in NEW_NODES and current is not node:
            # ``new Foo().bar()``: the receiver is an instance of Foo, like a call of Foo.
            called = True
            current = current.child_by_field_name(NEW_NODES[current.type])
            if current is not None and current.type == "generic_type":
                current = current.named_children[0] if current.named_children else None
            continue
        parts.append(node_text(current, source) + suffix if current.type in leaves else UNKNOWN)
        break
    return tuple(reversed(parts))


def content_digest(source: bytes) -> str:
    """Return the content hash used to detect changed files."""
    return hashlib.blake2b(source, digest_size=16).hexdigest()
