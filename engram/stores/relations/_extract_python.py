"""Read definitions, imports and references out of a Python syntax tree."""

from __future__ import annotations

import tree_sitter

from engram.stores.relations._symbols import Definition, FactsBuilder, Import, access_chain

MEMBERS = {"attribute": ("object", "attribute")}
LEAVES = frozenset({"identifier"})
PARAM_TYPES = ("typed_parameter", "typed_default_parameter")


def walk(root: tree_sitter.Node, out: FactsBuilder) -> None:
    """Fill ``out`` with the facts of a Python module."""
    # Iterative walk: (node, enclosing definition qualname, enclosing kind).
    stack: list[tuple[tree_sitter.Node, str, str]] = [(root, "", "")]
    while stack:
        node, scope, scope_kind = stack.pop()
        kind = node.type
        if kind == "class_definition":
            qual = _class(node, scope, out)
            _push_body(stack, node, qual, "class")
            continue
        if kind == "function_definition":
            qual = _function(node, scope, scope_kind, out)
            _push_body(stack, node, qual, "function")
            continue
        if kind == "import_statement":
            _import(node, out)
            continue
        if kind == "import_from_statement":
            _import_from(node, out)
            continue
        if kind == "call":
            _call(node, scope, out)
        elif kind == "assignment":
            _assignment(node, scope, scope_kind, out)
        elif kind == "identifier" and scope and node.text and node.text[:1].isupper():
            out.ref(scope, (out.text(node),), "use", node)
        for child in reversed(node.children):
            stack.append((child, scope, scope_kind))


def _push_body(
    stack: list[tuple[tree_sitter.Node, str, str]], node: tree_sitter.Node, qual: str, kind: str
) -> None:
    # Base-class lists are read by ``_class``; parameters (defaults, annotations) and the body
    # are attributed to the new definition.
    for field_name in ("body", "parameters"):
        child = node.child_by_field_name(field_name)
        if child is not None:
            stack.append((child, qual, kind))


def _qual(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _class(node: tree_sitter.Node, scope: str, out: FactsBuilder) -> str:
    name = out.text(node.child_by_field_name("name"))
    qual = _qual(scope, name)
    bases: list[tuple[str, str]] = []
    supers = node.child_by_field_name("superclasses")
    if supers is not None:
        for child in supers.named_children:
            if child.type in ("identifier", "attribute"):
                bases.append((out.text(child), "inherits"))
    out.definitions.append(
        Definition(
            qualname=qual,
            name=name,
            kind="class",
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=scope,
            bases=tuple(bases),
        )
    )
    return qual


def _function(node: tree_sitter.Node, scope: str, scope_kind: str, out: FactsBuilder) -> str:
    name = out.text(node.child_by_field_name("name"))
    qual = _qual(scope, name)
    params = node.child_by_field_name("parameters")
    arity = 0
    if params is not None:
        for param in params.named_children:
            arity += 1
            if param.type == "identifier":
                out.add_type(qual, out.text(param), "")
            elif param.type in PARAM_TYPES or param.type == "default_parameter":
                ident = param.child_by_field_name("name")
                if ident is None:
                    ident = next((c for c in param.named_children if c.type == "identifier"), None)
                out.add_type(qual, out.text(ident), out.text(param.child_by_field_name("type")))
    start = node.parent if node.parent and node.parent.type == "decorated_definition" else node
    out.definitions.append(
        Definition(
            qualname=qual,
            name=name,
            kind="method" if scope_kind == "class" else "function",
            start_line=start.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=scope,
            arity=arity,
            returns=out.text(node.child_by_field_name("return_type")),
        )
    )
    return qual


def _import(node: tree_sitter.Node, out: FactsBuilder) -> None:
    line = node.start_point[0] + 1
    for child in node.named_children:
        if child.type == "dotted_name":
            module = out.text(child)
            out.imports.append(Import(module, "", module.split(".")[0], line))
        elif child.type == "aliased_import":
            module = out.text(child.child_by_field_name("name"))
            alias = out.text(child.child_by_field_name("alias"))
            out.imports.append(Import(module, "", alias, line))


def _import_from(node: tree_sitter.Node, out: FactsBuilder) -> None:
    line = node.start_point[0] + 1
    module_node = node.child_by_field_name("module_name")
    module = out.text(module_node).replace(" ", "")
    for child in node.named_children:
        if child == module_node:
            continue
        if child.type == "wildcard_import":
            out.imports.append(Import(module, "*", "", line))
        elif child.type == "dotted_name":
            name = out.text(child)
            out.imports.append(Import(module, name, name, line))
        elif child.type == "aliased_import":
            name = out.text(child.child_by_field_name("name"))
            alias = out.text(child.child_by_field_name("alias"))
            out.imports.append(Import(module, name, alias, line))


def _call(node: tree_sitter.Node, scope: str, out: FactsBuilder) -> None:
    func = node.child_by_field_name("function")
    if func is None:
        return
    chain = access_chain(func, out.source, MEMBERS, LEAVES)
    if chain == ("super",):
        return
    args = node.child_by_field_name("arguments")
    arity = len(args.named_children) if args is not None else -1
    out.ref(scope, chain, "call", node, arity)


def _assignment(node: tree_sitter.Node, scope: str, scope_kind: str, out: FactsBuilder) -> None:
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    annotation = node.child_by_field_name("type")
    if left is None:
        return
    if not scope and left.type == "identifier":
        out.constants.append((out.text(left), node.start_point[0] + 1, node.end_point[0] + 1))
        return
    type_expr = out.text(annotation)
    if not type_expr and right is not None:
        if right.type == "call":
            func = right.child_by_field_name("function")
            if func is not None and func.type in ("identifier", "attribute"):
                type_expr = out.text(func)
        elif right.type == "identifier" and scope:
            type_expr = out.types_of(scope).get(out.text(right), "")
    if left.type == "identifier" and scope:
        out.add_type(scope, out.text(left), type_expr)
    elif left.type == "attribute" and scope_kind == "function":
        obj = left.child_by_field_name("object")
        if obj is not None and out.text(obj) == "self":
            owner = scope.rsplit(".", 1)[0] if "." in scope else ""
            if owner:
                field_name = out.text(left.child_by_field_name("attribute"))
                out.add_type(owner, field_name, type_expr)
