"""Propagate from the files the text ranks put first to the project files they import.

A bug reported against a high-level entry point is often fixed in a module it imports: the
text matches the caller, the change lands in the callee. One step along Python import edges
from the seeds (the leading files of the text and identifier lists, weighted by rank) gives
each imported project file a score in [0, 1] and the reason "imported by X". Only the seeds'
own text is read (a few files, each cut to ``MAX_IMPORT_BYTES``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from engram.stores.codeindex._history_evidence import seed_weights

MAX_IMPORT_BYTES = 200_000
"""Bytes of a seed file read for its imports (imports sit at the top)."""
TOP_FOLDERS = frozenset({"src", "lib"})
"""Folders whose children are imported by their bare names (``src/`` layouts)."""
_FROM = re.compile(
    r"^[ \t]*from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]+(\([^)]*\)|[^#\n]*)", re.M
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)", re.M)
_NAME = re.compile(r"[A-Za-z_]\w*")


def import_features(
    root: Path,
    paths: Sequence[str],
    *,
    text_ranks: Mapping[str, Sequence[str]],
    modules: Mapping[str, str] | None = None,
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """Score the project files the seeds import; return scores and reasons per file.

    ``modules`` is ``module_table(paths)`` when the caller keeps one (it costs a pass over
    every path: about 15 ms on Django).
    """
    from engram.stores.files import read_regular

    known = set(paths)
    if modules is None:
        modules = module_table(paths)
    score: dict[str, float] = defaultdict(float)
    why: dict[str, tuple[float, str]] = {}
    for seed, weight in seed_weights(text_ranks, known).items():
        if not seed.endswith(".py"):
            continue
        try:
            text = read_regular(root / seed, MAX_IMPORT_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        targets = {t for t in _imports(seed, text, modules) if t != seed}
        for target in targets:
            gain = weight / len(targets)
            score[target] += gain
            if gain > why.get(target, (0.0, ""))[0]:
                why[target] = (gain, seed)
    top = max(score.values(), default=0.0)
    out = {p: v / top for p, v in score.items()} if top else {}
    reasons = {p: [f"imported by {why[p][1]}"] for p, v in out.items() if v >= 0.2}
    return out, reasons


def module_table(paths: Sequence[str]) -> dict[str, str]:
    """Map each dotted module name a Python file could be imported as to the file.

    A file ``src/pkg/mod.py`` is ``src.pkg.mod``, ``pkg.mod`` and ``mod``; the longest
    (most specific) name wins when two files could claim one.
    """
    table: dict[str, tuple[int, str]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            name = ".".join(parts[start:])
            depth = len(parts) - start
            # a bare name is a project module only at the top (or a src/ layout's top)
            if depth == 1 and start > 0 and parts[start - 1] not in TOP_FOLDERS:
                continue
            if name and (name not in table or table[name][0] < depth):
                table[name] = (depth, path)
    return {name: path for name, (_, path) in table.items()}


def _imports(seed: str, text: str, modules: Mapping[str, str]) -> list[str]:
    """Return the project files ``seed``'s import statements name."""
    package = seed.rsplit("/", 1)[0].replace("/", ".") if "/" in seed else ""
    out = []
    for dots, module, names in _FROM.findall(text):
        base = module or ""
        if dots:
            parts = package.split(".") if package else []
            parts = parts[: len(parts) - (len(dots) - 1)] if len(dots) > 1 else parts
            base = ".".join([*parts, base] if base else parts)
        found = [
            modules[key]
            for name in _NAME.findall(names)
            if (key := f"{base}.{name}" if base else name) in modules
        ]
        # names that are submodules are the imports; otherwise the names come from ``base``
        out += found or ([modules[base]] if base in modules else [])
    for group in _IMPORT.findall(text):
        for module in group.split(","):
            name = module.strip()
            while name:
                if name in modules:
                    out.append(modules[name])
                    break
                name = name.rpartition(".")[0]
    return out
