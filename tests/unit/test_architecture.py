"""The import arrows point one way: stores <- graph core <- nodes <- sessions <- the shell.

A floor is a folder of the one ``engram`` package; the shell is ``builder.py``, ``cli/`` and
``api/``. Every module is parsed with ``ast`` (nothing is imported), so a forbidden import fails
here before anyone runs the code. See README "Architecture".
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engram"
# Floors, lowest first: a module may import its own floor or a lower one.
FLOORS = {
    "top": 0,
    "stores": 1,
    "graph": 2,
    "nodes": 3,
    "sessions": 4,
    "builder": 5,
    "cli": 5,
    "api": 5,
}
"""``top`` is the package's own ``__init__`` and helpers (the version, the lazy faces)."""
TOP_LEVEL = ("graph", "nodes", "stores", "studio", "cli", "api", "sessions", "builder")
"""Names a bare import would take from the repository root instead of the package."""


def floor_of(module: str) -> str:
    """Name the floor of an ``engram.…`` module: the package folder it lives in."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] not in FLOORS:
        return "top"
    return parts[1]


def module_name(path: Path) -> str:
    """Dotted ``engram.…`` name of a source file."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every engram module, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_package_is_real_folders():
    """No symlink anywhere in the package: every file has one name."""
    links = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*") if p.is_symlink()]
    assert not links, links


def test_every_floor_is_a_folder_or_the_builder():
    """Each floor named above exists, and nothing else sits beside them but the top helpers."""
    for floor in FLOORS:
        if floor == "top":
            continue
        assert (PACKAGE / floor).is_dir() or (PACKAGE / f"{floor}.py").is_file(), floor
    extra = [
        p.name
        for p in PACKAGE.iterdir()
        if p.name != "__pycache__"
        and p.stem not in FLOORS
        and not p.name.startswith("_")
        and p.name != "py.typed"
    ]
    assert not extra, f"engram/ holds {extra}: put it in a floor"


MODULES = all_modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@functools.cache
def face_table(package: str) -> dict[str, str]:
    """Map each public name of a package's face to the private module that defines it."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_face":
            where = ast.literal_eval(node.args[1])
            return {name: module for module, names in where.items() for name in names}
    return {}


def imports_of(path: Path, *, include_type_checking: bool) -> set[str]:
    """Return the engram modules ``path`` imports anywhere (module level or in functions).

    A name taken from a package's lazy face counts as an import of the module that defines it,
    so a circle through a face is still a circle.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not include_type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _is_type_checking(node):
                skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            table = face_table(node.module)
            names += [table[alias.name] for alias in node.names if alias.name in table]
        for name in names:
            if name.split(".")[0] in TOP_LEVEL:
                found.add(name)  # a bare top-level name: reported by its own test
            elif name in MODULES:
                found.add(name)
    return found


def test_nothing_imports_the_bare_top_level_names():
    """Everything imports as ``engram.…``: a bare ``graph.…`` would load a file twice."""
    offenders = []
    sources = [
        *MODULES.values(),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").rglob("*.py"),
        *(ROOT / "studio").rglob("*.py"),
        *(ROOT / "examples").rglob("*.py"),
    ]
    for path in sources:
        for name in imports_of(path, include_type_checking=True):
            if name.split(".")[0] in TOP_LEVEL:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_arrows_point_down_only():
    """No module imports a higher floor (nodes never import the CLI or the builder)."""
    offenders = []
    for module, path in MODULES.items():
        mine = FLOORS[floor_of(module)]
        for target in imports_of(path, include_type_checking=True):
            if target in MODULES and FLOORS[floor_of(target)] > mine:
                offenders.append(f"{module} ({floor_of(module)}) -> {target} ({floor_of(target)})")
    assert not offenders, "\n".join(offenders)


def test_no_import_circles():
    """No cycle among engram modules, counting imports inside functions too."""
    edges = {
        module: {
            t for t in imports_of(path, include_type_checking=False) if t in MODULES and t != module
        }
        for module, path in MODULES.items()
    }
    # importing a submodule runs its package's __init__ first
    for module in MODULES:
        parent = module.rsplit(".", 1)[0]
        # (a package that imports its own submodule runs first, so that edge alone is no circle)
        if parent in MODULES and parent != module and module not in edges[parent]:
            edges[module].add(parent)
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target) :] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)
