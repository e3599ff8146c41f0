"""An open engram: the run settings, the compiled graph and the stores a session works on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from engram.graph import Context, Deps


@dataclass
class App:
    """Everything an operation on a saved session needs (opened by the CLI or a host app)."""

    context: Context
    graph: Any
    deps: Deps
    store: BaseStore
    checkpointer: BaseCheckpointSaver[Any]
