"""Go's implicit interfaces: method sets of structs and interfaces, and who satisfies what."""

from __future__ import annotations

from collections.abc import Mapping

from engram.stores.relations._symbol_tables import ProjectIndex, node_id


def go_method_sets(index: ProjectIndex) -> dict[str, frozenset[str]]:
    """Return the method names of every Go struct and interface, counting embedded types."""
    out: dict[str, frozenset[str]] = {}
    for nid, (path, d) in index.defs.items():
        if d.kind in ("struct", "interface") and index.facts[path].language == "go":
            names: set[str] = set()
            for cls in index.lineage(nid):
                names |= set(index.members.get(cls, {}))
            out[nid] = frozenset(names)
    return out


def go_implementations(
    index: ProjectIndex, method_sets: Mapping[str, frozenset[str]], path: str
) -> list[tuple[str, str]]:
    """Return (struct, interface) pairs for the structs of ``path``.

    A struct implements a project interface with at least one method when it has every
    method name of it (names only: signatures are not compared).
    """
    if index.facts[path].language != "go":
        return []
    interfaces = [
        (iid, need)
        for iid, need in method_sets.items()
        if need and index.defs[iid][1].kind == "interface"
    ]
    out: list[tuple[str, str]] = []
    for d in index.facts[path].definitions:
        if d.kind != "struct":
            continue
        sid = node_id(path, d.qualname)
        have = method_sets.get(sid, frozenset())
        out += [(sid, iid) for iid, need in interfaces if need <= have]
    return out
