"""`engram index` / `engram search` through Typer: JSON contract, exact mode without index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from engram.cli._index_commands import register

pytestmark = pytest.mark.integration

CHUNK_KEYS = {"path", "score", "start_line", "end_line", "symbol", "kind", "source"}


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    register(app)
    return app


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "hash")
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cache.py").write_text(
        "class LruCache:\n    def evict_oldest(self):\n        return self.items.popitem()\n"
    )
    (root / "pkg" / "http.py").write_text(
        "def fetch_page(url, retries=3):\n    return download(url, retries)\n"
    )
    (root / "notes.md").write_text("Cache eviction uses the oldest entry first.\n")
    return root


def run_json(app, args):
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_exact_search_works_without_an_index(app, project):
    rows = run_json(app, ["search", "evict_oldest", "--mode", "exact", "--path", str(project)])
    assert rows[0]["path"] == "pkg/cache.py" and set(rows[0]) == CHUNK_KEYS
    assert rows[0]["symbol"] == "LruCache.evict_oldest(self)" and rows[0]["source"] == "exact"
    assert not (project / ".engram").exists()


def test_index_then_search_json_contract(app, project):
    summary = run_json(app, ["index", str(project)])
    assert summary["files"] == 3 and summary["chunks"] >= 4 and summary["parsed_files"] == 3
    assert {"embedded", "cache_hits", "seconds", "graph"} <= set(summary)
    rows = run_json(app, ["search", "fetch a page with retries", "--path", str(project), "-k", "2"])
    assert len(rows) == 2 and all(set(r) == CHUNK_KEYS for r in rows)
    assert rows[0]["path"] == "pkg/http.py" and rows[0]["source"] == "fused"
    assert rows[0]["score"] >= rows[1]["score"]
    semantic = run_json(
        app, ["search", "cache eviction", "--mode", "semantic", "--path", str(project)]
    )
    assert {r["source"] for r in semantic} == {"dense"}
    files = run_json(app, ["search", "cache eviction oldest", "--files", "--path", str(project)])
    assert [f["path"] for f in files] == sorted(
        {f["path"] for f in files}, key=[f["path"] for f in files].index
    )
    assert set(files[0]) == {"path", "score", "reasons"}
    assert files[0]["path"] in {"pkg/cache.py", "notes.md"}
    again = run_json(app, ["index", str(project)])
    assert again["parsed_files"] == 0 and again["new_chunks"] == 0


def test_hybrid_without_index_falls_back_to_exact_with_a_note(app, project):
    result = CliRunner().invoke(app, ["search", "fetch_page", "--path", str(project), "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert rows[0]["source"] == "exact" and "engram index" in result.stderr


def test_semantic_without_index_fails_with_a_hint(app, project):
    result = CliRunner().invoke(app, ["search", "x", "--mode", "semantic", "--path", str(project)])
    assert result.exit_code == 2 and "engram index" in result.stderr


def test_unknown_mode_is_rejected(app, project):
    result = CliRunner().invoke(app, ["search", "x", "--mode", "fuzzy", "--path", str(project)])
    assert result.exit_code == 2 and "unknown mode" in result.stderr


def test_search_says_when_the_index_was_embedded_with_another_model(app, project, monkeypatch):
    run_json(app, ["index", str(project)])  # embedded with the hash test embedder
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "default")
    result = CliRunner().invoke(
        app, ["search", "oldest cache entry", "--path", str(project), "--json"]
    )
    assert result.exit_code == 0, result.output
    note = " ".join(result.stderr.split())
    assert "embedded with hash-" in note and "engram index" in note
    assert json.loads(result.stdout)  # lexical results still come
    run_json(app, ["index", str(project)])  # re-embeds with the bundled embedder
    again = CliRunner().invoke(app, ["search", "oldest cache entry", "--path", str(project)])
    assert again.exit_code == 0 and "embedded with" not in again.stderr


def test_exact_search_finds_a_query_with_a_slash_literally(app, project):
    (project / "pkg" / "ratio.py").write_text("def tenth(percent):\n    return percent / 10\n")
    rows = run_json(app, ["search", "percent / 10", "--mode", "exact", "--path", str(project)])
    assert [(r["path"], r["symbol"]) for r in rows] == [("pkg/ratio.py", "tenth(percent)")]
    # a term that finds nothing falls back to the query as typed
    (project / "pkg" / "ratio.py").write_text("x = total/count_all\n")
    rows = run_json(app, ["search", "total/count", "--mode", "exact", "--path", str(project)])
    assert [r["path"] for r in rows] == ["pkg/ratio.py"]


def test_index_takes_the_project_as_path_or_as_the_path_option(app, project, tmp_path):
    summary = run_json(app, ["index", "--path", str(project)])
    assert summary["files"] == 3
    same = run_json(app, ["index", str(project), "--path", str(project)])
    assert same["parsed_files"] == 0
    other = tmp_path / "other"
    other.mkdir()
    both = CliRunner().invoke(app, ["index", str(project), "--path", str(other)])
    assert both.exit_code == 2 and "give the project once" in " ".join(both.stderr.split())


def test_history_is_mined_by_index_and_its_absence_is_a_note(app, project, tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above
    summary = run_json(app, ["index", str(project)])
    assert summary["history"]["commits"] == 0
    assert "not a git checkout" in summary["history"]["note"]
    result = CliRunner().invoke(
        app, ["search", "cache eviction", "--files", "--path", str(project)]
    )
    assert result.exit_code == 0 and "not a git checkout" in " ".join(result.stderr.split())
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Dev")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "dev@example.com")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fix: cache eviction"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    summary = run_json(app, ["index", str(project)])
    assert summary["history"] == {
        "commits": 1,
        "new_commits": 1,
        "seconds": summary["history"]["seconds"],
        "note": "",
    }
    result = CliRunner().invoke(
        app, ["search", "cache eviction", "--files", "--path", str(project)]
    )
    assert result.exit_code == 0 and "history" not in result.stderr
    assert not list(project.rglob("history.json"))  # kept in the state folder, not the tree


def test_search_says_when_a_file_it_shows_changed_since_the_index(app, project):
    run_json(app, ["index", str(project)])
    fresh = CliRunner().invoke(app, ["search", "fetch_page retries", "--path", str(project)])
    assert fresh.exit_code == 0 and "changed since the last `engram index`" not in fresh.output
    page = project / "pkg" / "http.py"
    page.write_text("\n\n" + page.read_text())  # every line moved down two
    stale = CliRunner().invoke(app, ["search", "fetch_page retries", "--path", str(project)])
    assert stale.exit_code == 0
    assert "pkg/http.py changed since the last `engram index`" in stale.output
    assert "pkg/cache.py changed" not in stale.output
    run_json(app, ["index", str(project)])
    again = CliRunner().invoke(app, ["search", "fetch_page retries", "--path", str(project)])
    assert "changed since the last `engram index`" not in again.output


def test_index_parses_each_code_file_once_for_both_indexes(app, project, monkeypatch):
    from engram.stores.codeindex import _chunker
    from engram.stores.relations import _extraction

    parsed: list[bytes] = []

    def counting(real):
        def parse(source: bytes, language: str):
            parsed.append(source)
            return real(source, language)

        return parse

    monkeypatch.setattr(_chunker, "parse", counting(_chunker.parse))
    monkeypatch.setattr(_extraction, "parse", counting(_extraction.parse))
    summary = run_json(app, ["index", str(project)])
    assert summary["graph"]["files"] == 2 and summary["graph"]["parsed"] == 2
    assert summary["graph"]["edges"] > 0
    assert sorted(parsed) == sorted(
        (project / "pkg" / name).read_bytes() for name in ("cache.py", "http.py")
    )
