"""Redaction of tool output: detect-secrets' service plugins, engram's own rules, and both.

Measured on the secrets corpus (``secrets_corpus.jsonl``) and on ``redaction_heldout.jsonl``,
formats and look-alikes written for this measurement and never tuned on. A secret line counts
as redacted when at least one span was replaced and the detector finds nothing left; a clean
line counts as a false alarm when anything in it was replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

from engram.stores import _redaction as redaction
from engram.stores import find_secret

HERE = Path(__file__).resolve().parent
SETS = {"corpus": HERE / "secrets_corpus.jsonl", "held-out": HERE / "redaction_heldout.jsonl"}

Row = tuple[str, int, int, list[str]]


def _service_only(text: str) -> int:
    return sum(1 for _, pattern in redaction.service_patterns() for _ in pattern.finditer(text))


DETECTORS = {
    "detect-secrets": _service_only,
    "engram rules": lambda text: redaction.redact_secrets(text, services=False)[1],
    "both": lambda text: redaction.redact_secrets(text)[1],
}


def main() -> list[Row]:
    """Print recall and false alarms per detector and set; rows for the combined detector."""
    rows: list[Row] = []
    print(f"{'set':<9} {'detector':<15} {'redacted':>9} {'false alarms':>13}")
    for name, path in SETS.items():
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        secrets = [r["text"] for r in lines if r["secret"]]
        clean = [r["text"] for r in lines if not r["secret"]]
        for label, count in DETECTORS.items():
            hits = [t for t in secrets if count(t)]
            alarms = [t for t in clean if count(t)]
            print(
                f"{name:<9} {label:<15} {len(hits):>4}/{len(secrets):<4} "
                f"{len(alarms):>6}/{len(clean):<6}"
            )
            if label == "both":
                left = [t for t in hits if find_secret(redaction.redact_secrets(t)[0])]
                missed = [t[:60] for t in secrets if t not in hits]
                rows.append(
                    (
                        f"redaction {name}",
                        len(secrets),
                        len(hits) - len(left),
                        [f"missed: {m}" for m in missed],
                    )
                )
                rows.append(
                    (
                        f"no false alarm {name}",
                        len(clean),
                        len(clean) - len(alarms),
                        [f"redacted: {a[:60]}" for a in alarms],
                    )
                )
    return rows


if __name__ == "__main__":
    main()
