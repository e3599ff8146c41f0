"""One access policy for every in-process reader: confine, walk, read, glob, grep, slices, rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.graph import Context
from engram.graph._errors import ToolError
from engram.graph.tools._project import build_core_tools
from engram.stores.codeindex import _ripgrep as ripgrep_search
from engram.stores.codeindex import grep, locate_on_the_fly
from engram.stores.files import (
    PathEscapeError,
    UnsafeFileError,
    confine,
    display_path,
    listable,
    read_regular,
    walk_project,
)
from engram.stores.files._paths import is_secret_path
from engram.stores.project import load_rules_files
from engram.stores.relations import RelationIndex
from engram.stores.relations._index import build_relation_index
from tests.support.hostile_paths import CREDENTIAL_FILES, MARKER, build_hostile_project

GLOBS = [
    "*",
    "**",
    "**/*",
    ".*",
    "**/.*",
    "config",
    ".env",
    "*.json",
    ".git/**",
    "**/.git/**",
    ".engram/**",
    "credentials",
    "**/credentials",
    "*.pem",
    "home/**",
    "*.txt",
    "*.py",
]


@pytest.fixture()
def hostile(tmp_path: Path):
    return build_hostile_project(tmp_path)


@pytest.fixture()
def tools(hostile, monkeypatch):
    # the hostile tree's FIFO .gitignore sends grep to the Python fallback; run it in this
    # process (test_python_grep_never_returns_a_secret runs the real child)
    monkeypatch.setattr(ripgrep_search, "_grep_python", ripgrep_search._search_python)
    return {t.name: t for t in build_core_tools(Context(project=str(hostile.root)))}


def test_at_least_39_credential_names_are_secrets():
    assert len(CREDENTIAL_FILES) >= 39
    assert all(is_secret_path(rel) for rel in CREDENTIAL_FILES)
    for harmless in (
        "src/app.py",
        "config.json",
        ".env.example",
        "docs/keys.md",
        "parser.py",
        "tokenizer.py",
        "settings.xml",
        "auth.py",
    ):
        assert not is_secret_path(harmless), harmless


def test_every_refused_path_is_refused_by_confine(hostile):
    for category, rel in hostile.refused:
        if category == "hard link":
            continue  # a hard link is a plain name: the open refuses it (next test)
        with pytest.raises(PathEscapeError):
            confine(hostile.root, rel)


def test_hard_links_and_fifos_are_never_opened(hostile):
    for category, rel in hostile.refused:
        if category == "hard link":
            with pytest.raises(UnsafeFileError, match="hard links"):
                read_regular(hostile.root / rel)
            assert not listable(hostile.root, rel)
    if hostile.fifo:
        with pytest.raises(UnsafeFileError, match="FIFO"):
            read_regular(hostile.root / hostile.fifo)


def test_walk_lists_no_refused_file_and_reads_no_secret(hostile):
    report = walk_project(hostile.root)
    paths = {f.path for f in report.files}
    assert {"src/app.py", "README.md"} <= paths
    assert not paths & {rel for _, rel in hostile.refused}
    assert hostile.fifo not in paths
    for f in report.files:
        assert MARKER not in f.abs_path.read_text(encoding="utf-8", errors="replace"), f.path
    assert (
        "src/hardlinked.py",
        "hard link (another name may be outside the project)",
    ) in report.skipped


def test_read_file_refuses_every_variant(tools, hostile):
    for _, rel in hostile.refused:
        with pytest.raises(ToolError):
            tools["read_file"].invoke({"path": rel})
    with pytest.raises(ToolError, match="FIFO"):
        tools["read_file"].invoke({"path": hostile.fifo})


def test_glob_never_lists_a_refused_path(tools, hostile):
    refused = {rel for _, rel in hostile.refused}
    for pattern in GLOBS:
        out = tools["glob_files"].invoke({"pattern": pattern, "max_results": 500})
        assert MARKER not in out
        listed = set(out.splitlines())
        assert not listed & refused, pattern


@pytest.mark.integration  # the Python fallback runs in a child process
def test_python_grep_never_returns_a_secret(hostile):
    for glob in [None, *GLOBS]:
        matches = grep(hostile.root, MARKER, glob=glob, rg_path=None)
        assert matches == [], glob
    assert grep(hostile.root, "needle", rg_path=None)


def test_file_names_with_newlines_cannot_forge_lines(tools, hostile):
    if hostile.newline_name is None:
        pytest.skip("the file system refuses newlines in names")
    out = tools["glob_files"].invoke({"pattern": "evil*"})
    assert "src/app.py:1: forged line.py" not in out.splitlines()
    # such a name is never listed, read or searched: no real source file has one
    assert out.startswith("no files match")
    assert "newline in its name" not in tools["grep_code"].invoke({"pattern": "needle"})
    assert display_path("a\nb\r\u2028c") == "a\\x0ab\\x0d\\u2028c"
    # Terminal escapes and the bidirectional overrides that show text in another order.
    assert display_path("\x1b[2Jx\u202etxt.py") == "\\x1b[2Jx\\u202etxt.py"
    assert display_path("a\u2066b\u2069\x9bc") == "a\\u2066b\\u2069\\x9bc"
    assert display_path("café/数据.py") == "café/数据.py"


def test_code_graph_skips_refused_files(hostile):
    graph = RelationIndex()
    build_relation_index(hostile.root, graph)
    assert "src/app.py" in graph.facts
    assert "src/hardlinked.py" not in graph.facts
    assert all(MARKER not in path for path in graph.facts)


def test_evidence_locator_refuses_protected_paths(hostile):
    locate = locate_on_the_fly(hostile.root)
    assert locate(".env", 1) is None
    assert locate("notes.txt", 1) is None
    assert locate("src/hardlinked.py", 1) is None
    assert locate("src/app.py", 1) is not None


def test_rules_files_never_follow_links_to_secrets(hostile, tmp_path):
    os.symlink(".env", hostile.root / "AGENTS.md")
    os.symlink(hostile.outside / "secret.txt", hostile.root / "CLAUDE.md")
    if hostile.fifo:
        os.mkfifo(hostile.root / "ENGRAM.md")
    (hostile.root / ".engram" / "ENGRAM.md").write_text("use tabs\n")
    rules = load_rules_files(hostile.root, tmp_path / "home", project_rules=True)
    assert MARKER not in rules.text
    assert "use tabs" in rules.text


def test_a_session_reads_its_own_spilled_outputs_and_no_other(hostile):
    from engram.stores.files import session_spill_folder, spill_if_large

    context = Context(project=str(hostile.root))
    mine = spill_if_large(context.state, "grep_code", "c1", "x" * 50, session="me", limit=10)
    theirs = spill_if_large(context.state, "grep_code", "c2", "y" * 50, session="them", limit=10)
    assert mine.path and theirs.path
    # a planted file at the path the model knows is never what it reads
    planted = hostile.root / mine.path
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("planted by the repository")
    own = {t.name: t for t in build_core_tools(context, spill_folder=session_spill_folder("me"))}
    assert "x" * 50 in own["read_file"].invoke({"path": mine.path})
    for path in (
        theirs.path,
        ".engram/ledger/other-session.jsonl",
        session_spill_folder("me") + "/../them/" + theirs.path.rsplit("/", 1)[1],
    ):
        with pytest.raises(ToolError):
            own["read_file"].invoke({"path": path})
    over_mcp = {t.name: t for t in build_core_tools(context)}
    with pytest.raises(ToolError):
        over_mcp["read_file"].invoke({"path": mine.path})
