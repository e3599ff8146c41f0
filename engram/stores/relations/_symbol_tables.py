"""Project-wide lookup tables over every file's facts: symbols, modules, packages, members.

Name resolution (``engram.stores.relations._names``) asks these tables questions such as
"which file is
module ``click.core``", "what does ``Repo`` mean in ``svc/user.go``" or "which methods named
``find`` does class ``UserRepo`` have, counting its bases". A target is a tagged pair:
``("sym", node_id)``, ``("file", path)`` for a Python or JS module, ``("pkg", name)`` for a Java
package and ``("dir", folder)`` for a Go package.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from engram.stores.relations._symbols import CLASS_KINDS, Definition, FileFacts, Import

Target = tuple[str, str]
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
MAX_HOPS = 8
"""Re-export chains followed before giving up (guards against import cycles)."""


def node_id(path: str, qualname: str) -> str:
    """Return the graph node id of a definition (a file's id is its path)."""
    return f"{path}::{qualname}"


@dataclass
class ProjectIndex:
    """Lookup tables built from all files' facts."""

    facts: Mapping[str, FileFacts]
    defs: dict[str, tuple[str, Definition]] = field(default_factory=dict)
    top: dict[str, dict[str, str]] = field(default_factory=dict)
    members: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)
    bases: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    py_modules: dict[str, list[str]] = field(default_factory=dict)
    java_classes: dict[str, str] = field(default_factory=dict)
    java_packages: dict[str, list[str]] = field(default_factory=dict)
    go_dirs: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, facts: Mapping[str, FileFacts]) -> ProjectIndex:
        """Index every file's definitions and module names."""
        index = cls(facts)
        py_modules: dict[str, list[str]] = defaultdict(list)
        for path, ff in facts.items():
            top = index.top.setdefault(path, {})
            for d in ff.definitions:
                nid = node_id(path, d.qualname)
                index.defs[nid] = (path, d)
                if not d.parent and not d.receiver:
                    top.setdefault(d.name, nid)
                elif d.parent:
                    index._add_member(node_id(path, d.parent), d.name, nid)
            if ff.language == "python":
                for name in _python_module_names(path):
                    py_modules[name].append(path)
            elif ff.language == "java":
                index.java_packages.setdefault(ff.package, []).append(path)
                for d in ff.definitions:
                    if d.kind in CLASS_KINDS:
                        prefix = f"{ff.package}." if ff.package else ""
                        index.java_classes[prefix + d.qualname] = node_id(path, d.qualname)
            elif ff.language == "go":
                index.go_dirs.setdefault(posixpath.dirname(path), []).append(path)
        index.py_modules = dict(py_modules)
        index._attach_go_methods()
        return index

    def _add_member(self, owner: str, name: str, nid: str) -> None:
        self.members.setdefault(owner, {}).setdefault(name, []).append(nid)
        self.owner[nid] = owner

    def _attach_go_methods(self) -> None:
        for nid, (path, d) in list(self.defs.items()):
            if not d.receiver:
                continue
            for other in self.go_dirs.get(posixpath.dirname(path), []):
                struct = self.top.get(other, {}).get(d.receiver)
                if struct is not None:
                    self._add_member(struct, d.name, nid)
                    break

    # -- modules -----------------------------------------------------------------------

    def python_module(self, path: str, spec: str) -> str | None:
        """Return the file of Python module ``spec`` as imported from ``path``."""
        if spec.startswith("."):
            dots = len(spec) - len(spec.lstrip("."))
            base = posixpath.dirname(path)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = spec[dots:].replace(".", "/")
            return self._python_file(posixpath.join(base, rest) if rest else base)
        candidates = self.py_modules.get(spec, [])
        if len(candidates) == 1:
            return candidates[0]
        exact = [c for c in candidates if _python_module_names(c)[0] == spec]
        return exact[0] if len(exact) == 1 else None

    def _python_file(self, stem: str) -> str | None:
        stem = stem.strip("/")
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
            if candidate in self.facts:
                return candidate
        return None

    def python_submodule(self, path: str, name: str) -> str | None:
        """Return the file of submodule ``name`` of the package whose file is ``path``."""
        if not path.endswith("/__init__.py") and path != "__init__.py":
            return None
        return self._python_file(posixpath.join(posixpath.dirname(path), name))

    def js_module(self, path: str, spec: str) -> str | None:
        """Return the file a relative JS/TS import ``spec`` points at, if inside the project."""
        if not spec.startswith("."):
            return None
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        # TypeScript sources import their compiled names: "./x.js" means x.ts, "./x.mjs" x.mts.
        suffix = posixpath.splitext(stem)[1]
        bare = stem[: -len(suffix)] if suffix in (".js", ".mjs", ".cjs", ".jsx") else stem
        candidates = [stem, *(bare + s for s in JS_SUFFIXES)]
        candidates += [f"{stem}/index{s}" for s in JS_SUFFIXES]
        return next((c for c in candidates if c in self.facts), None)

    def go_package(self, spec: str) -> str | None:
        """Return the project folder an import path names (longest unique suffix match)."""
        best: list[str] = []
        best_len = -1
        for folder in self.go_dirs:
            if folder and (spec == folder or spec.endswith("/" + folder)):
                if len(folder) > best_len:
                    best, best_len = [folder], len(folder)
                elif len(folder) == best_len:
                    best.append(folder)
        return best[0] if len(best) == 1 else None

    def import_target(self, path: str, imp: Import) -> Target | None:
        """Return what the module part of an import statement names."""
        language = self.facts[path].language
        if language == "python":
            found = self.python_module(path, imp.module)
            return ("file", found) if found else None
        if language in JS_LANGUAGES:
            found = self.js_module(path, imp.module)
            return ("file", found) if found else None
        if language == "java":
            if imp.module in self.java_packages:
                return ("pkg", imp.module)
            cls = self.java_classes.get(imp.module)
            return ("sym", cls) if cls else None
        if language == "go":
            folder = self.go_package(imp.module)
            return ("dir", folder) if folder else None
        return None

    def files_of(self, target: Target) -> list[str]:
        """Return the files a module-like target stands for."""
        tag, value = target
        if tag == "file":
            return [value]
        if tag == "pkg":
            return list(self.java_packages.get(value, []))
        if tag == "dir":
            return list(self.go_dirs.get(value, []))
        if tag == "sym" and value in self.defs:
            return [self.defs[value][0]]
        return []

    # -- classes -----------------------------------------------------------------------

    def is_class(self, nid: str) -> bool:
        """Return whether ``nid`` is a class, interface or struct."""
        entry = self.defs.get(nid)
        return entry is not None and entry[1].kind in CLASS_KINDS

    def lineage(self, cls: str) -> list[str]:
        """Return ``cls`` followed by its resolved ancestors, nearest first, without repeats."""
        out: list[str] = []
        queue = [cls]
        while queue:
            current = queue.pop(0)
            if current in out:
                continue
            out.append(current)
            queue += [b for b, _ in self.bases.get(current, [])]
        return out

    def class_members(self, cls: str, name: str, *, skip_self: bool = False) -> list[str]:
        """Return members named ``name`` of the nearest class in ``cls``'s lineage having any."""
        for current in self.lineage(cls)[1 if skip_self else 0 :]:
            found = self.members.get(current, {}).get(name)
            if found:
                return found
        return []

    def field_type(self, cls: str, name: str) -> tuple[str, str] | None:
        """Return (class node id, declared type) of field ``name`` in ``cls``'s lineage."""
        for current in self.lineage(cls):
            entry = self.defs.get(current)
            if entry is None:
                continue
            declared = dict(entry[1].var_types).get(name)
            if declared is not None:
                return current, declared
            # Go: an embedded field is named after its type (``u.PlainWriter.Write()``).
            for base, _ in entry[1].bases:
                if self.facts[entry[0]].language == "go" and base.rsplit(".", 1)[-1] == name:
                    return current, base
        return None


def _python_module_names(path: str) -> list[str]:
    """Return the dotted names a Python file may be imported as, longest first."""
    stem = path[: -len(posixpath.splitext(path)[1])]
    if stem.endswith("/__init__") or stem == "__init__":
        stem = posixpath.dirname(stem)
    parts = [p for p in stem.split("/") if p]
    return [".".join(parts[i:]) for i in range(len(parts))]
