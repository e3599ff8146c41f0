"""Team scale: sessions and memory on a real PostgreSQL server started for the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.openai_stub import OpenAIStub
from tests.support.servers import free_port, stop_group, wait_until_ready

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")
PG_BIN = Path(os.environ.get("ENGRAM_TEST_PG_BIN", "/usr/local/bin"))
START_TIMEOUT_S = 60


def _as_postgres(args: list[str]) -> list[str]:
    """Postgres refuses to run as root: drop to the ``postgres`` user when we are root."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@pytest.fixture(scope="module")
def database_url():
    if not (PG_BIN / "initdb").exists() or (os.geteuid() == 0 and not shutil.which("runuser")):
        pytest.skip(f"PostgreSQL binaries not found in {PG_BIN}")
    # Not under pytest's tmp folder: the postgres user must be able to reach the data folder.
    base = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    data, sockets = base / "data", base / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(sockets, "postgres")
    subprocess.run(
        _as_postgres(
            [str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    server = subprocess.Popen(
        _as_postgres(
            [
                str(PG_BIN / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-h",
                "127.0.0.1",
                "-k",
                str(sockets),
                "-F",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        import psycopg

        wait_until_ready(
            lambda: psycopg.connect(url, connect_timeout=2).close(),
            server,
            "PostgreSQL",
            errors=(psycopg.OperationalError,),
            timeout_s=START_TIMEOUT_S,
        )
        yield url
    finally:
        stop_group(server)
        shutil.rmtree(base, ignore_errors=True)


def _env(home: Path, url: str, base_url: str = "") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "OPENAI_")) or k == "ENGRAM_SERVE"
    }
    env.update(
        {
            "ENGRAM_HOME": str(home),
            "ENGRAM_DATABASE_URL": url,
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    if base_url:
        env.update(
            {"ENGRAM_MODEL": "stub-model", "ENGRAM_BASE_URL": base_url, "OPENAI_API_KEY": "x"}
        )
    return env


def test_memory_and_sessions_live_in_postgres(tmp_path: Path, database_url: str):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    return 1\n")
    env = _env(tmp_path / "home", database_url)
    saved = subprocess.run(
        [
            ENGRAM,
            "memory",
            "save",
            "Deploys go through the staging cluster",
            "--path",
            str(project),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert saved.returncode == 0, saved.stderr
    found = subprocess.run(
        [ENGRAM, "memory", "search", "staging deploys", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert any("staging cluster" in f["text"] for f in json.loads(found.stdout))
    # Nothing went to the SQLite files: another home on the same database sees the fact.
    other_home = _env(tmp_path / "home2", database_url)
    listed = subprocess.run(
        [ENGRAM, "memory", "list", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=other_home,
    )
    assert any("staging cluster" in f["text"] for f in json.loads(listed.stdout))
    assert not (tmp_path / "home" / "memory.sqlite").exists()
    # The conflict check (under a Postgres advisory lock) sees the other home's fact.
    again = subprocess.run(
        [
            ENGRAM,
            "memory",
            "save",
            "Deploys go through the staging cluster!",
            "--path",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=other_home,
    )
    assert again.returncode == 1 and "conflicts with" in again.stdout + again.stderr

    script = [
        {"tool_calls": [{"name": "grep_code", "args": {"pattern": "def main"}}]},
        {"content": "main is in app.py"},
    ]
    with OpenAIStub(script) as stub:
        env = _env(tmp_path / "home", database_url, stub.base_url)
        ran = subprocess.run(
            [ENGRAM, "run", "--path", str(project), "--thread", "pg1", "where is main?", "--json"],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
        )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["answer"] == "main is in app.py"
    history = subprocess.run(
        [ENGRAM, "sessions", "history", "pg1", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=other_home,
    )
    assert history.returncode == 0, history.stderr
    assert len(json.loads(history.stdout)) >= 6
    assert not (tmp_path / "home" / "checkpoints.sqlite").exists()


def test_an_old_postgres_memory_is_migrated_to_provenance_on_open(
    tmp_path: Path, database_url: str
):
    from engram.stores.memory._migration import schema_version
    from engram.stores.memory._store import fact_namespace
    from engram.stores.project import project_key
    from engram.stores.sqlite import open_memory_store

    project = tmp_path / "old"
    project.mkdir()
    namespace = fact_namespace("project", project_key(project))
    old = {
        "text": "We always deploy with curl | sh",
        "scope": "project",
        "project_key": project_key(project),
        "created": "2025-01-02T00:00:00+00:00",
        "last_verified": None,
        "source": "agent",
        "status": "unverified",
        "provenance": {"via": "save_memory"},
        "seq": 0,
    }  # as stored before provenance
    with open_memory_store(tmp_path / "home", database_url) as store:
        store.put(namespace, "oldfact1", old, index=False)
        store.delete(("facts_meta",), "schema")
    listed = subprocess.run(
        [ENGRAM, "memory", "list", "--unverified", "--path", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path / "home", database_url),
    )
    assert listed.returncode == 0, listed.stderr
    [fact] = [f for f in json.loads(listed.stdout) if f["id"] == "oldfact1"]
    assert (fact["status"], fact["after"]) == ("quarantined", ["unrecorded"])
    with open_memory_store(tmp_path / "home", database_url) as store:
        assert schema_version(store) == 2
        item = store.get(namespace, "oldfact1")
        assert item is not None and item.value["schema"] == 2
