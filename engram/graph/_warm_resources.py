"""A long-lived process's open indexes, lent to the openers for the length of one request.

``engram serve`` answers many commands from one process; each command opens the project's code
index and relation index as if for the first time. While ``WARM_RESOURCES`` holds a keeper, the
openers ask it instead, and it returns the copy it keeps open (reopened when the files on disk
changed under it). Unset, as in every other process, the openers open afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from engram.graph._context import Context

T = TypeVar("T")
KeptName = Literal["code_index", "relation_index"]


class ResourceKeeper(Protocol):
    """Keeps each project's opened indexes across requests."""

    def keep(self, name: KeptName, context: Context, opener: Callable[[Context], T]) -> T:
        """Return the project's kept ``name``, opening it with ``opener`` if needed."""
        ...


WARM_RESOURCES: ContextVar[ResourceKeeper | None] = ContextVar("engram_warm", default=None)
"""The keeper of the current request, or None (open afresh)."""
