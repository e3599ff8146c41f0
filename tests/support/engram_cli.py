"""Run the ``engram`` command against a project, an ENGRAM_HOME and the HTTP OpenAI stub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENGRAM = str(Path(sys.executable).parent / "engram")


def run_engram(
    project: Path, home: Path, base_url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``engram ARGS --path PROJECT`` with no terminal, the stub model and hash embeddings."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    environ.update(
        {
            "ENGRAM_HOME": str(home),
            "ENGRAM_MODEL": "stub-model",
            "OPENAI_API_KEY": "x",
            "ENGRAM_BASE_URL": base_url,
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
            "COLUMNS": "200",
            **(env or {}),
        }
    )
    return subprocess.run(
        [ENGRAM, *args, "--path", str(project)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
