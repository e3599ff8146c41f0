"""Read definitions, imports and references out of JavaScript, TypeScript and TSX trees."""

from __future__ import annotations

import tree_sitter

from engram.stores.relations._extract_java import type_name
from engram.stores.relations._symbols import Definition, FactsBuilder, Import, access_chain

MEMBERS = {"member_expression": ("object", "property")}
LEAVES = frozenset({"identifier", "this", "super"})
CLASS_NODES = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
}
METHOD_NODES = ("method_definition", "method_signature", "abstract_method_signature")
FUNCTION_NODES = ("function_declaration", "generator_function_declaration")
FUNCTION_VALUES = ("arrow_function", "function_expression", "function")
PARAM_NODES = ("required_parameter", "optional_parameter")

Frame = tuple[tree_sitter.Node, str, str]


def walk(root: tree_sitter.Node, out: FactsBuilder) -> None:
    """Fill ``out`` with the facts of a JS/TS module."""
    stack: list[Frame] = [(root, "", "")]
    while stack:
        node, scope, scope_kind = stack.pop()
        kind = node.type
        if kind in CLASS_NODES:
            qual = _define(node, scope, CLASS_NODES[kind], out, bases=_bases(node, out))
            _push(stack, node, qual, "class", ("body",))
            continue
        if (kind in METHOD_NODES and scope_kind == "class") or kind in FUNCTION_NODES:
            def_kind = "method" if scope_kind == "class" else "function"
            qual = _define(node, scope, def_kind, out)
            _push(stack, node, qual, def_kind, ("body", "parameters"))
            continue
        if kind == "variable_declarator" or (kind == "public_field_definition" and scope_kind):
            if _declarator(node, scope, scope_kind, out, stack):
                continue
        elif kind == "import_statement":
            _import(node, out)
            continue
        elif kind == "export_statement":
            _export(node, out)
        else:
            _reference(node, scope, scope_kind, out)
        for child in reversed(node.children):
            stack.append((child, scope, scope_kind))


def _push(
    stack: list[Frame], node: tree_sitter.Node, qual: str, kind: str, fields: tuple[str, ...]
) -> None:
    for field_name in fields:
        child = node.child_by_field_name(field_name)
        if child is not None:
            stack.append((child, qual, kind))


def _define(
    node: tree_sitter.Node,
    scope: str,
    kind: str,
    out: FactsBuilder,
    *,
    bases: tuple[tuple[str, str], ...] = (),
    name: str = "",
) -> str:
    name = name or out.text(node.child_by_field_name("name"))
    qual = f"{scope}.{name}" if scope else name
    params = node.child_by_field_name("parameters")
    start = node.parent if node.parent and node.parent.type == "export_statement" else node
    out.definitions.append(
        Definition(
            qualname=qual,
            name=name,
            kind=kind,  # type: ignore[arg-type]
            start_line=start.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=scope,
            bases=bases,
            arity=len(params.named_children) if params is not None else -1,
            returns=type_name(out.text(node.child_by_field_name("return_type")).lstrip(":")),
        )
    )
    return qual


def _bases(node: tree_sitter.Node, out: FactsBuilder) -> tuple[tuple[str, str], ...]:
    bases: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                if clause.type == "extends_clause":
                    value = clause.child_by_field_name("value")
                    bases.append((type_name(out.text(value)), "inherits"))
                elif clause.type == "implements_clause":
                    bases += [(type_name(out.text(t)), "implements") for t in clause.named_children]
                elif clause.type in ("identifier", "member_expression"):
                    bases.append((out.text(clause), "inherits"))
        elif child.type == "extends_type_clause":
            bases += [(type_name(out.text(t)), "inherits") for t in child.named_children]
    return tuple(bases)


def _declarator(
    node: tree_sitter.Node, scope: str, scope_kind: str, out: FactsBuilder, stack: list[Frame]
) -> bool:
    """Handle ``const f = () => …``, requires and typed variables; True when fully handled."""
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    name = out.text(name_node)
    if (
        value is not None
        and value.type in FUNCTION_VALUES
        and name_node is not None
        and name_node.type in ("identifier", "property_identifier")
    ):
        def_kind = "method" if scope_kind == "class" else "function"
        qual = _define(value, scope, def_kind, out, name=name)
        _push(stack, value, qual, def_kind, ("body", "parameters"))
        return True
    if (
        value is not None
        and value.type == "call_expression"
        and out.text(value.child_by_field_name("function")) == "require"
    ):
        _require(name_node, value, out)
        return True
    declared = out.text(node.child_by_field_name("type")).lstrip(":").strip()
    if not declared and value is not None and value.type == "new_expression":
        declared = out.text(value.child_by_field_name("constructor"))
    elif not declared and value is not None and value.type == "call_expression":
        declared = out.text(value.child_by_field_name("function"))
    if name_node is not None and name_node.type in ("identifier", "property_identifier"):
        out.add_type(scope, name, type_name(declared))
        if not scope:
            out.constants.append((name, node.start_point[0] + 1, node.end_point[0] + 1))
    return False


def _require(name_node: tree_sitter.Node | None, call: tree_sitter.Node, out: FactsBuilder) -> None:
    args = call.child_by_field_name("arguments")
    strings = [a for a in (args.named_children if args else []) if a.type == "string"]
    if not strings or name_node is None:
        return
    source = out.text(strings[0]).strip("'\"`")
    line = call.start_point[0] + 1
    if name_node.type == "identifier":
        out.imports.append(Import(source, "", out.text(name_node), line))
    elif name_node.type == "object_pattern":
        for item in name_node.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                out.imports.append(Import(source, out.text(item), out.text(item), line))


def _reference(node: tree_sitter.Node, scope: str, scope_kind: str, out: FactsBuilder) -> None:
    kind = node.type
    if kind == "call_expression":
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        arity = len(args.named_children) if args else -1
        if func is not None and func.type == "super":
            out.ref(scope, ("super", "constructor"), "call", node, arity)
        elif func is not None:
            out.ref(scope, access_chain(func, out.source, MEMBERS, LEAVES), "call", node, arity)
    elif kind == "new_expression":
        ctor = node.child_by_field_name("constructor")
        if ctor is not None:
            out.ref(scope, access_chain(ctor, out.source, MEMBERS, LEAVES), "new", node)
    elif kind in PARAM_NODES:
        name = out.text(node.child_by_field_name("pattern"))
        declared = type_name(out.text(node.child_by_field_name("type")).lstrip(":"))
        out.add_type(scope, name, declared)
        if any(c.type == "accessibility_modifier" for c in node.children) and "." in scope:
            out.add_type(scope.rsplit(".", 1)[0], name, declared)
    elif kind == "public_field_definition":
        declared = type_name(out.text(node.child_by_field_name("type")).lstrip(":"))
        out.add_type(scope, out.text(node.child_by_field_name("name")), declared)
    elif kind == "assignment_expression" and scope_kind == "method":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if (
            left is not None
            and right is not None
            and right.type == "new_expression"
            and left.type == "member_expression"
            and out.text(left.child_by_field_name("object")) == "this"
        ):
            owner = scope.rsplit(".", 1)[0]
            field_type = out.text(right.child_by_field_name("constructor"))
            out.add_type(owner, out.text(left.child_by_field_name("property")), field_type)
    elif kind in ("identifier", "type_identifier") and scope and (node.text or b"")[:1].isupper():
        out.ref(scope, (out.text(node),), "use", node)


def _import(node: tree_sitter.Node, out: FactsBuilder) -> None:
    source = out.text(node.child_by_field_name("source")).strip("'\"`")
    line = node.start_point[0] + 1
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if clause is None:
        out.imports.append(Import(source, "", "", line))
        return
    for part in clause.named_children:
        if part.type == "identifier":
            out.imports.append(Import(source, "default", out.text(part), line))
        elif part.type == "namespace_import":
            ident = next((c for c in part.named_children if c.type == "identifier"), None)
            out.imports.append(Import(source, "", out.text(ident), line))
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                name = out.text(spec.child_by_field_name("name"))
                alias = out.text(spec.child_by_field_name("alias")) or name
                out.imports.append(Import(source, name, alias, line))


def _export(node: tree_sitter.Node, out: FactsBuilder) -> None:
    source_node = node.child_by_field_name("source")
    source = out.text(source_node).strip("'\"`")
    line = node.start_point[0] + 1
    is_default = any(c.type == "default" for c in node.children)
    declaration = node.child_by_field_name("declaration")
    value = node.child_by_field_name("value")
    if is_default:
        target = declaration.child_by_field_name("name") if declaration is not None else value
        if target is not None and target.type in ("identifier", "type_identifier"):
            out.exports.append(("default", out.text(target)))
    for clause in node.named_children:
        if clause.type == "export_clause":
            for spec in clause.named_children:
                name = out.text(spec.child_by_field_name("name"))
                alias = out.text(spec.child_by_field_name("alias")) or name
                out.exports.append((alias, name))
                if source:
                    out.imports.append(Import(source, name, name, line))
    if source and not any(c.type == "export_clause" for c in node.named_children):
        out.imports.append(Import(source, "*", "", line))
