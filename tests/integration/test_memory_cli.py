"""`engram memory` against a real SQLite memory store: CLI round trips and concurrent writers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from engram.cli._memory_commands import register
from engram.stores.memory._conflicts import ConflictIndex

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli():
    app = typer.Typer()
    register(app)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(app, ["memory", *args])
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return invoke


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "proj.v2"
    folder.mkdir()
    return folder


def test_save_list_search_json(cli, project, tmp_path):
    p = str(project)
    saved = json.loads(cli("save", "This project uses Java 17", "--path", p, "--json").output)
    assert saved["saved"] and saved["scope"] == "project" and saved["status"] == "verified"
    cli("save", "Answer in English", "--global", "--path", p)
    other = tmp_path / "other"
    other.mkdir()
    cli("save", "Use Python 3.12", "--path", str(other))

    listed = json.loads(cli("list", "--path", p, "--json").output)
    assert [f["text"] for f in listed] == ["Answer in English", "This project uses Java 17"]

    found = json.loads(cli("search", "java version", "--path", p, "--json").output)
    assert found[0]["id"] == saved["id"]
    assert {"id", "text", "score", "scope"} <= set(found[0])
    assert json.loads(cli("search", "python", "--path", p, "--json").output) == []
    # The same folder spelled differently is the same project.
    again = json.loads(cli("search", "java", "--path", p + "/", "--json").output)
    assert [f["id"] for f in again] == [saved["id"]]


def test_conflict_is_reported_and_force_keeps_both(cli, project):
    p = str(project)
    cli("save", "This project uses Java 17", "--path", p)
    blocked = cli("save", "This project uses Java 21", "--path", p, "--json", ok=False)
    assert blocked.exit_code == 1
    report = json.loads(blocked.output)
    assert not report["saved"] and report["conflicts"][0]["text"] == "This project uses Java 17"
    cli("save", "This project uses Java 21", "--path", p, "--force")
    assert len(json.loads(cli("list", "--path", p, "--json").output)) == 2


def test_secret_is_refused(cli, project):
    result = cli(
        "save",
        "deploy token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "--path",
        str(project),
        ok=False,
    )
    assert result.exit_code == 2
    assert json.loads(cli("list", "--path", str(project), "--json").output) == []
    # The hint is about the refusal (keep where the secret lives), not an unrelated example.
    assert "never stores credentials" in result.output and "Java" not in result.output
    assert "ghp_" not in result.output
    example = result.output.split("('", 1)[1].split("')", 1)[0]
    assert cli("save", example, "--path", str(project)).exit_code == 0  # the example is saveable


def test_verify_replace_delete(cli, project):
    p = str(project)
    fact = json.loads(cli("save", "CI runs on Jenkins", "--path", p, "--json").output)
    cli("verify", fact["id"], "--path", p)
    replaced = json.loads(
        cli("replace", fact["id"], "CI runs on GitHub Actions", "--path", p, "--json").output
    )
    assert replaced["id"] == fact["id"] and replaced["text"] == "CI runs on GitHub Actions"
    cli("delete", fact["id"], "--path", p)
    assert json.loads(cli("list", "--path", p, "--json").output) == []
    assert cli("delete", fact["id"], "--path", p, ok=False).exit_code == 2


def test_export_wipe_import_round_trip(cli, project, tmp_path, monkeypatch):
    p = str(project)
    for text in ("Use Java 17", "Deploy with Helm", "Tests run with JUnit 5"):
        cli("save", text, "--path", p)
    cli("save", "Reply tersely", "--global", "--path", p)
    before = json.loads(cli("list", "--path", p, "--json").output)
    backup = tmp_path / "facts.jsonl"
    cli("export", str(backup), "--path", p)
    assert len(backup.read_text().splitlines()) == 4

    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "fresh-home"))
    assert json.loads(cli("list", "--path", p, "--json").output) == []
    report = json.loads(cli("import", str(backup), "--path", p, "--json").output)
    assert report == {"imported": 4, "skipped": []}
    after = json.loads(cli("list", "--path", p, "--json").output)
    assert sorted(after, key=lambda f: f["id"]) == sorted(before, key=lambda f: f["id"])


def test_import_minimal_lines_keeps_ids_and_batch_search(cli, project, tmp_path):
    p = str(project)
    data = tmp_path / "turns.jsonl"
    data.write_text(
        '{"id": "D1:1", "text": "Caroline: I went to a support group yesterday", '
        '"scope": "project"}\n'
        '{"id": "D1:2", "text": "Melanie: I painted a sunset last week", "scope": "project"}\n'
    )
    cli("import", str(data), "--path", p)
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "q1", "query": "support group"}\n{"id": "q2", "query": "what did Melanie paint"}\n'
    )
    out = cli("search", "--batch", str(queries), "--path", p, "-k", "1").output
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["id"], [f["id"] for f in r["results"]]) for r in rows] == [
        ("q1", ["D1:1"]),
        ("q2", ["D1:2"]),
    ]
    other = tmp_path / "elsewhere"
    other.mkdir()
    out = cli("search", "--batch", str(queries), "--path", str(other)).output
    assert all(json.loads(line)["results"] == [] for line in out.splitlines())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ('{"id": "q1", "query": "x"}\nnot json\n', "line 2 is not JSON"),
        ('{"id": "q1"}\n', 'line 1 has no "query" text'),
        ('["q1", "x"]\n', 'line 1 has no "query" text'),
    ],
)
def test_batch_search_rejects_a_bad_file_before_answering(cli, project, tmp_path, content, message):
    queries = tmp_path / "q.jsonl"
    if content is not None:
        queries.write_text(content)
    result = cli("search", "--batch", str(queries), "--path", str(project), ok=False)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert '"results"' not in result.output


WRITER = textwrap.dedent(
    """
    import sys, typer
    from typer.testing import CliRunner
    from engram.cli._memory_commands import register
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    name, project, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(count):
        result = runner.invoke(app, ["memory", "save", f"note {i} written by {name}",
                                     "--force", "--path", project])
        if result.exit_code != 0:
            print(result.output, file=sys.stderr)
            sys.exit(1)
    """
)


@pytest.mark.slow
def test_two_processes_writing_500_facts_each(cli, project, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), name, str(project), "500"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    facts = json.loads(cli("list", "--path", str(project), "--json").output)
    assert len(facts) == 1000
    assert len({f["id"] for f in facts}) == 1000
    assert {f["text"] for f in facts} == {
        f"note {i} written by {name}" for i in range(500) for name in ("alpha", "beta")
    }


SAVER = textwrap.dedent(
    """
    import json, os, sys, time, typer
    from pathlib import Path
    from typer.testing import CliRunner
    from engram.cli._memory_commands import register
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    texts, project = json.loads(open(sys.argv[1]).read()), sys.argv[2]
    Path(sys.argv[1] + f".ready{os.getpid()}").touch()
    while not Path(sys.argv[1] + ".go").exists():  # start both writers at the same instant
        time.sleep(0.005)
    saved = conflicts = 0
    for text in texts:
        result = runner.invoke(app, ["memory", "save", text, "--path", project])
        if result.exit_code == 0:
            saved += 1
        elif result.exit_code == 1 and "conflicts with" in result.output:
            conflicts += 1
        else:
            import traceback
            traceback.print_exception(result.exception)
            print(result.output, file=sys.stderr)
            sys.exit(2)
    print(json.dumps({"saved": saved, "conflicts": conflicts}))
    """
)


@pytest.mark.slow
def test_two_processes_saving_the_same_facts_store_each_once(cli, project, tmp_path):
    words = [
        "alpha",
        "bravo",
        "cobalt",
        "delta",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "indigo",
        "juniper",
        "kelp",
        "lagoon",
        "marble",
        "nectar",
        "onyx",
        "pepper",
        "quartz",
        "raven",
    ]
    texts, index = [], ConflictIndex([])
    for i in range(len(words) ** 2):
        first, second = words[i % len(words)], words[(i * 7 + 3) % len(words)]
        text = f"The {first} service stores its {second} data in bucket {first[:3]}{second}"
        if not index.matches(text):
            texts.append(text)
            index.add(text)
        if len(texts) == 120:
            break
    data = tmp_path / "texts.json"
    data.write_text(json.dumps(texts))
    script = tmp_path / "saver.py"
    script.write_text(SAVER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(data), str(project)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("texts.json.ready*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "texts.json.go").touch()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    facts = json.loads(cli("list", "--path", str(project), "--json").output)
    # Each fact was stored once; the other process was told of the conflict.
    assert sorted(f["text"] for f in facts) == sorted(texts)
    assert sum(r["saved"] for r in reports) == len(texts)
    assert sum(r["conflicts"] for r in reports) == len(texts)


def test_dense_search_over_a_large_scope_is_the_default(cli, project, tmp_path):
    data = tmp_path / "many.jsonl"
    rows = [
        {"id": f"n{i}", "text": f"note about topic{i} and item{i * 7}", "scope": "project"}
        for i in range(320)
    ]
    rows.append(
        {"id": "target", "text": "The release train leaves on Thursdays", "scope": "project"}
    )
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cli("import", str(data), "--path", str(project))
    query = "when does the release train leave"
    found = json.loads(cli("search", query, "--path", str(project), "--json").output)
    # The bundled embedder fills up the results past the one lexical match.
    assert found[0]["id"] == "target" and len(found) == 10
    lexical = json.loads(
        cli("search", query, "--no-dense", "--path", str(project), "--json").output
    )
    # Without embeddings: the match and, in a memory this large, its recorded neighbours.
    assert [f["id"] for f in lexical] == ["target", "n319", "n318"]


def test_replace_conflict_and_bracketed_text(cli, project):
    p = str(project)
    a = json.loads(cli("save", "Docs use [brackets] for options", "--path", p, "--json").output)
    b = json.loads(cli("save", "Deploys go to Fly", "--path", p, "--json").output)
    blocked = cli("replace", b["id"], "Docs use [brackets] for options!", "--path", p, ok=False)
    assert blocked.exit_code == 1
    assert f"[{a['id']}]" in blocked.output and "[brackets]" in blocked.output
    assert "engram memory replace" in blocked.output
    shown = cli("search", "brackets", "--path", p).output
    assert "[brackets]" in shown


def test_user_mistakes_get_a_message_not_a_traceback(cli, project, tmp_path):
    p = str(project)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    saved = json.loads(cli("save", "Deploys go to Fly", "--path", p, "--json").output)
    cases = [
        (["save", "   ", "--path", p], "a fact needs some text"),
        (["replace", saved["id"], " ", "--path", p], "a fact needs some text"),
        (["import", str(folder), "--path", p], "cannot read"),
        (["import", str(binary), "--path", p], "not UTF-8"),
        (["export", str(tmp_path / "missing" / "out.jsonl"), "--path", p], "cannot write"),
    ]
    for args, message in cases:
        result = cli(*args, ok=False)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), args
    # Nothing was lost on the way.
    listed = json.loads(cli("list", "--path", p, "--json").output)
    assert [f["text"] for f in listed] == ["Deploys go to Fly"]


def test_export_replaces_an_existing_backup_whole(cli, project, tmp_path):
    p = str(project)
    cli("save", "Deploys go to Fly", "--path", p)
    backup = tmp_path / "backup.jsonl"
    backup.write_text("old content\n")
    cli("export", str(backup), "--path", p)
    lines = backup.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["text"] == "Deploys go to Fly"
    assert not list(tmp_path.glob("*.partial"))


def test_markdown_export_writes_the_facts_to_stdout_or_the_named_file(
    cli, project, tmp_path, monkeypatch
):
    p = str(project)
    monkeypatch.chdir(project)
    saved = json.loads(cli("save", "The database is PostgreSQL 15", "--path", p, "--json").output)
    cli("save", "Reply tersely", "--global", "--path", p)
    shown = cli("export", "--format", "md", "--path", p).stdout
    assert shown.startswith("# engram facts")
    assert "## Project facts (1)" in shown and "- The database is PostgreSQL 15" in shown
    assert "## Global facts" in shown and "- Reply tersely" in shown
    assert f"`{saved['id']}`" in shown
    assert list(project.iterdir()) == []  # nothing written into the project
    target = tmp_path / "facts.md"
    cli("export", str(target), "--format", "md", "--path", p)
    assert target.read_text(encoding="utf-8") == shown
    refused = cli("import", str(target), "--format", "md", "--path", p, ok=False)
    assert refused.exit_code == 2 and "cannot be restored" in refused.stderr
    no_dir = cli("export", "--format", "experience", "--path", p, ok=False)
    assert no_dir.exit_code == 2 and "no folder was given" in no_dir.stderr
    assert not (project / "memory").exists()


def test_profile_says_why_each_record_was_left_out(project):
    from engram.cli._app import app

    runner = CliRunner()
    for n, outcome in enumerate(["success", "success", "failure"]):
        added = runner.invoke(
            app,
            ["memory", "episodes", "add", f"refactor payments {n}", "--task-type", "refactor"]
            + ["--outcome", outcome, "--path", str(project)],
        )
        assert added.exit_code == 0, added.output
    shown = runner.invoke(app, ["profile", "refactor the payment module", "--path", str(project)])
    assert shown.exit_code == 0, shown.output
    assert "medium risk" in shown.output and "injects 0 experience item(s)" in shown.output
    assert "left out (2):" in shown.output
    assert "episode: successes: only failures are injected" in shown.output
    assert "failures are injected at high risk only (this task: medium)" in shown.output
