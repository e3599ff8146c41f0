"""Per-language knowledge the chunker needs: which syntax nodes are classes and functions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import tree_sitter

DefinitionKind = Literal["class", "function"]

_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


def _text(node: tree_sitter.Node | None) -> str:
    if node is None:
        return ""
    return (node.text or b"").decode("utf-8", errors="replace")


@dataclass(frozen=True)
class LanguageSpec:
    """Node types of one grammar that the chunker treats as definitions, imports, comments."""

    class_types: frozenset[str]
    function_types: frozenset[str]
    import_types: frozenset[str]
    comment_types: frozenset[str]
    wrappers: dict[str, str] = field(default_factory=dict)
    """Node type → field holding the wrapped definition (decorators, ``export``)."""
    flatten: frozenset[str] = frozenset()
    """Class-body node types whose children are members (Java enum body declarations)."""

    def definition_of(
        self, node: tree_sitter.Node
    ) -> tuple[DefinitionKind, tree_sitter.Node] | None:
        """Return (kind, defining node) when ``node`` defines a class or function."""
        wrapped = self.wrappers.get(node.type)
        if wrapped is not None:
            inner = node.child_by_field_name(wrapped)
            return self.definition_of(inner) if inner is not None else None
        if node.type in self.class_types:
            if node.type == "type_declaration":
                return ("class", node) if _go_type_spec(node) is not None else None
            return "class", node
        if node.type in self.function_types:
            return "function", node
        if node.type in {"lexical_declaration", "variable_declaration"}:
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(declarators) == 1 and _is_function_value(declarators[0]):
                return "function", declarators[0]
        fields = {"public_field_definition", "field_definition"}
        if node.type in fields and _is_function_value(node):
            return "function", node
        return None

    def class_name(self, node: tree_sitter.Node) -> str:
        """Return the declared name of a class-like node."""
        if node.type == "type_declaration":
            return _text(_go_type_spec(node).child_by_field_name("name"))  # type: ignore[union-attr]
        return _text(node.child_by_field_name("name")) or "<anonymous>"

    def class_body(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """Return the node holding a class's members, or None (Go types)."""
        if node.type == "type_declaration":
            return None
        return node.child_by_field_name("body")

    def class_members(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Return a class's member nodes, with enum declaration blocks flattened."""
        body = self.class_body(node)
        members: list[tree_sitter.Node] = []
        for child in body.named_children if body is not None else []:
            if child.type in self.flatten:
                members.extend(child.named_children)
            else:
                members.append(child)
        return members

    def function_parts(self, node: tree_sitter.Node) -> tuple[str, str, str]:
        """Return (name, parameter list text, receiver type or "") of a function-like node."""
        if node.type in {"variable_declarator", "public_field_definition", "field_definition"}:
            value = node.child_by_field_name("value")
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            params = None
            if value is not None:
                params = value.child_by_field_name("parameters") or value.child_by_field_name(
                    "parameter"
                )
            return _text(name) or "<anonymous>", _text(params), ""
        name_text = _text(node.child_by_field_name("name")) or "<anonymous>"
        params_text = _text(node.child_by_field_name("parameters"))
        receiver = ""
        if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:
            receiver = _go_receiver(node.child_by_field_name("receiver"))
        return name_text, params_text, receiver


def _is_function_value(node: tree_sitter.Node) -> bool:
    value = node.child_by_field_name("value")
    return value is not None and value.type in _FUNCTION_VALUES


def _go_type_spec(node: tree_sitter.Node) -> tree_sitter.Node | None:
    for spec in node.named_children:
        if spec.type == "type_spec":
            kind = spec.child_by_field_name("type")
            if kind is not None and kind.type in {"struct_type", "interface_type"}:
                return spec
    return None


def _go_receiver(receiver: tree_sitter.Node | None) -> str:
    stack = [receiver] if receiver is not None else []
    while stack:
        node = stack.pop()
        if node.type == "type_identifier":
            return _text(node)
        stack.extend(reversed(node.named_children))
    return ""


_PYTHON = LanguageSpec(
    class_types=frozenset({"class_definition"}),
    function_types=frozenset({"function_definition"}),
    import_types=frozenset(
        {"import_statement", "import_from_statement", "future_import_statement"}
    ),
    comment_types=frozenset({"comment"}),
    wrappers={"decorated_definition": "definition"},
)

_JAVA = LanguageSpec(
    class_types=frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        }
    ),
    function_types=frozenset({"method_declaration", "constructor_declaration"}),
    import_types=frozenset({"import_declaration"}),
    comment_types=frozenset({"line_comment", "block_comment"}),
    flatten=frozenset({"enum_body_declarations"}),
)

_ECMA = LanguageSpec(
    class_types=frozenset(
        {
            "class_declaration",
            "abstract_class_declaration",
            "interface_declaration",
            "enum_declaration",
        }
    ),
    function_types=frozenset(
        {"function_declaration", "generator_function_declaration", "method_definition"}
    ),
    import_types=frozenset({"import_statement"}),
    comment_types=frozenset({"comment"}),
    wrappers={"export_statement": "declaration"},
)

_GO = LanguageSpec(
    class_types=frozenset({"type_declaration"}),
    function_types=frozenset({"function_declaration", "method_declaration"}),
    import_types=frozenset({"import_declaration"}),
    comment_types=frozenset({"comment"}),
)

SPECS: dict[str, LanguageSpec] = {
    "python": _PYTHON,
    "java": _JAVA,
    "javascript": _ECMA,
    "typescript": _ECMA,
    "tsx": _ECMA,
    "go": _GO,
}
"""Chunking rules by tree-sitter language name."""
