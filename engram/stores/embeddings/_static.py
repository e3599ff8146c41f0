"""Embed texts with the shipped static token-embedding table (no model runs at all).

A static embedder looks each sub-word token up in a table and averages the vectors, which is
hundreds of times faster than running a transformer per chunk. The table ships with engram
(``static_minilm/``: 30,522 tokens × 256 dimensions, float16, and the tokenizer); it was distilled
once from all-MiniLM-L6-v2 by ``scripts/distill_static_table.py`` (model2vec's recipe), so
neither torch nor the transformer is needed to embed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from engram.stores.embeddings._token_ids import TokenIds

STATIC_MODEL_ID = "engram-static-minilm-l6-v2-256-f16"
"""Id of the shipped table; part of the embedding-cache key, so bump it on recipe changes."""

STATIC_DIM = 256
"""Dimensions kept by the distillation's PCA step."""

STATIC_FOLDER = Path(__file__).with_name("static_minilm")
"""The shipped table (``table.npy``), its tokenizer (``tokenizer.json``) and their NOTICE."""

MAX_TOKENS_PER_TEXT = 512
"""Tokens of a text that count towards its vector (long chunks are mostly repetition)."""

MAX_CHARS_PER_TEXT = 4 * MAX_TOKENS_PER_TEXT
"""Characters tokenized per text: a little more than MAX_TOKENS_PER_TEXT tokens need."""


@cache
def load_static_table() -> np.ndarray:
    """Return the shipped float16 table, mapped from its file (never pickled data).

    Mapped rather than read: a long-lived process (``engram serve``) keeps only the rows its
    queries touched resident, not the whole table, and every process shares the pages.
    Embedding converts the rows it gathers to float32 (exactly: every float16 is a float32).

    Raises:
        StoreError: The table is missing: a source checkout where it was never built.
    """
    path = STATIC_FOLDER / "table.npy"
    if not path.is_file():
        from engram.stores._errors import StoreError

        raise StoreError(
            f"the offline embedder's table {path} is missing (it is built, not tracked)",
            hint="run `make install`, or `pip install -e '.[distill]'` and "
            "`python scripts/distill_static_table.py`",
        )
    return np.load(path, mmap_mode="r", allow_pickle=False)


class StaticEmbedder:
    """Embed texts as the normalized mean of their tokens' rows in a static table."""

    def __init__(self, table: np.ndarray | None = None, tokenizer_path: Path | None = None) -> None:
        from tokenizers import Tokenizer

        table = load_static_table() if table is None else table
        path = tokenizer_path or STATIC_FOLDER / "tokenizer.json"
        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._table = table
        # rows a text's mean leaves out: the special tokens (a lookup per id, not a set test)
        self._usable = np.ones(len(table), dtype=bool)
        for token in ("[CLS]", "[SEP]", "[PAD]", "[UNK]"):
            found = self._tokenizer.token_to_id(token)
            if found is not None and found < len(table):
                self._usable[found] = False
        self._ids = TokenIds(self._tokenizer)
        # The text cut belongs to the embedding recipe, so it is part of the cache key.
        self.model_id = f"{STATIC_MODEL_ID}:{MAX_CHARS_PER_TEXT}c"
        self.dim = int(table.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one L2-normalized float32 row per text (zeros for texts with no tokens)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = np.array(
                self._ids.first(text[:MAX_CHARS_PER_TEXT], MAX_TOKENS_PER_TEXT), dtype=np.int64
            )
            ids = ids[ids < len(self._table)]
            ids = ids[self._usable[ids]]
            if not len(ids):
                continue
            vector = self._table[ids].astype(np.float32).mean(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[row] = vector / norm
        return out
