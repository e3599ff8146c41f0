"""Recall and false-positive rate of the secrets detector on a corpus of realistic formats.

The corpus (``secrets_corpus.jsonl``) holds fake but well-formed credentials of many
providers and phrasings, and look-alike non-secrets (lockfile hashes, UUIDs, git SHAs,
base64 images, placeholders, long identifiers). Run it as a module, so the name of this file
does not shadow the standard library's ``secrets``:

    .venv/bin/python -m bench.reliability.secrets [--show-misses]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from engram.stores import find_secret

CORPUS = Path(__file__).with_name("secrets_corpus.jsonl")


@dataclass(frozen=True)
class Score:
    """How the detector did on the corpus."""

    secrets: int
    found: int
    clean: int
    false_alarms: int
    missed: tuple[tuple[str, str], ...]
    """(kind, text) of secrets not found."""
    flagged: tuple[tuple[str, str, str], ...]
    """(kind, text, detector's kind) of non-secrets reported as secrets."""

    @property
    def recall(self) -> float:
        """Share of secrets found."""
        return self.found / self.secrets if self.secrets else 1.0

    @property
    def false_positive_rate(self) -> float:
        """Share of non-secrets reported as secrets."""
        return self.false_alarms / self.clean if self.clean else 0.0


def load_corpus(path: Path = CORPUS) -> list[dict[str, object]]:
    """Return the corpus records: ``{"secret": bool, "kind": str, "text": str}``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def score(records: list[dict[str, object]]) -> Score:
    """Run the detector over every record and count hits, misses and false alarms."""
    missed: list[tuple[str, str]] = []
    flagged: list[tuple[str, str, str]] = []
    secrets = sum(1 for r in records if r["secret"])
    for record in records:
        text, kind = str(record["text"]), str(record["kind"])
        found = find_secret(text)
        if record["secret"] and found is None:
            missed.append((kind, text))
        elif not record["secret"] and found is not None:
            flagged.append((kind, text, found))
    return Score(
        secrets,
        secrets - len(missed),
        len(records) - secrets,
        len(flagged),
        tuple(missed),
        tuple(flagged),
    )


def main(argv: list[str] | None = None) -> int:
    """Print recall and false-positive rate; list misses with ``--show-misses``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    result = score(load_corpus(args.corpus))
    print(f"secrets found   {result.found}/{result.secrets}  recall {result.recall:.3f}")  # noqa: T201
    print(
        f"false positives {result.false_alarms}/{result.clean}  "  # noqa: T201
        f"rate {result.false_positive_rate:.3f}"
    )
    if args.show_misses:
        for kind, text in result.missed:
            print(f"  missed [{kind}] {text[:100]}")  # noqa: T201
        for kind, text, found in result.flagged:
            print(f"  false alarm [{kind}] as {found}: {text[:100]}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
