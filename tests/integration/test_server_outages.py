"""Servers that fail: a bad database URL, Postgres lost mid-turn, Chroma down, doctor's checks.

Real servers: PostgreSQL from the PATH binaries (one per module, stopped and started by the
tests) and ``chroma run``; the real ``engram`` command against the HTTP OpenAI stub.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.db_servers import (
    PASSWORD,
    ChromaServer,
    PostgresServer,
    skip_without_postgres,
)
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub
from tests.support.servers import free_port

pytestmark = pytest.mark.integration

NO_MODEL = "http://127.0.0.1:9/v1"
"""A model endpoint for commands that never call the model."""
CHROMA_PASSWORD = "chroma-Secret-77ab"


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    skip_without_postgres()
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture()
def live_postgres(postgres: PostgresServer) -> PostgresServer:
    """The module's server, running when the test starts (an earlier test may stop it)."""
    postgres.start()
    return postgres


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path_factory.mktemp("chroma"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture()
def live_chroma(chroma: ChromaServer) -> ChromaServer:
    chroma.start()
    return chroma


def _said(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "mail.py").write_text(
        'def send_email(message):\n    """Send an email message."""\n    return message\n'
    )
    (root / "db.py").write_text("def query_db(sql):\n    return sql\n")
    return root


def _chroma_url(server: ChromaServer) -> str:
    return server.url.replace("http://", f"http://engram:{CHROMA_PASSWORD}@")


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://bob:{PASSWORD}@127.0.0.1:5432/db?frobnicate=1",  # unknown option
        f"postgresql://bob:{PASSWORD}@[::1/db",  # unclosed IPv6 host
        f"postgresql://bob:{PASSWORD}@pieces@127.0.0.1/db",  # an unescaped @ in the password
        f"bob:{PASSWORD}@127.0.0.1",  # no scheme
    ],
)
def test_a_malformed_database_url_is_refused_clearly_without_its_password(tmp_path: Path, url: str):
    project = _project(tmp_path / "p")
    listed = run_engram(
        project, tmp_path / "home", NO_MODEL, "memory", "list", env={"ENGRAM_DATABASE_URL": url}
    )
    said = _said(listed)
    assert listed.returncode != 0
    assert "Traceback" not in said
    assert PASSWORD not in said and "pieces" not in said
    assert "ENGRAM_DATABASE_URL is not a valid Postgres connection URL" in said
    assert "hint: use postgresql://USER:PASSWORD@HOST:5432/DATABASE" in said


@pytest.mark.parametrize(
    "form",
    [
        "postgresql://bob:{password}@127.0.0.1:{port}/team",
        "host=127.0.0.1 port={port} dbname=team user=bob password={password}",
    ],
)
def test_an_unreachable_database_is_named_once_without_its_password(tmp_path: Path, form: str):
    port = free_port()
    url = form.format(password=PASSWORD, port=port)
    project = _project(tmp_path / "p")
    listed = run_engram(
        project, tmp_path / "home", NO_MODEL, "memory", "list", env={"ENGRAM_DATABASE_URL": url}
    )
    said = _said(listed)
    assert listed.returncode != 0 and "Traceback" not in said and PASSWORD not in said
    assert said.count(f"cannot reach Postgres at 127.0.0.1:{port}/team") == 1


def test_losing_postgres_mid_turn_stops_before_the_tool_runs_and_resume_finishes(
    tmp_path: Path, live_postgres: PostgresServer
):
    project = _project(tmp_path / "p")
    home = tmp_path / "home"
    env = {"ENGRAM_DATABASE_URL": live_postgres.url}
    write = {"tool_calls": [{"name": "write_file", "args": {"path": "made.txt", "content": "x"}}]}

    def server_dies_during_the_model_call(body: dict[str, Any]) -> dict[str, Any]:
        live_postgres.stop()
        return write

    with OpenAIStub(server_dies_during_the_model_call) as stub:
        ran = run_engram(
            project, home, stub.base_url, "run", "--policy", "yolo", "make it", env=env
        )
    said = _said(ran)
    assert ran.returncode != 0
    assert not (project / "made.txt").exists()  # the tool did not run unrecorded
    assert said.count("cannot reach Postgres") == 1, said
    assert "the turn stopped there: no further step (edit, command) runs unsaved" in said
    assert "Traceback" not in said and "error ignored" not in said and PASSWORD not in said
    resume = re.search(r"`engram sessions resume (\S+)`", said)
    assert resume is not None, said

    live_postgres.start()
    with OpenAIStub([write, {"content": "made it"}]) as stub:
        resumed = run_engram(
            project, home, stub.base_url, "sessions", "resume", resume.group(1), env=env
        )
    assert resumed.returncode == 0, _said(resumed)
    assert (project / "made.txt").read_text() == "x"
    assert "made it" in resumed.stdout


def test_with_chroma_down_search_and_context_answer_from_exact_and_bm25(
    tmp_path: Path, live_chroma: ChromaServer
):
    project = _project(tmp_path / "p")
    home = tmp_path / "home"
    env = {"ENGRAM_CHROMA_URL": _chroma_url(live_chroma)}
    indexed = run_engram(project, home, NO_MODEL, "index", env=env)
    assert indexed.returncode == 0, _said(indexed)
    live_chroma.stop()
    note = f"the Chroma server at http://engram:***@127.0.0.1:{live_chroma.port} cannot be reached"
    for command in (
        ["search", "send_email message"],
        ["search", "send_email message", "--files"],
        ["context", "fix send_email"],
    ):
        answered = run_engram(project, home, NO_MODEL, *command, env=env)
        said = _said(answered)
        assert answered.returncode == 0, said
        assert "mail.py" in answered.stdout, said
        assert note in said and "exact and BM25 matches only" in said
        assert "start the Chroma server" in said
        assert CHROMA_PASSWORD not in said
        assert "no code evidence reached the pack" not in said


def test_doctor_checks_the_servers_it_uses_and_names_the_one_down(
    tmp_path: Path, live_postgres: PostgresServer, live_chroma: ChromaServer
):
    project = _project(tmp_path / "p")
    home = tmp_path / "home"
    env = {
        "ENGRAM_DATABASE_URL": live_postgres.url,
        "ENGRAM_CHROMA_URL": _chroma_url(live_chroma),
        "ENGRAM_MODEL": "",  # no model: its check is "missing", not a failure
    }
    assert run_engram(project, home, NO_MODEL, "index", env=env).returncode == 0
    for opens_the_tables in (["memory", "list"], ["sessions", "list"]):
        assert run_engram(project, home, NO_MODEL, *opens_the_tables, env=env).returncode == 0

    def doctor() -> tuple[int, dict[str, dict[str, str]], str]:
        checked = run_engram(project, home, NO_MODEL, "doctor", "--json", env=env)
        assert "Traceback" not in checked.stderr
        assert PASSWORD not in _said(checked) and CHROMA_PASSWORD not in _said(checked)
        import json

        rows = {row["store"]: row for row in json.loads(checked.stdout)}
        return checked.returncode, rows, _said(checked)

    code, rows, said = doctor()
    assert code == 0, said
    assert rows["postgres"]["status"] == "ok"
    assert rows["postgres"]["path"] == f"127.0.0.1:{live_postgres.port}/postgres"
    assert "PostgreSQL 15" in rows["postgres"]["detail"]
    assert "tables present" in rows["postgres"]["detail"]
    assert rows["chroma"]["status"] == "ok" and "Chroma 1." in rows["chroma"]["detail"]
    assert rows["code index"]["detail"] == "2 of 2 chunks have vectors on Chroma"
    assert "memory" not in rows and "sessions" not in rows  # no SQLite files it never uses

    live_chroma.stop()
    code, rows, said = doctor()
    assert code != 0
    assert rows["chroma"]["status"] == "broken"
    assert f"cannot reach Chroma at http://engram:***@127.0.0.1:{live_chroma.port}" in said
    assert rows["postgres"]["status"] == "ok"

    live_chroma.start()
    live_postgres.stop()
    code, rows, said = doctor()
    assert code != 0
    assert rows["postgres"]["status"] == "broken"
    assert f"cannot reach Postgres at 127.0.0.1:{live_postgres.port}/postgres" in said
    assert rows["chroma"]["status"] == "ok"


def test_vectors_lost_on_the_server_are_told_and_embedded_again(
    tmp_path: Path, live_chroma: ChromaServer
):
    """Another client removed some of this checkout's vectors: doctor and index say so."""
    import hashlib
    import json

    import chromadb

    from engram.stores.project import project_identity

    project = _project(tmp_path / "p")
    for n in range(6):
        (project / f"extra{n}.py").write_text(f"def helper_{n}():\n    return {n}\n")
    home = tmp_path / "home"
    env = {"ENGRAM_CHROMA_URL": live_chroma.url, "ENGRAM_MODEL": ""}
    first = run_engram(project, home, NO_MODEL, "index", "--json", env=env)
    assert first.returncode == 0, first.stderr
    chunks = json.loads(first.stdout)["chunks"]
    host, port = live_chroma.url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    tag = hashlib.sha1(project_identity(project).key.encode()).hexdigest()[:12]
    (collection,) = [c for c in client.list_collections() if c.name.endswith(f"_{tag}")]
    stored = collection.get(include=[])["ids"]
    collection.delete(ids=stored[:3])

    checked = run_engram(project, home, NO_MODEL, "doctor", "--json", "--no-repair", env=env)
    rows = {row["store"]: row for row in json.loads(checked.stdout)}
    assert checked.returncode != 0
    assert rows["code index"]["status"] == "broken"
    assert (
        f"3 of {chunks} chunks have no vector on the Chroma server" in rows["code index"]["detail"]
    )
    again = run_engram(project, home, NO_MODEL, "index", "--json", env=env)
    assert json.loads(again.stdout)["new_chunks"] == 3  # embedded again, nothing else
    checked = run_engram(project, home, NO_MODEL, "doctor", "--json", "--no-repair", env=env)
    assert checked.returncode == 0, checked.stdout


def test_index_gc_collects_on_a_server_and_is_refused_without_one(
    tmp_path: Path, live_chroma: ChromaServer
):
    import json

    project = _project(tmp_path / "p")
    home = tmp_path / "home"
    refused = run_engram(project, home, NO_MODEL, "index", "--gc", env={"ENGRAM_MODEL": ""})
    assert refused.returncode == 2 and "none is configured" in refused.stderr
    assert "Traceback" not in refused.stderr
    env = {"ENGRAM_CHROMA_URL": live_chroma.url, "ENGRAM_MODEL": ""}
    done = run_engram(project, home, NO_MODEL, "index", "--gc", "--json", env=env)
    assert done.returncode == 0, done.stderr
    collected = json.loads(done.stdout)["gc"]
    assert collected["removed"] == 0 and collected["leases"] >= 1
    said = run_engram(project, home, NO_MODEL, "index", "--gc", env=env)
    assert "collected the server's vectors: removed 0 of" in said.stdout
