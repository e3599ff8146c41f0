"""Postgres for sessions and memory: a checked URL, one clear error per failure, no password.

Every error about the server names it as ``host:port/database`` (never the URL, which may
carry a password) and passes the driver's own text through ``mask_url_passwords``. The saver
and the store raise ``BackendUnavailableError`` when the server goes away while they are in
use, so a turn can stop before its next step (``engram.cli``) instead of running on unsaved.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from engram.stores._errors import BackendUnavailableError, StoreError
from engram.stores._url_masking import mask_url_passwords
from engram.stores.sqlite._guarded import GuardedSaverMixin, GuardedStoreMixin

URL_HINT = (
    "use postgresql://USER:PASSWORD@HOST:5432/DATABASE (percent-encode @, : and / in the "
    "password), or unset ENGRAM_DATABASE_URL to keep sessions and memory in SQLite"
)
UNREACHABLE_HINT = (
    "start the Postgres server (or fix ENGRAM_DATABASE_URL), then run the command again; "
    "`engram doctor` checks it"
)
DOCTOR_TIMEOUT_S = 5
"""Seconds ``engram doctor`` waits for the server to answer."""
ENGRAM_TABLES = (
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "checkpoint_migrations",
    "store",
    "store_migrations",
)
"""The tables LangGraph's Postgres saver and store create (``setup``) on first use."""
PIPELINE_NOISE = "error ignored terminating"
"""What psycopg logs about a pipeline left behind by a lost connection (already reported)."""


class _PipelineNoise(logging.Filter):
    """Drop psycopg's warning about a lost connection's pipeline: the error itself is raised."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but the pipeline-teardown warning."""
        return not str(record.msg).startswith(PIPELINE_NOISE)


def quiet_driver_noise() -> None:
    """Keep psycopg's teardown warnings of a lost connection off the terminal (once)."""
    driver = logging.getLogger("psycopg")
    if not any(isinstance(f, _PipelineNoise) for f in driver.filters):
        driver.addFilter(_PipelineNoise())


def _conninfo(url: str) -> dict[str, Any]:
    """Parse a connection URL or keyword string, refusing one psycopg cannot use.

    Raises:
        BackendUnavailableError: The URL is malformed (the reason is given, its password masked).
    """
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        parsed = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        reason = mask_url_passwords(str(exc).splitlines()[0], [url])
        raise BackendUnavailableError(
            f"ENGRAM_DATABASE_URL is not a valid Postgres connection URL ({reason})",
            hint=URL_HINT,
        ) from None  # the driver's chained error quotes the URL, password included
    if "@" in str(parsed.get("host") or ""):
        raise BackendUnavailableError(
            "ENGRAM_DATABASE_URL is not a valid Postgres connection URL (its password holds "
            "an unescaped @)",
            hint=URL_HINT,
        )
    return parsed


def postgres_server(url: str) -> str:
    """Return where a Postgres URL points, as ``host:port/database`` (no user, no password)."""
    try:
        parsed = _conninfo(url)
    except BackendUnavailableError:
        return "the server ENGRAM_DATABASE_URL names"
    host = str(parsed.get("host") or parsed.get("hostaddr") or "localhost")
    database = parsed.get("dbname") or parsed.get("user")
    return f"{host}:{parsed.get('port') or 5432}" + (f"/{database}" if database else "")


def check_database_url(url: str) -> None:
    """Refuse a malformed ``ENGRAM_DATABASE_URL`` before any connection is tried.

    Raises:
        BackendUnavailableError: The driver is missing or the URL is malformed.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise BackendUnavailableError(
            "Postgres support is not installed", hint="pip install 'engram[postgres]'"
        ) from exc
    _conninfo(url)


@contextmanager
def postgres_errors(url: str) -> Iterator[None]:
    """Turn the driver's connection failures into one ``BackendUnavailableError``.

    engram's own errors pass unchanged (so nested openers never say the same thing twice);
    so does every error that is not about the connection.
    """
    import psycopg

    try:
        yield
    except StoreError:
        raise
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        detail = mask_url_passwords(str(exc).strip().splitlines()[0] if str(exc) else "", [url])
        raise BackendUnavailableError(
            f"cannot reach Postgres at {postgres_server(url)}" + (f": {detail}" if detail else ""),
            hint=UNREACHABLE_HINT,
        ) from None  # the chained driver error may quote the URL


class GuardedPostgresSaverMixin(GuardedSaverMixin):
    """Checkpoint calls that raise ``BackendUnavailableError`` when the server goes.

    Mixed in before LangGraph's ``PostgresSaver`` (``open_checkpointer`` builds the class,
    as ``langgraph.checkpoint.postgres`` is imported only when Postgres is configured).
    """

    url: str = ""

    def guard(self) -> AbstractContextManager[None]:
        """Turn a lost or refused connection into ``BackendUnavailableError``."""
        return postgres_errors(self.url)


class GuardedPostgresStoreMixin(GuardedStoreMixin):
    """Memory reads and writes that raise ``BackendUnavailableError`` when the server goes."""

    url: str = ""

    def guard(self) -> AbstractContextManager[None]:
        """Turn a lost or refused connection into ``BackendUnavailableError``."""
        return postgres_errors(self.url)


@dataclass(frozen=True)
class PostgresReport:
    """What ``engram doctor`` learns from the configured Postgres server."""

    server: str
    """``host:port/database``: where the URL points (never the URL itself)."""
    version: str
    missing_tables: tuple[str, ...]


def probe_postgres(url: str) -> PostgresReport:
    """Connect once and read the server's version and which of engram's tables exist.

    Raises:
        BackendUnavailableError: The URL is malformed or the server cannot be reached.
    """
    check_database_url(url)
    import psycopg

    with postgres_errors(url), psycopg.connect(url, connect_timeout=DOCTOR_TIMEOUT_S) as conn:
        version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        missing = tuple(
            table
            for table in ENGRAM_TABLES
            if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,)
        )
    return PostgresReport(postgres_server(url), version, missing)
