"""An embedder that builds the real one on first use, so holding it costs nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from engram.stores.embeddings._embedders import Embedder


class LazyEmbedder:
    """Defer loading an embedding model until something is actually embedded.

    Facts memory only embeds once a scope holds hundreds of facts; most runs never do, and
    they should not pay for loading a model.
    """

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self._factory = factory
        self._inner: Embedder | None = None
        self._lock = threading.Lock()

    def _get(self) -> Embedder:
        with self._lock:
            if self._inner is None:
                self._inner = self._factory()
            return self._inner

    @property
    def model_id(self) -> str:
        """Identify the model (loads it)."""
        return self._get().model_id

    @property
    def dim(self) -> int:
        """Vector size (loads the model)."""
        return self._get().dim

    @property
    def loaded(self) -> bool:
        """Whether the real embedder has been built."""
        return self._inner is not None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed with the real model, building it first if needed."""
        return self._get().embed(texts)
