"""Read definitions, imports and references out of a Go syntax tree."""

from __future__ import annotations

import tree_sitter

from engram.stores.relations._extract_java import type_name
from engram.stores.relations._symbols import Definition, FactsBuilder, Import, access_chain

MEMBERS = {"selector_expression": ("operand", "field")}
LEAVES = frozenset({"identifier"})

Frame = tuple[tree_sitter.Node, str, str]


def walk(root: tree_sitter.Node, out: FactsBuilder) -> None:
    """Fill ``out`` with the facts of a Go source file."""
    stack: list[Frame] = [(root, "", "")]
    while stack:
        node, scope, scope_kind = stack.pop()
        kind = node.type
        if kind == "type_spec":
            _type_spec(node, out)
            continue
        if kind in ("function_declaration", "method_declaration"):
            qual = _function(node, out)
            body = node.child_by_field_name("body")
            if body is not None:
                stack.append((body, qual, "function"))
            continue
        if kind == "package_clause":
            out.package = out.text(node.named_children[0]) if node.named_children else ""
            continue
        if kind == "import_spec":
            _import(node, out)
            continue
        if kind == "call_expression":
            func = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if func is not None:
                chain = access_chain(func, out.source, MEMBERS, LEAVES)
                out.ref(scope, chain, "call", node, len(args.named_children) if args else -1)
        elif kind in ("const_spec", "var_spec"):
            _var_spec(node, scope, out)
        elif kind == "short_var_declaration" and scope:
            _short_var(node, scope, out)
        elif kind in ("identifier", "type_identifier") and scope and _exported(node):
            out.ref(scope, (out.text(node),), "use", node)
        for child in reversed(node.children):
            stack.append((child, scope, scope_kind))


def _exported(node: tree_sitter.Node) -> bool:
    return (node.text or b"")[:1].isupper()


def _lines(node: tree_sitter.Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _type_spec(node: tree_sitter.Node, out: FactsBuilder) -> None:
    name = out.text(node.child_by_field_name("name"))
    body = node.child_by_field_name("type")
    start = node.parent if node.parent is not None else node
    if body is not None and body.type == "interface_type":
        bases = [
            (type_name(out.text(elem)), "inherits")
            for elem in body.named_children
            if elem.type == "type_elem"
        ]
        out.definitions.append(
            Definition(name, name, "interface", *_lines(start), bases=tuple(bases))
        )
        for elem in body.named_children:
            if elem.type == "method_elem":
                method = out.text(elem.child_by_field_name("name"))
                out.definitions.append(
                    Definition(f"{name}.{method}", method, "method", *_lines(elem), parent=name)
                )
        return
    bases = []
    if body is not None and body.type == "struct_type":
        for fields in body.named_children:
            for decl in fields.named_children:
                if decl.type != "field_declaration":
                    continue
                declared = type_name(out.text(decl.child_by_field_name("type")))
                names = decl.children_by_field_name("name")
                if not names:
                    bases.append((declared, "inherits"))
                for field_name in names:
                    out.add_type(name, out.text(field_name), declared)
    out.definitions.append(Definition(name, name, "struct", *_lines(start), bases=tuple(bases)))


def _params(node: tree_sitter.Node | None, qual: str, out: FactsBuilder) -> int:
    count = 0
    for param in node.named_children if node is not None else []:
        declared = type_name(out.text(param.child_by_field_name("type")))
        names = param.children_by_field_name("name")
        count += max(1, len(names))
        for name in names:
            out.add_type(qual, out.text(name), declared)
    return count


def _function(node: tree_sitter.Node, out: FactsBuilder) -> str:
    name = out.text(node.child_by_field_name("name"))
    receiver = ""
    receiver_node = node.child_by_field_name("receiver")
    if receiver_node is not None and receiver_node.named_children:
        param = receiver_node.named_children[0]
        receiver = type_name(out.text(param.child_by_field_name("type"))).split("[")[0]
    qual = f"{receiver}.{name}" if receiver else name
    _params(receiver_node, qual, out)
    arity = _params(node.child_by_field_name("parameters"), qual, out)
    result = node.child_by_field_name("result")
    returns = "" if result is None or result.type == "parameter_list" else out.text(result)
    out.definitions.append(
        Definition(
            qual,
            name,
            "method" if receiver else "function",
            *_lines(node),
            arity=arity,
            receiver=receiver,
            returns=type_name(returns),
        )
    )
    return qual


def _import(node: tree_sitter.Node, out: FactsBuilder) -> None:
    path = out.text(node.child_by_field_name("path")).strip('"`')
    alias = out.text(node.child_by_field_name("name"))
    line = node.start_point[0] + 1
    if alias == ".":
        out.imports.append(Import(path, "*", "", line))
    elif alias == "_":
        out.imports.append(Import(path, "", "", line))
    else:
        out.imports.append(Import(path, "", alias or path.rsplit("/", 1)[-1], line))


def _var_spec(node: tree_sitter.Node, scope: str, out: FactsBuilder) -> None:
    declared = type_name(out.text(node.child_by_field_name("type")))
    for name in node.children_by_field_name("name"):
        if scope:
            out.add_type(scope, out.text(name), declared)
        else:
            out.constants.append((out.text(name), *_lines(node)))


def _short_var(node: tree_sitter.Node, scope: str, out: FactsBuilder) -> None:
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None:
        return
    for target, value in zip(left.named_children, right.named_children, strict=False):
        if value.type == "unary_expression" and value.named_children:
            value = value.named_children[-1]
        if value.type == "call_expression":
            callee = out.text(value.child_by_field_name("function"))
            out.add_type(scope, out.text(target), callee)
        elif value.type == "composite_literal":
            declared = type_name(out.text(value.child_by_field_name("type")))
            out.add_type(scope, out.text(target), declared)
