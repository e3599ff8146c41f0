"""Resolve each file's names against the project and emit its graph edges.

Only static information is used: imports and aliases, same-module and same-package
definitions, ``self``/``this``/``super``, declared types of parameters, locals and fields, and
class lineage. A reference that does not resolve to exactly one project definition is kept as
a named unresolved reference; no edge is ever guessed.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass

from engram.stores.relations._go_interfaces import go_implementations, go_method_sets
from engram.stores.relations._symbol_tables import JS_LANGUAGES, ProjectIndex, Target, node_id
from engram.stores.relations._symbols import (
    CLASS_KINDS,
    UNKNOWN,
    Definition,
    Import,
    imports_of,
    references_of,
)

Edge = tuple[str, str, str]
SELF_NAMES = frozenset({"self", "this"})
SUPER_NAMES = frozenset({"super", "super()"})
MAX_NESTING = 24
"""Nested resolutions (types of types, return types) before giving up; stops cycles such as
a return type named like a local whose value is a call of the same function."""


@dataclass(frozen=True, slots=True)
class FileEdges:
    """The edges whose source lies in one file, and the references left unresolved."""

    edges: tuple[Edge, ...]
    """(source node, target node, relation)."""
    unresolved: tuple[Edge, ...]
    """(source node, referenced name as written, relation)."""


class Resolver:
    """Resolves names of any file against a ``ProjectIndex``."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self._bindings: dict[str, dict[str, list[Import]]] = {}
        self._unresolved_bases: dict[str, list[tuple[str, str]]] = {}
        self._nesting = 0
        self._resolve_bases()

    # -- public ------------------------------------------------------------------------

    def file_edges(self, path: str) -> FileEdges:
        """Return every edge that starts in ``path`` and its unresolved references."""
        index = self.index
        facts = index.facts[path]
        edges: set[Edge] = set()
        unresolved: set[Edge] = set()
        for d in facts.definitions:
            nid = node_id(path, d.qualname)
            parent = index.owner.get(nid) or path
            edges.add((parent, nid, "contains"))
            for base, relation in index.bases.get(nid, []):
                edges.add((nid, base, relation))
            for name, relation in self._unresolved_bases.get(nid, []):
                unresolved.add((nid, name, relation))
        edges |= {
            (s, i, "implements") for s, i in go_implementations(index, self._go_methods, path)
        }
        for imp in imports_of(facts):
            target = index.import_target(path, imp)
            files = self._import_files(path, imp, target) if target else []
            edges |= {(path, f, "imports") for f in files if f != path}
            if not files:
                unresolved.add((path, imp.module, "imports"))
        for ref in references_of(facts):
            if ref.kind == "use":
                continue
            source = node_id(path, ref.scope) if ref.scope else path
            found = self.resolve(path, ref.scope, ref.chain, ref.arity)
            targets = [t for t in found if t in index.defs]
            if ref.kind == "new":
                targets = [self._constructed_class(t) for t in targets]
            if len(targets) == 1:
                edges.add((source, targets[0], "calls"))
            else:
                name = ".".join(p for p in ref.chain if p != UNKNOWN)
                unresolved.add((source, name, "calls"))
        return FileEdges(tuple(sorted(edges)), tuple(sorted(unresolved)))

    def resolve(self, path: str, scope: str, chain: tuple[str, ...], arity: int = -1) -> list[str]:
        """Return the node ids a reference chain may denote (one when unambiguous)."""
        if self._nesting >= MAX_NESTING:
            return []
        self._nesting += 1
        try:
            return self._resolve(path, scope, chain, arity)
        finally:
            self._nesting -= 1

    def _resolve(self, path: str, scope: str, chain: tuple[str, ...], arity: int) -> list[str]:
        called = chain[0].endswith("()") and chain[0] not in SUPER_NAMES
        targets = self._head(path, scope, chain[0].removesuffix("()") if called else chain[0])
        if called:
            targets = self._returned(targets)
        for name in chain[1:]:
            if len(targets) != 1:
                return []
            targets = self._member(targets[0], name.removesuffix("()"), 0)
            if name.endswith("()"):
                targets = self._returned(targets)
        ids = list(dict.fromkeys(v for tag, v in targets if tag == "sym"))
        if len(ids) > 1 and arity >= 0:
            ids = [i for i in ids if self.index.defs[i][1].arity == arity] or ids
        return ids

    # -- heads and members -------------------------------------------------------------

    def _head(self, path: str, scope: str, name: str) -> list[Target]:
        index = self.index
        language = index.facts[path].language
        if name == UNKNOWN:
            return []
        if name in SELF_NAMES or name in SUPER_NAMES:
            cls = self._enclosing_class(path, scope)
            if cls is None:
                return []
            return [("super" if name in SUPER_NAMES else "sym", cls)]
        for d in self._scope_chain(path, scope):
            if d.kind in CLASS_KINDS:
                if language == "java":
                    found = self._class_name(node_id(path, d.qualname), name)
                    if found:
                        return found
                continue
            declared = dict(d.var_types).get(name)
            if declared is not None:
                return self._type(path, d.parent, declared)
        return self._global(path, name, 0)

    def _class_name(self, cls: str, name: str) -> list[Target]:
        """Java: a bare name inside a class is a member, a nested class or a field."""
        members = self.index.class_members(cls, name)
        if members:
            return [("sym", m) for m in members]
        field = self.index.field_type(cls, name)
        if field is not None:
            owner_path, owner = self.index.defs[field[0]]
            return self._type(owner_path, owner.parent, field[1])
        return []

    def _type(self, path: str, scope: str, declared: str) -> list[Target]:
        """Resolve a declared type expression to a class (an instance of it)."""
        declared = _non_optional(declared)
        if not declared:
            return []
        chain = tuple(declared.split("."))
        ids = self.resolve(path, scope, chain)
        return self._returned([("sym", ids[0])]) if len(ids) == 1 else []

    def _returned(self, targets: list[Target], depth: int = 0) -> list[Target]:
        """Map callables to the class they return (a class maps to itself: a constructor)."""
        if not targets or any(tag != "sym" for tag, _ in targets) or depth > 3:
            return []
        nid = targets[0][1]
        if len(targets) == 1 and self.index.is_class(nid):
            return targets
        entry = self.index.defs.get(nid)
        if entry is None or not entry[1].returns:
            return []
        # Overloads with one declared return type still name one class.
        if any(
            self.index.defs.get(t, ("", entry[1]))[1].returns != entry[1].returns
            for _, t in targets
        ):
            return []
        path, d = entry
        found = self.resolve(path, d.qualname, tuple(d.returns.split(".")))
        if len(found) != 1 or not self.index.is_class(found[0]):
            return []
        return [("sym", found[0])]

    def _global(self, path: str, name: str, hops: int) -> list[Target]:
        """Resolve a name at file level: definitions, imports, then the file's package."""
        index = self.index
        if hops > 8:
            return []
        local = index.top.get(path, {}).get(name)
        if local is not None:
            return [("sym", local)]
        bindings = self._bindings_of(path)
        for imp in reversed(bindings.get(name, [])):
            found = self._binding(path, imp, hops)
            if found:
                return found
        facts = index.facts[path]
        if facts.language == "java":
            cls = index.java_classes.get(f"{facts.package}.{name}" if facts.package else name)
            if cls is not None:
                return [("sym", cls)]
        if facts.language == "go":
            for other in index.go_dirs.get(posixpath.dirname(path), []):
                found_id = index.top.get(other, {}).get(name)
                if found_id is not None:
                    return [("sym", found_id)]
        for imp in bindings.get("*", []):
            target = index.import_target(path, imp)
            found = self._member(target, name, hops + 1) if target else []
            if found:
                return found
        return []

    def _binding(self, path: str, imp: Import, hops: int) -> list[Target]:
        index = self.index
        language = index.facts[path].language
        target = index.import_target(path, imp)
        if language == "python" and not imp.name and imp.alias != imp.module.split(".")[-1]:
            # ``import a.b.c`` binds ``a``; ``import a.b as x`` binds the module itself.
            if "." in imp.module and imp.alias == imp.module.split(".")[0]:
                found = index.python_module(path, imp.alias)
                target = ("file", found) if found else None
        if target is None:
            return []
        if not imp.name:
            return [target]
        return self._member(target, imp.name, hops + 1)

    def _member(self, target: Target, name: str, hops: int) -> list[Target]:
        index = self.index
        tag, value = target
        if hops > 8:
            return []
        if tag in ("sym", "super"):
            if not index.is_class(value):
                return []
            found = index.class_members(value, name, skip_self=tag == "super")
            if found:
                return [("sym", m) for m in found]
            field = index.field_type(value, name)
            if field is None:
                return []
            owner_path, owner = index.defs[field[0]]
            return self._type(owner_path, owner.parent, field[1])
        if tag == "pkg":
            cls = index.java_classes.get(f"{value}.{name}")
            return [("sym", cls)] if cls else []
        if tag == "dir":
            for path in index.go_dirs.get(value, []):
                found_id = index.top.get(path, {}).get(name)
                if found_id is not None:
                    return [("sym", found_id)]
            return []
        return self._module_member(value, name, hops)

    def _module_member(self, path: str, name: str, hops: int) -> list[Target]:
        facts = self.index.facts[path]
        if facts.language == "python":
            sub = self.index.python_submodule(path, name)
            if sub is not None and name not in self.index.top.get(path, {}):
                return [("file", sub)]
        elif facts.language in JS_LANGUAGES:
            exported = dict(facts.exports).get(name)
            if exported is not None and exported != name:
                return self._global(path, exported, hops + 1)
        return self._global(path, name, hops + 1)

    # -- helpers -----------------------------------------------------------------------

    def _bindings_of(self, path: str) -> dict[str, list[Import]]:
        cached = self._bindings.get(path)
        if cached is None:
            cached = defaultdict(list)
            for imp in imports_of(self.index.facts[path]):
                key = "*" if imp.name == "*" else imp.alias
                if key:
                    cached[key].append(imp)
            self._bindings[path] = cached
        return cached

    def _scope_chain(self, path: str, scope: str) -> list[Definition]:
        chain: list[Definition] = []
        while scope:
            entry = self.index.defs.get(node_id(path, scope))
            if entry is None:
                break
            chain.append(entry[1])
            scope = entry[1].parent
        return chain

    def _enclosing_class(self, path: str, scope: str) -> str | None:
        for d in self._scope_chain(path, scope):
            nid = node_id(path, d.qualname)
            if d.kind in CLASS_KINDS:
                return nid
            owner = self.index.owner.get(nid)
            if d.receiver and owner is not None:
                return owner
        return None

    def _constructed_class(self, nid: str) -> str:
        """Map a constructor to its class: ``new Foo()`` instantiates the class."""
        owner = self.index.owner.get(nid)
        if owner is not None and not self.index.is_class(nid) and self.index.is_class(owner):
            if self.index.defs[nid][1].name == self.index.defs[owner][1].name:
                return owner
        return nid

    def _import_files(self, path: str, imp: Import, target: Target) -> list[str]:
        index = self.index
        if index.facts[path].language == "java" and imp.name != "*":
            cls = index.java_classes.get(f"{imp.module}.{imp.name}")
            return index.files_of(("sym", cls) if cls else target)
        if index.facts[path].language == "python" and imp.name and imp.name != "*":
            sub = index.python_submodule(target[1], imp.name)
            if sub is not None and imp.name not in index.top.get(target[1], {}):
                return [sub]
        return index.files_of(target)

    def _resolve_bases(self) -> None:
        index = self.index
        for nid, (path, d) in index.defs.items():
            for expr, relation in d.bases:
                found = self._type(path, d.parent, expr)
                if found and found[0][1] != nid:
                    index.bases.setdefault(nid, []).append((found[0][1], relation))
                else:
                    self._unresolved_bases.setdefault(nid, []).append((expr, relation))
        self._go_methods = go_method_sets(index)


OPTIONAL = re.compile(r"^(?:typing\.)?Optional\[(.+)\]$")


def _non_optional(declared: str) -> str:
    """Reduce ``X | None``, ``None | X`` and ``Optional[X]`` to ``X``; other unions to ""."""
    declared = declared.strip().strip("'\"")
    match = OPTIONAL.match(declared)
    if match:
        declared = match.group(1)
    if "|" not in declared:
        return declared
    parts = [
        p.strip() for p in declared.split("|") if p.strip() not in ("None", "null", "undefined")
    ]
    return parts[0] if len(parts) == 1 else ""
