"""CLI: engram profile (JSON contract) and memory strategies|patterns|episodes management."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from engram.cli._experience_commands import register

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    memory = typer.Typer()
    app.add_typer(memory, name="memory")
    register(app, memory)
    return app


def _json(app, *args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_profile_json_contract(tmp_path):
    app = _app()
    data = _json(app, "profile", "Add OAuth login to api/auth.py", "--path", str(tmp_path))
    for key in ("task_type", "risk", "reasons", "injected", "tokens"):
        assert key in data
    assert data["task_type"] == "feature" and data["risk"] == "high"
    assert data["injected"] == [] and data["tokens"] == 0


def test_management_round_trip_and_profile_injection(tmp_path):
    app = _app()
    p = ["--path", str(tmp_path)]
    s = _json(
        app,
        "memory",
        "strategies",
        "add",
        "Prepare a rollback plan",
        "--applies-to",
        "production,ops",
        "--priority",
        "high",
        *p,
    )
    pat = _json(
        app,
        "memory",
        "patterns",
        "add",
        "Unreviewed prod change",
        "--production",
        "yes",
        "--prevention",
        "get a review",
        "--confidence",
        "4",
        *p,
    )
    ep = _json(
        app,
        "memory",
        "episodes",
        "add",
        "Deploy broke checkout",
        "--task-type",
        "ops",
        "--outcome",
        "failure",
        "--lesson",
        "stage first",
        "--severity",
        "1",
        *p,
    )
    assert _json(app, "memory", "patterns", "show", pat["id"], *p)["trigger"]["production"]
    assert [r["id"] for r in _json(app, "memory", "strategies", "list", *p)] == [s["id"]]

    profile = _json(app, "profile", "Deploy the hotfix to production", *p)
    injected = {(i["kind"], i["id"]) for i in profile["injected"]}
    assert injected == {("strategy", s["id"]), ("pattern", pat["id"]), ("episode", ep["id"])}
    assert profile["tokens"] > 0 and "rollback" in profile["memory_block"]

    edited = _json(app, "memory", "patterns", "edit", pat["id"], "--status", "retired", *p)
    assert edited["status"] == "retired"
    assert _json(app, "memory", "patterns", "list", *p) == []
    assert len(_json(app, "memory", "patterns", "list", "--all", *p)) == 1
    _json(app, "memory", "episodes", "delete", ep["id"], *p)
    assert _json(app, "memory", "episodes", "list", *p) == []


def test_bad_values_and_unknown_ids_fail_cleanly(tmp_path):
    app = _app()
    p = ["--path", str(tmp_path)]
    bad = runner.invoke(app, ["memory", "patterns", "add", "x", "--confidence", "9", *p])
    assert bad.exit_code == 2 and "confidence" in bad.output
    missing = runner.invoke(app, ["memory", "episodes", "show", "ep-nope", *p])
    assert missing.exit_code == 2


def test_markdown_export_import_through_the_memory_group(tmp_path):
    from engram.cli._memory_commands import register as register_memory

    app = typer.Typer()
    register(app, register_memory(app))
    p = ["--path", str(tmp_path / "proj")]
    (tmp_path / "proj").mkdir()
    pat = _json(
        app,
        "memory",
        "patterns",
        "add",
        "Schema change without backfill plan",
        "--features",
        "schema",
        "--prevention",
        "batch it\n## keep this line",
        *p,
    )
    ep = _json(
        app,
        "memory",
        "episodes",
        "add",
        "orders migration locked table",
        "--outcome",
        "failure",
        "--severity",
        "1",
        *p,
    )
    out = tmp_path / "export"
    result = runner.invoke(app, ["memory", "export", str(out), "--format", "experience", *p])
    assert result.exit_code == 0, result.output
    assert (out / "memory" / "patterns" / f"{pat['id']}.md").exists()
    before = [
        _json(app, "memory", "patterns", "list", "--all", *p),
        _json(app, "memory", "episodes", "list", *p),
    ]
    assert len(before[0]) == 1 and len(before[1]) == 1
    _json(app, "memory", "patterns", "delete", pat["id"], *p)
    _json(app, "memory", "episodes", "delete", ep["id"], *p)
    result = runner.invoke(app, ["memory", "import", str(out), "--format", "experience", *p])
    assert result.exit_code == 0, result.output
    after = [
        _json(app, "memory", "patterns", "list", "--all", *p),
        _json(app, "memory", "episodes", "list", *p),
    ]
    assert after == before


def test_an_empty_list_says_so_instead_of_printing_an_empty_table(tmp_path):
    app = _app()
    for kind in ("strategies", "patterns", "episodes"):
        result = runner.invoke(app, ["memory", kind, "list", "--path", str(tmp_path)])
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"no {kind} in this project yet"), result.stdout
        assert "─" not in result.stdout and "━" not in result.stdout
