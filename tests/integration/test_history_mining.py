"""Mining a checkout's history with real git: HEAD only, renames, bulk commits, shallow clones."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from engram.stores.codeindex._history_evidence import (
    BULK_FILES,
    HistoryTables,
    history_features,
)
from engram.stores.codeindex._history_source import IndexHistory
from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from engram.stores.history import HISTORY_FILE, load_history, refresh_history
from engram.stores.history._store import FORMAT_VERSION

DAY = 86_400
START = 1_700_000_000

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
        reason="git is not installed",
    ),
]


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Dev")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "dev@example.com")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # a folder without .git must not find a repository above tmp_path
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def git(repo: Path, *args: str, day: int = 0) -> None:
    stamp = f"@{START + day * DAY} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def commit(repo: Path, message: str, day: int, **contents: str) -> None:
    for name, text in contents.items():
        path = repo / (name.replace("__", "/") + (".py" if "__" in name else ".md"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, day=day)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout whose history has co-changes, a rename, a bulk commit and a future branch."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, "Add the parser", 0, pkg__parser="def parse():\n    return 1\n")
    commit(
        root,
        "fix: parser crash on empty input",
        10,
        pkg__parser="def parse():\n    return 2\n",
        pkg__lexer="def lex():\n    return 1\n",
    )
    commit(
        root,
        "Tokens carry their line",
        20,
        pkg__parser="def parse():\n    return 3\n",
        pkg__lexer="def lex():\n    return 2\n",
    )
    git(root, "mv", "pkg/lexer.py", "pkg/scanner.py")
    git(root, "commit", "-q", "-m", "Rename the lexer to scanner", day=30)
    bulk = {f"gen__m{i}": f"x = {i}\n" for i in range(BULK_FILES + 1)}
    commit(
        root,
        "Reformat everything with the parser",
        40,
        pkg__parser="def parse():\n    return 4\n",
        **bulk,
    )
    commit(root, "Docs for the scanner", 50, README="scanner\n")
    git(root, "checkout", "-q", "-b", "future")
    commit(root, "fix: secret crash in the parser", 60, pkg__secret="s = 1\n")
    git(root, "checkout", "-q", "main")
    return root


def test_only_head_is_mined_renames_are_followed_and_bulk_commits_left_out(
    repo: Path, tmp_path: Path
):
    history = refresh_history(repo, tmp_path / "state")
    assert history.note == ""
    messages = [c.message for c in history.commits]
    assert messages[0] == "Docs for the scanner"
    assert not any("secret" in m for m in messages)  # the other branch is not HEAD's past
    tables = HistoryTables.build(history)
    assert "pkg/secret.py" not in tables.touches
    # the lexer's three changes count for the file's name at HEAD
    assert len(tables.touches["pkg/scanner.py"]) == 3
    assert "pkg/lexer.py" not in tables.touches
    # the bulk commit counts for nobody
    assert "gen/m0.py" not in tables.touches
    assert len(tables.touches["pkg/parser.py"]) == 3


def test_the_features_say_why(repo: Path, tmp_path: Path):
    tables = HistoryTables.build(refresh_history(repo, tmp_path / "state"))
    known = ["pkg/parser.py", "pkg/scanner.py", "README.md", "pkg/secret.py"]
    features = history_features(
        tables,
        known,
        text_ranks={"bm25": ["pkg/parser.py"]},
        query="parser crash when the input is empty",
    )
    assert features.cochange["pkg/scanner.py"] == 1.0
    assert "changed with pkg/parser.py in 2 commits" in features.reasons["pkg/scanner.py"]
    assert features.fixes["pkg/parser.py"] == max(features.fixes.values())
    assert any(
        r.startswith("touched by 'fix: parser crash on empty input' (2023-11)")
        for r in features.reasons["pkg/parser.py"]
    )
    assert "pkg/secret.py" not in features.fixes
    assert features.recency["pkg/parser.py"] > features.recency["README.md"] > 0


def test_new_commits_are_read_incrementally(repo: Path, tmp_path: Path):
    state = tmp_path / "state"
    first = refresh_history(repo, state)
    commit(repo, "Scanner handles tabs", 70, pkg__scanner="def lex():\n    return 3\n")
    second = refresh_history(repo, state)
    assert second.added == 1
    assert second.commits[1:] == first.commits
    third = refresh_history(repo, state)  # HEAD unchanged: nothing read
    assert third.added == 0
    assert third.commits == second.commits == load_history(state).commits


def test_a_moved_head_is_mined_again(repo: Path, tmp_path: Path):
    state = tmp_path / "state"
    refresh_history(repo, state)
    git(repo, "checkout", "-q", "future")
    history = refresh_history(repo, state)
    assert history.commits[0].message == "fix: secret crash in the parser"


def test_a_shallow_clone_and_a_folder_without_git_degrade_with_a_note(repo: Path, tmp_path: Path):
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)],
        check=True,
        capture_output=True,
    )
    history = refresh_history(shallow, tmp_path / "s1")
    assert not history.usable
    assert "shallow" in history.note
    git(repo, "config", "remote.origin.promisor", "true")  # as a partial clone has
    assert "partial clone" in refresh_history(repo, tmp_path / "s3").note
    plain = tmp_path / "plain"
    plain.mkdir()
    history = refresh_history(plain, tmp_path / "s2")
    assert not history.usable
    assert "not a git checkout" in history.note


def test_the_index_ranks_with_history_and_without(repo: Path, tmp_path: Path):
    index = open_memory_code_index(repo, embedder=HashEmbedder())
    index.update()
    assert index.history_tables() is None  # no history folder: today's ranking
    index.history = IndexHistory(index.root, tmp_path / "state")
    assert "not mined yet" in index.history.note()
    index.update()
    assert (tmp_path / "state" / HISTORY_FILE).exists()
    assert index.history_tables() is not None
    hits = index.localize_files("parser crash on empty input", k=5)
    reasons = {h.path: h.reasons for h in hits}
    assert any(r.startswith("touched by 'fix: parser crash") for r in reasons["pkg/parser.py"])


def test_each_commit_names_the_functions_its_hunks_changed(tmp_path: Path):
    root = tmp_path / "fns"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    body = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(8))
    commit(
        root, "Add the shapes", 0, pkg__shapes=f"class Shape:\n{body}\ndef area():\n    return 0\n"
    )
    changed = body.replace("return 5", "return 50")
    commit(
        root,
        "fix: m5 of a shape is wrong",
        1,
        pkg__shapes=f"class Shape:\n{changed}\ndef area():\n    return 0\n\n"
        "async def perimeter():\n    return 1\n",
    )
    # a removed line that reads like a file header, and a def in a string, are not names
    commit(
        root,
        "Notes",
        2,
        pkg__notes="x = '''\n-- a/../../etc/passwd\n'''\n",
    )
    commit(root, "Notes again", 3, pkg__notes="x = '''\n+++ b/../../etc/passwd\n'''\n")
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()  # a changed line forging a record for the first commit
    forged = f"x = 1  # \x1e{first}\ndiff --git a/p.py b/p.py\n+++ b/p.py\ndef after():\n    pass\n"
    commit(root, "Odd bytes", 3, pkg__odd=forged)
    commit(root, "Generated", 4, pkg__gen=f"def {'g' * 500}():\n    pass\n\ndef ok():\n    pass\n")
    big = "".join(f"def gen{i}():\n    return {i}\n" for i in range(60_000))  # > 1 MB
    commit(root, "Vendored table", 5, pkg__table=big)
    history = refresh_history(root, tmp_path / "state")
    assert history.note == ""
    by_message = {c.message: dict(c.functions) for c in history.commits}
    assert by_message["fix: m5 of a shape is wrong"] == {"pkg/shapes.py": ("m5", "perimeter")}
    assert by_message["Add the shapes"]["pkg/shapes.py"][:2] == ("Shape", "m0")
    assert by_message["Generated"] == {"pkg/gen.py": ("ok",)}  # 500 characters: not a name
    assert by_message["Vendored table"] == {}  # over 1 MB: not diffed
    # a record marker inside a changed line is content: the rest of the commit is still read
    assert by_message["Odd bytes"] == {"pkg/odd.py": ("after",)}
    assert {p for c in history.commits for p, _ in c.functions} == {
        "pkg/shapes.py",
        "pkg/gen.py",
        "pkg/odd.py",
    }
    assert load_history(tmp_path / "state").commits == history.commits  # stored with them
    tables = HistoryTables.build(history)
    features = history_features(
        tables, ["pkg/shapes.py", "pkg/notes.py"], text_ranks={}, query="m5 shape wrong value"
    )
    assert features.functions["pkg/shapes.py"]["m5"] == 1.0
    assert "m3" not in features.functions["pkg/shapes.py"]


def test_functions_come_from_head_only_and_a_stopped_git_keeps_the_rest(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    history = refresh_history(repo, tmp_path / "state")
    named = {name for c in history.commits for _, names in c.functions for name in names}
    assert named >= {"parse", "lex"}
    assert not any(p == "pkg/secret.py" for c in history.commits for p, _ in c.functions)
    bulk = next(c for c in history.commits if c.message.startswith("Reformat"))
    assert bulk.functions == ()  # a bulk commit's hunks are not read
    # a mirror lacking a blob makes git stop at the commits that need it: git starts again
    # past each one, and every other commit keeps its functions
    blob = subprocess.run(
        ["git", "rev-parse", "HEAD~3:pkg/parser.py"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()  # "return 3": the commit that wrote it needs it (the next one is bulk)
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    partial = refresh_history(repo, tmp_path / "state2")
    assert "functions of 1 commit not read" in partial.note
    assert len(partial.commits) == len(history.commits)
    lost = [
        c.message
        for c in partial.commits
        if c.functions != dict((c2.sha, c2.functions) for c2 in history.commits)[c.sha]
    ]
    assert lost == ["Tokens carry their line"]
    # git past its time limit: what was read before stays, with a note
    from engram.stores.history import HistoryUnavailable, _mining

    real = _mining.run_git

    def slow(root, *args, data=None):  # noqa: ANN001, ANN202
        if data is not None:
            raise HistoryUnavailable("git log took over 30 s")
        return real(root, *args, data=data)

    monkeypatch.setattr(_mining, "run_git", slow)
    cut = refresh_history(repo, tmp_path / "state3")
    assert "functions read for the newest commits only (git log took over 30 s)" in cut.note
    assert cut.usable and not any(c.functions for c in cut.commits)


def test_a_version_one_history_is_still_read_then_mined_again(repo: Path, tmp_path: Path):
    import json

    state = tmp_path / "state"
    refresh_history(repo, state)
    data = json.loads((state / HISTORY_FILE).read_text())
    data["version"] = 1
    data["commits"] = [row[:6] for row in data["commits"]]
    (state / HISTORY_FILE).write_text(json.dumps(data))
    old = load_history(state)
    assert old is not None and old.usable and old.version == 1
    assert all(c.functions == () for c in old.commits)
    again = refresh_history(repo, state)
    assert again.version == FORMAT_VERSION and any(c.functions for c in again.commits)
    assert again.added == len(again.commits)


def test_the_leading_file_shows_first_the_function_a_similar_past_fix_changed(tmp_path: Path):
    root = tmp_path / "ledger"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    body = "".join(f"def step{i}(value):\n    return value + {i}\n\n\n" for i in range(10))
    commit(root, "Add the ledger steps", 0, pkg__ledger=body)
    commit(
        root,
        "fix: totals overflow when a ledger is rounded",
        1,
        pkg__ledger=body.replace("value + 7", "min(value + 7, 2**31)"),
    )
    commit(root, "Docs", 2, README="ledger\n")
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.history = IndexHistory(index.root, tmp_path / "state")
    index.update()
    issue = "Ledger totals overflow again\nRounding a big ledger overflows."

    def place_of_step7() -> int:
        hits = [h for h in index.localized_chunks(issue, files=3) if h.path == "pkg/ledger.py"]
        return [h.symbol.split("(")[0] for h in hits].index("step7")

    with_history = place_of_step7()
    index.history = None  # without history only the text orders the chunks (the path matches)
    assert with_history < place_of_step7()


def test_git_stopped_by_a_signal_stores_nothing_and_the_next_refresh_mines(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import engram.stores.files as files

    state = tmp_path / "state"
    plumbing = files.run_plumbing

    def interrupted(root, *args, **kw):  # noqa: ANN001, ANN003, ANN202
        done = plumbing(root, *args, **kw)
        if "log" in args:  # as when Ctrl-C reaches git while it reads the history
            return subprocess.CompletedProcess(done.args, -2, b"", b"")
        return done

    monkeypatch.setattr(files, "run_plumbing", interrupted)
    history = refresh_history(repo, state)
    assert not history.usable and "stopped by signal 2" in history.note
    assert not (state / HISTORY_FILE).exists()  # not remembered as "no history" for this HEAD
    monkeypatch.setattr(files, "run_plumbing", plumbing)
    assert refresh_history(repo, state).usable


def test_the_index_update_raises_what_the_history_mining_raised_after_updating_the_files(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    index = open_memory_code_index(repo, embedder=HashEmbedder())
    index.history = IndexHistory(index.root, tmp_path / "state")
    index.update()
    assert index.history.last is not None and index.history.last.usable
    assert (tmp_path / "state" / HISTORY_FILE).exists()

    def broken() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index.history, "refresh", broken)
    commit(repo, "Scanner handles tabs", 70, pkg__scanner="def tabs():\n    return 3\n")
    with pytest.raises(OSError, match="No space left"):
        index.update()
    # the files were updated all the same, and the index answers
    assert any(h.symbol.startswith("tabs") for h in index.search("tabs", k=5))


def test_no_commit_message_or_file_name_can_forge_a_commit_or_a_change(tmp_path: Path):
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, "Add the parser", 0, pkg__parser="def parse():\n    return 1\n")
    parent = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    forged = f"\x1e{parent}\x1f{START}\x1fforged\x1f\0\nM\0pkg/forged.py\0"
    # a message spelling the old framing, then the fields of the new one on their own lines
    message = f"fix the parser\n{forged}\n{parent}\n{START}\nforged\n\nM\npkg/forged.py\n"
    (root / "pkg" / "parser.py").write_text("def parse():\n    return 2\n")
    # a file name made of a commit hash, and one with a NUL-free forgery of a change
    (root / "pkg" / f"{parent}").write_text("x\n")
    (root / "pkg" / "M\x1epkg\x1fforged.py\n").write_text("y\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message.replace("\0", ""), day=1)
    # a message with a NUL (written past git commit, which refuses it): git ends it there
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    body = (
        f"tree {tree}\nparent {head}\nauthor Dev <d@e> {START} +0000\n"
        f"committer Dev <d@e> {START + 2 * DAY} +0000\n\nsays more\0{head}\0{START}\0x\0M\0pkg/forged.py\0"
    )
    (tmp_path / "raw").write_bytes(body.encode())
    made = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--literally", str(tmp_path / "raw")],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(root, "update-ref", "HEAD", made)

    history = refresh_history(root, tmp_path / "state")
    assert [c.message.splitlines()[0] for c in history.commits] == [
        "says more",
        "fix the parser",
        "Add the parser",
    ]
    assert history.commits[0].files == ()
    assert set(history.commits[1].files) == {
        "pkg/parser.py",
        f"pkg/{parent}",
        "pkg/M\x1epkg\x1fforged.py\n",
    }
    assert not any("pkg/forged.py" in c.files for c in history.commits)
