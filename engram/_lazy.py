"""Lazy public names for package ``__init__`` modules: import what is used, when it is used."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attribute"]


def lazy_attribute(package: str, where: Mapping[str, str], name: str) -> Any:
    """Return ``name`` from the module ``where`` names for it, importing it on first use.

    Raises:
        AttributeError: ``name`` is not one of the package's public names.
    """
    if name in where:
        return getattr(import_module(where[name]), name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
