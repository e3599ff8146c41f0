"""The environment benches give the ``engram`` processes they time: the warm server off.

A bench that times or checks whole ``engram`` processes must run each one cold and in its own
process, as ``ENGRAM_SERVE=off`` makes it: forwarded to a warm server (``engram serve``), a
run would measure the server, and a fresh ``ENGRAM_HOME`` per run would leave a background
server behind each. ``bench/speed/serve.py`` compares the two on purpose and sets it itself.
"""

from __future__ import annotations

from collections.abc import Mapping

SERVE_OFF = "off"


def serve_off(env: Mapping[str, str]) -> dict[str, str]:
    """Return a copy of ``env`` in which ``engram`` runs every command in its own process."""
    return {**env, "ENGRAM_SERVE": SERVE_OFF}
