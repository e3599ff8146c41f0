"""A project never indexed is indexed on first use, so a task in plain words finds its code.

Real CLI processes, the real index (tree-sitter, SQLite, bm25s, embedded Chroma; the hash
embedder, so no model), and for ``run`` ``ChatOpenAI`` against the local OpenAI stub.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.crash_points import cli
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

TASK = "the sum of two numbers comes out wrong"
"""Plain words: no name, path or quoted text that exact search could find."""
FILES = {
    "calc.py": (
        "def add(a, b):\n"
        '    """Return the sum of two numbers."""\n'
        "    return a - b\n\n\n"
        "def scale(value, factor):\n"
        "    return value * factor\n"
    ),
    "report.py": "def header(title):\n    return title.upper()\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _env(engram_home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "OPENAI_"))}
    env.update(
        {
            "ENGRAM_HOME": str(engram_home),
            "ENGRAM_SERVE": "off",
            "ENGRAM_EMBEDDING_PROVIDER": "hash",
            "HF_HUB_OFFLINE": "1",
        }
    )
    env.update(extra)
    return env


def _engram(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return cli(list(args), env, project)


def _sliced(pack_json: str) -> set[str]:
    pack = json.loads(pack_json)
    return {item["path"] for s in pack["sections"] if s["name"] == "slices" for item in s["items"]}


def test_context_indexes_a_new_project_once_and_finds_code_by_plain_words(
    project: Path, engram_home: Path
):
    without = _engram(
        project, _env(engram_home, ENGRAM_AUTO_INDEX="off"), "context", "--json", TASK
    )
    assert without.returncode == 0, without.stderr
    assert "calc.py" not in _sliced(without.stdout)  # exact search alone finds nothing

    first = _engram(project, _env(engram_home), "context", "--json", TASK)
    assert first.returncode == 0, first.stderr
    assert "no code index yet: indexing 2 files once" in first.stderr
    assert "indexed 2 files" in first.stderr
    assert "calc.py" in _sliced(first.stdout)

    again = _engram(project, _env(engram_home), "context", "--json", TASK)
    assert again.returncode == 0, again.stderr
    assert "no code index yet" not in again.stderr
    assert "calc.py" in _sliced(again.stdout)


def test_search_indexes_first_and_ranks_by_meaning(project: Path, engram_home: Path):
    done = _engram(project, _env(engram_home), "search", "--json", "sum of two numbers")
    assert done.returncode == 0, done.stderr
    assert "indexing 2 files once" in done.stderr
    assert json.loads(done.stdout)[0]["path"] == "calc.py"
    assert "showing exact matches" not in done.stderr


def test_a_project_over_the_limit_is_told_to_index_and_still_gets_a_pack(
    project: Path, engram_home: Path
):
    done = _engram(project, _env(engram_home, ENGRAM_AUTO_INDEX="1"), "context", "--json", TASK)
    assert done.returncode == 0, done.stderr
    assert "this project has more files than is indexed on first use" in done.stderr
    assert "run `engram index` once" in done.stderr
    assert json.loads(done.stdout)["sections"]
    assert not list(engram_home.rglob("manifest.sqlite"))  # nothing was built


def test_a_project_of_few_but_huge_files_is_not_indexed_on_first_use(
    project: Path, engram_home: Path
):
    blob = "x = 1\n" * 150_000  # 900 KB of text, under the walk's 1 MB file limit
    for n in range(40):
        (project / f"gen{n}.py").write_text(blob)
    done = _engram(project, _env(engram_home, ENGRAM_AUTO_INDEX="100"), "context", TASK)
    assert done.returncode == 0, done.stderr
    assert "this project has more text (36 MB) than is indexed on first use" in done.stderr
    assert not list(engram_home.rglob("manifest.sqlite"))


def test_a_bad_limit_is_a_clear_error(project: Path, engram_home: Path):
    done = _engram(project, _env(engram_home, ENGRAM_AUTO_INDEX="lots"), "context", TASK)
    assert done.returncode == 2
    assert "ENGRAM_AUTO_INDEX='lots' is neither off nor a number of files" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_index_that_cannot_be_built_leaves_the_command_working(project: Path, engram_home: Path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = _env(engram_home, ENGRAM_CHROMA_URL=f"http://127.0.0.1:{port}")
    done = _engram(project, env, "context", "--json", TASK)
    assert done.returncode == 0, done.stderr
    assert "the code index could not be built" in done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["sections"]


def test_run_indexes_before_the_first_turn(project: Path, engram_home: Path):
    with OpenAIStub(lambda body: {"content": "add subtracts"}) as stub:
        env = _env(
            engram_home,
            ENGRAM_MODEL="stub-model",
            ENGRAM_BASE_URL=stub.base_url,
            OPENAI_API_KEY="x",
        )
        done = _engram(project, env, "run", "--json", TASK)
        assert done.returncode == 0, done.stderr
        assert "indexing 2 files once" in done.stderr
        sent = json.dumps(stub.requests[0]["messages"])
    assert "return a - b" in sent  # the pack of the first model call holds the function


def test_index_is_complete_only_after_a_first_update(project: Path, engram_home: Path):
    from engram.stores.codeindex import index_is_complete, open_code_index
    from engram.stores.embeddings._embedders import HashEmbedder
    from tests.support.state import state_of

    state = state_of(project)
    assert not index_is_complete(state)  # no index at all
    index = open_code_index(project, embedder=HashEmbedder(), state=state)
    try:
        assert not index_is_complete(state)  # opened, never updated (a cut-short first build)
        index.update()
    finally:
        index.close()
    assert index_is_complete(state)


def _wait_for_first_use(project: Path) -> None:
    from engram.graph.retrieval._first_use import FIRST_USE

    deadline = time.monotonic() + 120
    while FIRST_USE.running(project.resolve()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not FIRST_USE.running(project.resolve()), "the first-use build did not end"


def _library_env(monkeypatch: pytest.MonkeyPatch, engram_home: Path, limit: str) -> None:
    monkeypatch.setenv("ENGRAM_HOME", str(engram_home))
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "hash")
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", limit)


def _pack_paths(pack) -> set[str]:  # noqa: ANN001 - engram.graph.pack.Pack
    section = pack.section("slices")
    return {item.path for item in section.items} if section else set()


def test_the_library_indexes_a_small_project_in_the_background_and_waits_for_it(
    project: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """``build_pack`` (the graph as Studio and LangGraph Server run it): the run that finds no
    index starts it in the background, and waits for it when the project is small."""
    from engram.api import build_pack

    _library_env(monkeypatch, engram_home, "on")
    first = build_pack(TASK, project, 4000)
    assert any(
        "no code index yet: indexing its 2 files in the background" in note for note in first.notes
    ), first.notes
    assert any(n.startswith("pack: waited") and "first index" in n for n in first.notes)
    assert "calc.py" in _pack_paths(first)
    assert "def add(a, b):" in first.text


def test_the_library_does_not_wait_for_a_larger_projects_index_and_the_next_pack_finds_it(
    project: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch
):
    import engram.graph.retrieval._first_use as first_use
    from engram.api import build_pack
    from engram.stores.codeindex import index_is_complete
    from tests.support.state import state_of

    _library_env(monkeypatch, engram_home, "on")
    monkeypatch.setattr(first_use, "WAIT_FILES", 1)  # these two files count as many
    first = build_pack(TASK, project, 4000)
    assert "calc.py" not in _pack_paths(first)
    assert any("indexing its 2 files in the background" in n for n in first.notes)
    assert not [n for n in first.notes if n.startswith("pack: waited")]
    assert any("first code index is being built in the background" in n for n in first.notes)
    assert not [n for n in first.notes if "run `engram index`" in n], first.notes
    _wait_for_first_use(project)
    assert index_is_complete(state_of(project, engram_home))

    second = build_pack(TASK, project, 4000)
    assert "calc.py" in _pack_paths(second)
    assert "def add(a, b):" in second.text
    assert not [n for n in second.notes if "semantic search" in n], second.notes


def test_the_library_leaves_a_project_over_the_limit_alone_and_says_so(
    project: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch
):
    from engram.api import build_pack

    _library_env(monkeypatch, engram_home, "1")
    pack = build_pack(TASK, project, 4000)
    assert any(
        "this project has more files than is indexed on first use (ENGRAM_AUTO_INDEX=1)" in n
        and "run `engram index`" in n
        for n in pack.notes
    ), pack.notes
    _wait_for_first_use(project)
    assert not list(engram_home.rglob("manifest.sqlite"))


def test_the_library_with_first_use_indexing_off_keeps_the_old_note(
    project: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch
):
    from engram.api import build_pack

    _library_env(monkeypatch, engram_home, "off")
    pack = build_pack(TASK, project, 4000)
    assert "semantic search skipped: no code index — run `engram index`" in pack.notes
    assert not list(engram_home.rglob("manifest.sqlite"))


def test_a_bad_limit_in_the_library_is_a_note_not_a_failed_run(
    project: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch
):
    from engram.api import build_pack

    _library_env(monkeypatch, engram_home, "lots")
    pack = build_pack(TASK, project, 4000)
    assert any(
        "ENGRAM_AUTO_INDEX='lots' is neither off nor a number of files" in n for n in pack.notes
    ), pack.notes
