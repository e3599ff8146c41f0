"""A saver or store whose every call runs inside its backend's error guard.

LangGraph's checkpoint savers and stores raise their driver's errors. engram turns those into
its own (``StoreReadOnlyError`` for a home it cannot write, ``BackendUnavailableError`` for a
Postgres server that went away, both with what to do next). The wrapping is the same for
every backend; only the guard differs, so a backend's class mixes one of these in first and
names its guard.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.store.base import Op, Result


class Guarded:
    """Something whose backend calls run inside ``guard()``."""

    def guard(self) -> AbstractContextManager[None]:
        """Return the context that turns this backend's errors into engram's."""
        raise NotImplementedError


class GuardedSaverMixin(Guarded):
    """Mixed in before a LangGraph checkpoint saver: each checkpoint call runs guarded."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint."""
        with self.guard():
            saved: RunnableConfig = super().put(  # type: ignore[misc]
                config, checkpoint, metadata, new_versions
            )
            return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save pending writes of a task."""
        with self.guard():
            super().put_writes(config, writes, task_id, task_path)  # type: ignore[misc]

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Fetch a checkpoint tuple."""
        with self.guard():
            found: CheckpointTuple | None = super().get_tuple(config)  # type: ignore[misc]
            return found

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """List checkpoints, newest first."""
        with self.guard():
            yield from super().list(  # type: ignore[misc]
                config, filter=filter, before=before, limit=limit
            )

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint of a thread."""
        with self.guard():
            super().delete_thread(thread_id)  # type: ignore[misc]

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        """Read channel history."""
        with self.guard():
            history: Mapping[str, Any] = super().get_delta_channel_history(  # type: ignore[misc]
                config=config, channels=channels
            )
            return history


class GuardedStoreMixin(Guarded):
    """Mixed in before a LangGraph store: each batch of operations runs guarded."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch of store operations."""
        with self.guard():
            results: list[Result] = super().batch(ops)  # type: ignore[misc]
            return results
