"""Import Chroma without the development-time checks of its ``@override`` decorators.

Chroma marks its methods with the ``overrides`` package's ``@override``, which compares each
method's signature with its base class's while the class is created: about a sixth of
``import chromadb`` and of its embedded client's first import, paid by every process that
searches or builds an index. The checks guard Chroma's own development; here they would only
ever repeat what Chroma's release already passed. While Chroma is imported, ``@override`` only
marks the method (as ``EnforceOverrides`` classes require); afterwards it is restored.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

CHROMA_MODULES = ("chromadb", "chromadb.api.rust")
"""Chroma itself and its embedded (Rust) client, which the first ``PersistentClient`` imports."""

_lock = threading.Lock()


def _mark(method: Callable[..., Any] | None = None, **_options: Any) -> Any:
    """``@override`` without the signature check: mark the method as overriding."""
    if method is None:
        return _mark
    method.__override__ = True  # type: ignore[attr-defined]
    return method


@contextmanager
def _unchecked_overrides() -> Iterator[None]:
    import overrides

    saved = overrides.override, overrides.overrides
    overrides.override = overrides.overrides = _mark  # type: ignore[assignment]
    try:
        yield
    finally:
        overrides.override, overrides.overrides = saved  # type: ignore[assignment]


def import_chromadb() -> ModuleType:
    """Return the ``chromadb`` module, importing it and its embedded client on first use."""
    with _lock:
        if all(name in sys.modules for name in CHROMA_MODULES):
            return sys.modules["chromadb"]
        with _unchecked_overrides():
            for name in CHROMA_MODULES:
                __import__(name)
        return sys.modules["chromadb"]
