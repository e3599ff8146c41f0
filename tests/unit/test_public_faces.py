"""Each package has one curated, typed public face; everything else is private.

Modelled on httpx's exported-members test: a package's ``__all__`` is exactly what it offers,
each name has one import path, and the names mypy sees (the ``TYPE_CHECKING`` imports) are the
names the lazy face hands out at run time.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engram"
PUBLIC_MODULES = {"engram/builder.py"}
"""The one public module outside a face: the LangGraph assembly, ``engram.builder.build_graph``."""
STORES_TOP_LIMIT = 12
"""Most modules at the top of ``engram/stores/``; the rest live in capability sub-packages."""


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


INITS = sorted(p for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)
PACKAGES = [_dotted(p) for p in INITS]
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _face(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Return a face's ``TYPE_CHECKING`` imports and its lazy table, each as name -> module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    lazy: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
                typed.update({alias.name: stmt.module for alias in stmt.names})
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_face":
            where = ast.literal_eval(node.args[1])
            lazy.update({name: module for module, names in where.items() for name in names})
    return typed, lazy


@pytest.mark.parametrize("package", PACKAGES)
def test_each_face_is_curated_and_typed(package):
    """``__all__`` is sorted and unique; mypy's names are the run-time names; each resolves."""
    path = ROOT / package.replace(".", "/") / "__init__.py"
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), package
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert exported == sorted(set(exported)), f"{package}.__all__ is not sorted and unique"
    typed, lazy = _face(path)
    assert typed == lazy, f"{package}: TYPE_CHECKING imports and the lazy table differ"
    plain = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    } - {"annotations", "TYPE_CHECKING", "lazy_face"}
    assert plain <= set(exported) | set(lazy), f"{package} offers names outside __all__"
    assert set(lazy) <= set(exported), f"{package}: a lazy name is missing from __all__"
    assert set(exported) <= set(lazy) | set(vars(module)), f"{package}: __all__ names nothing"
    for name in exported:
        value = getattr(module, name)
        source = lazy.get(name, package)
        assert source == package or source.startswith(f"{package}._"), (
            f"{package}.{name} comes from {source}: a name is exported where it is defined"
        )
        if inspect.isfunction(value) or inspect.isclass(value):
            assert value.__module__ in (source, package), f"{package}.{name}"
        assert name in dir(module)


def test_one_import_path_to_each_public_name():
    """No name is in two faces (``engram.api`` does not re-export ``Context``)."""
    faces: dict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for name in importlib.import_module(package).__all__:
            faces[name].append(package)
    twice = {name: where for name, where in faces.items() if len(where) > 1}
    assert not twice, twice


def test_no_public_name_is_defined_twice():
    """A face's name is defined once in the whole package, not again in another module."""
    defined: dict[str, list[str]] = defaultdict(list)
    for path in SOURCES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined[node.name].append(_dotted(path))
    public = {name for p in PACKAGES for name in importlib.import_module(p).__all__}
    twice = {name: defined[name] for name in public if len(defined[name]) > 1}
    assert not twice, twice


def test_implementation_modules_are_private():
    """Every module but a package's ``__init__`` and the builder is ``_name.py``, with no ``__all__``."""
    public, with_all = [], []
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" or rel in PUBLIC_MODULES:
            continue
        if not path.name.startswith("_"):
            public.append(rel)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(getattr(target, "id", None) == "__all__" for target in targets):
                with_all.append(rel)
    assert not public, f"public implementation modules: {public}"
    assert not with_all, f"private modules with __all__ (the face is the package): {with_all}"


def test_module_names_do_not_repeat_their_folder():
    """``memory/_store.py``, not ``memory/_memory_store.py``."""
    repeats = []
    for path in SOURCES:
        folder = path.parent.name
        stem = path.stem.lstrip("_")
        if stem.startswith(f"{folder}_") or stem.startswith(f"{folder.rstrip('s')}_"):
            repeats.append(path.relative_to(ROOT).as_posix())
    assert not repeats, repeats


def test_stores_keeps_a_short_top():
    """``engram/stores/`` groups its modules by capability; at most a dozen sit at its top."""
    top = [p.name for p in (PACKAGE / "stores").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= STORES_TOP_LIMIT, sorted(top)
