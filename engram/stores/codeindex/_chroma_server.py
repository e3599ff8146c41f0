"""Ask a Chroma server whether it is up and which version it runs (``engram doctor``)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from engram.stores._errors import BackendUnavailableError
from engram.stores._url_masking import mask_url_passwords
from engram.stores.codeindex._chroma_import import import_chromadb

CHROMA_HINT = "start the Chroma server, or unset ENGRAM_CHROMA_URL for the embedded index"
DEFAULT_PORTS = {"http": 8000, "https": 443}


@dataclass(frozen=True)
class ChromaReport:
    """What a Chroma server says about itself."""

    server: str
    """The server's URL, password masked."""
    version: str


def probe_chroma(url: str) -> ChromaReport:
    """Send the server a heartbeat and read its version.

    Raises:
        BackendUnavailableError: The server does not answer (the message names it, masked).
    """
    chromadb = import_chromadb()
    from chromadb.config import Settings

    server = mask_url_passwords(url, [url])
    parsed = urlparse(url)
    try:
        client = chromadb.HttpClient(
            host=parsed.hostname or "localhost",
            port=parsed.port or DEFAULT_PORTS.get(parsed.scheme, DEFAULT_PORTS["http"]),
            ssl=parsed.scheme == "https",
            settings=Settings(anonymized_telemetry=False, allow_reset=False),
        )
        client.heartbeat()
        version = str(client.get_version())
    except Exception as exc:  # chromadb raises ValueError, httpx and its own errors alike
        reason = mask_url_passwords(str(exc), [url])
        raise BackendUnavailableError(
            f"cannot reach Chroma at {server}: {reason}", hint=CHROMA_HINT
        ) from None
    return ChromaReport(server, version)
