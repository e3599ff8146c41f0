"""Read definitions, imports and references out of a Java syntax tree."""

from __future__ import annotations

import re

import tree_sitter

from engram.stores.relations._symbols import Definition, FactsBuilder, Import, access_chain

MEMBERS = {"method_invocation": ("object", "name"), "field_access": ("object", "field")}
LEAVES = frozenset({"identifier", "this", "super"})
CLASS_NODES = {
    "class_declaration": "class",
    "enum_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
}
METHOD_NODES = ("method_declaration", "constructor_declaration")
GENERIC = re.compile(r"<.*>|\[\]|\.\.\.|@\w+\s*")


def type_name(text: str) -> str:
    """Strip generics, arrays and annotations from a Java/TS/Go type expression."""
    return GENERIC.sub("", text).replace("*", "").replace("&", "").strip()


def walk(root: tree_sitter.Node, out: FactsBuilder) -> None:
    """Fill ``out`` with the facts of a Java compilation unit."""
    overloaded: dict[str, set[str]] = {}
    stack: list[tuple[tree_sitter.Node, str, str]] = [(root, "", "")]
    while stack:
        node, scope, scope_kind = stack.pop()
        kind = node.type
        if kind in CLASS_NODES:
            qual = _class(node, scope, out)
            overloaded[qual] = _overloaded_names(node, out)
            body = node.child_by_field_name("body")
            if body is not None:
                stack.append((body, qual, "class"))
            continue
        if kind in METHOD_NODES and scope_kind == "class":
            qual = _method(node, scope, overloaded.get(scope, set()), out)
            for field_name in ("body", "parameters"):
                child = node.child_by_field_name(field_name)
                if child is not None:
                    stack.append((child, qual, "method"))
            continue
        if kind == "package_declaration":
            out.package = out.text(node.named_children[0]) if node.named_children else ""
            continue
        if kind == "import_declaration":
            _import(node, out)
            continue
        _reference(node, scope, scope_kind, out)
        for child in reversed(node.children):
            stack.append((child, scope, scope_kind))


def _reference(node: tree_sitter.Node, scope: str, scope_kind: str, out: FactsBuilder) -> None:
    kind = node.type
    if kind == "method_invocation":
        args = node.child_by_field_name("arguments")
        arity = len(args.named_children) if args is not None else -1
        chain = access_chain(node, out.source, MEMBERS, LEAVES)
        out.ref(scope, chain, "call", node, arity)
    elif kind == "object_creation_expression":
        name = type_name(out.text(node.child_by_field_name("type")))
        out.ref(scope, tuple(name.split(".")), "new", node)
    elif kind in ("field_declaration", "local_variable_declaration"):
        declared = type_name(out.text(node.child_by_field_name("type")))
        for decl in node.children_by_field_name("declarator"):
            name = out.text(decl.child_by_field_name("name"))
            out.add_type(scope, name, declared)
            if kind == "field_declaration" and scope_kind == "class":
                out.constants.append((name, node.start_point[0] + 1, node.end_point[0] + 1))
    elif kind in ("formal_parameter", "catch_formal_parameter", "enhanced_for_statement"):
        declared = type_name(out.text(node.child_by_field_name("type")))
        out.add_type(scope, out.text(node.child_by_field_name("name")), declared)
    elif kind in ("identifier", "type_identifier") and scope and (node.text or b"")[:1].isupper():
        out.ref(scope, (out.text(node),), "use", node)


def _overloaded_names(node: tree_sitter.Node, out: FactsBuilder) -> set[str]:
    body = node.child_by_field_name("body")
    seen: set[str] = set()
    repeated: set[str] = set()
    members = list(body.named_children) if body is not None else []
    for member in members:
        if member.type == "enum_body_declarations":
            members.extend(member.named_children)
        if member.type in METHOD_NODES:
            name = out.text(member.child_by_field_name("name"))
            (repeated if name in seen else seen).add(name)
    return repeated


def _class(node: tree_sitter.Node, scope: str, out: FactsBuilder) -> str:
    name = out.text(node.child_by_field_name("name"))
    qual = f"{scope}.{name}" if scope else name
    kind = CLASS_NODES[node.type]
    bases: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "superclass":
            bases += [(type_name(out.text(t)), "inherits") for t in child.named_children]
        elif child.type in ("super_interfaces", "extends_interfaces"):
            relation = "inherits" if kind == "interface" else "implements"
            for type_list in child.named_children:
                bases += [(type_name(out.text(t)), relation) for t in type_list.named_children]
    out.definitions.append(
        Definition(
            qualname=qual,
            name=name,
            kind="interface" if kind == "interface" else "class",
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=scope,
            bases=tuple(bases),
        )
    )
    return qual


def _method(node: tree_sitter.Node, scope: str, overloaded: set[str], out: FactsBuilder) -> str:
    name = out.text(node.child_by_field_name("name"))
    params = node.child_by_field_name("parameters")
    arity = sum(
        1 for p in (params.named_children if params else []) if p.type.endswith("parameter")
    )
    qual = f"{scope}.{name}" + (f"/{arity}" if name in overloaded else "")
    out.definitions.append(
        Definition(
            qualname=qual,
            name=name,
            kind="method",
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=scope,
            arity=arity,
            returns=type_name(out.text(node.child_by_field_name("type"))),
        )
    )
    return qual


def _import(node: tree_sitter.Node, out: FactsBuilder) -> None:
    line = node.start_point[0] + 1
    names = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not names:
        return
    full = out.text(names[0])
    if any(c.type == "asterisk" for c in node.named_children):
        out.imports.append(Import(full, "*", "", line))
        return
    module, _, member = full.rpartition(".")
    out.imports.append(Import(module, member, member, line))
