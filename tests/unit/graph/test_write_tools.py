"""The file-changing tools: success and failure paths, confinement, atomic writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engram.graph import Context
from engram.graph._errors import PathOutsideProjectError, ToolError
from engram.graph.tools._text_edits import nearest_candidates, replace_exact
from engram.graph.tools._unified_diff import parse_patch
from engram.graph.tools._write import build_write_tools
from engram.stores.files import _atomic as atomic_file

SOURCE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    project = (tmp_path / "proj").resolve()
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "calc.py").write_text(SOURCE)
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".engram").mkdir()
    return project


@pytest.fixture()
def tools(root: Path):
    return {t.name: t for t in build_write_tools(Context(project=str(root)))}


def test_edit_file_replaces_once_and_reports_the_diff(tools, root):
    out = tools["edit_file"].invoke(
        {
            "path": "pkg/calc.py",
            "old_string": "def add(a, b):\n    return a - b",
            "new_string": "def add(a, b):\n    return a + b",
        }
    )
    assert out.startswith("edited pkg/calc.py\n--- a/pkg/calc.py")
    assert "+    return a + b" in out
    assert (root / "pkg" / "calc.py").read_text() == SOURCE.replace("a - b", "a + b", 1)


def test_edit_file_ambiguous_names_the_lines(tools, root):
    with pytest.raises(ToolError) as err:
        tools["edit_file"].invoke(
            {"path": "pkg/calc.py", "old_string": "return a - b", "new_string": "return 0"}
        )
    assert "matches 2 times" in str(err.value) and "lines 2, 6" in str(err.value)
    assert "replace_all" in err.value.hint
    assert (root / "pkg" / "calc.py").read_text() == SOURCE


def test_edit_file_replace_all(tools, root):
    out = tools["edit_file"].invoke(
        {"path": "pkg/calc.py", "old_string": "a - b", "new_string": "a * b", "replace_all": True}
    )
    assert out.startswith("edited pkg/calc.py")
    assert (root / "pkg" / "calc.py").read_text().count("a * b") == 2


def test_edit_file_missing_text_shows_nearest_lines(tools, root):
    with pytest.raises(ToolError) as err:
        tools["edit_file"].invoke(
            {
                "path": "pkg/calc.py",
                "old_string": "def sub(a, b):\n    return a - c",
                "new_string": "x",
            }
        )
    message = str(err.value)
    assert "was not found in pkg/calc.py" in message
    assert "     5\tdef sub(a, b):" in message and "     6\t    return a - b" in message
    assert (root / "pkg" / "calc.py").read_text() == SOURCE


def test_edit_file_whitespace_hint_and_other_failures(tools):
    with pytest.raises(ToolError) as err:
        tools["edit_file"].invoke(
            {"path": "pkg/calc.py", "old_string": "def  add(a,  b):", "new_string": "x"}
        )
    assert "different whitespace" in err.value.hint
    with pytest.raises(ToolError, match="no such file"):
        tools["edit_file"].invoke({"path": "pkg/none.py", "old_string": "a", "new_string": "b"})
    with pytest.raises(ToolError, match="empty"):
        tools["edit_file"].invoke({"path": "pkg/calc.py", "old_string": "", "new_string": "b"})
    with pytest.raises(ToolError, match="the same"):
        tools["edit_file"].invoke({"path": "pkg/calc.py", "old_string": "a", "new_string": "a"})


def test_edit_keeps_crlf_and_mode(tools, root):
    target = root / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    os.chmod(target, 0o751)
    tools["edit_file"].invoke({"path": "win.txt", "old_string": "one\ntwo", "new_string": "one\n2"})
    assert target.read_bytes() == b"one\r\n2\r\nthree\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


def test_edit_refuses_binary_and_non_utf8(tools, root):
    (root / "blob.bin").write_bytes(b"\x00\x01abc")
    (root / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ToolError, match="binary"):
        tools["edit_file"].invoke({"path": "blob.bin", "old_string": "abc", "new_string": "x"})
    with pytest.raises(ToolError, match="not UTF-8"):
        tools["edit_file"].invoke({"path": "latin.txt", "old_string": "caf", "new_string": "x"})


def test_write_file_creates_folders_and_replaces(tools, root):
    assert (
        tools["write_file"]
        .invoke({"path": "new/deep/mod.py", "content": "X = 1\n"})
        .startswith("wrote new/deep/mod.py")
    )
    assert (root / "new" / "deep" / "mod.py").read_text() == "X = 1\n"
    tools["write_file"].invoke({"path": "new/deep/mod.py", "content": "X = 2\n"})
    assert (root / "new" / "deep" / "mod.py").read_text() == "X = 2\n"
    with pytest.raises(ToolError, match="folder"):
        tools["write_file"].invoke({"path": "pkg", "content": "x"})


def test_new_files_get_the_umask_mode_and_replaced_ones_keep_theirs(tools, root):
    old = os.umask(0o027)
    try:
        tools["write_file"].invoke({"path": "created.py", "content": "A = 1\n"})
        (root / "script.sh").write_text("echo hi\n")
        (root / "script.sh").chmod(0o755)
        tools["write_file"].invoke({"path": "script.sh", "content": "echo bye\n"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "created.py").stat().st_mode) == 0o640  # not the temp's 0600
    assert stat.S_IMODE((root / "script.sh").stat().st_mode) == 0o755


@pytest.mark.parametrize(
    "path",
    [
        "../outside.py",
        "/etc/passwd",
        "~/x.py",
        "pkg/../../outside.py",
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        ".engram/settings.toml",
        ".engram",
        ".env",
        "config/.env.production",
        "keys/server.pem",
        "id_rsa",
        "link_out/x.py",
        "link_git/config",
    ],
)
@pytest.mark.parametrize("tool", ["write_file", "edit_file", "apply_patch"])
def test_confinement_matrix(tools, root, tmp_path, path, tool):
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "link_git").symlink_to(root / ".git", target_is_directory=True)
    args = {
        "write_file": {"path": path, "content": "pwned"},
        "edit_file": {"path": path, "old_string": "[core]", "new_string": "pwned"},
        "apply_patch": {"patch": f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+pwned\n"},
    }[tool]
    with pytest.raises(PathOutsideProjectError):
        tools[tool].invoke(args)
    assert list(outside.iterdir()) == []
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / ".engram" / "settings.toml").exists()


PATCH = """diff --git a/pkg/calc.py b/pkg/calc.py
--- a/pkg/calc.py
+++ b/pkg/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
@@ -5,2 +5,3 @@
 def sub(a, b):
+    \"\"\"Subtract.\"\"\"
     return a - b
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+from pkg.calc import add
+TWO = add(1, 1)
"""


def test_apply_patch_changes_and_creates_files(tools, root):
    out = tools["apply_patch"].invoke({"patch": PATCH})
    assert out.startswith("patched pkg/calc.py, pkg/new.py")
    text = (root / "pkg" / "calc.py").read_text()
    assert text == (
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
        '    """Subtract."""\n    return a - b\n'
    )
    assert (root / "pkg" / "new.py").read_text() == "from pkg.calc import add\nTWO = add(1, 1)\n"


def test_apply_patch_is_all_or_nothing_and_names_the_hunk(tools, root):
    broken = PATCH.replace(" def sub(a, b):", " def sub(x, y):")
    with pytest.raises(ToolError) as err:
        tools["apply_patch"].invoke({"patch": broken})
    assert "hunk 2 of 2 for pkg/calc.py does not apply" in str(err.value)
    assert "def sub(x, y):" in str(err.value) and "     5\tdef sub(a, b):" in str(err.value)
    assert (root / "pkg" / "calc.py").read_text() == SOURCE
    assert not (root / "pkg" / "new.py").exists()


def test_apply_patch_deletes_renames_and_tolerates_offsets(tools, root):
    shifted = (
        "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -40,2 +40,2 @@\n def sub(a, b):\n"
        "-    return a - b\n+    return b - a\n"
    )
    tools["apply_patch"].invoke({"patch": shifted})
    assert (root / "pkg" / "calc.py").read_text().endswith("    return b - a\n")
    renamed = (
        "--- a/pkg/calc.py\n+++ b/pkg/arith.py\n@@ -1 +1 @@\n-def add(a, b):\n+def plus(a, b):\n"
    )
    tools["apply_patch"].invoke({"patch": renamed})
    assert not (root / "pkg" / "calc.py").exists()
    assert (root / "pkg" / "arith.py").read_text().startswith("def plus(a, b):\n")
    deleted = "--- a/pkg/arith.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-def plus(a, b):\n"
    tools["apply_patch"].invoke({"patch": deleted})
    assert not (root / "pkg" / "arith.py").exists()


def test_apply_patch_no_newline_marker(tools, root):
    (root / "n.txt").write_text("a\nb")
    patch = "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    tools["apply_patch"].invoke({"patch": patch})
    assert (root / "n.txt").read_text() == "a\nc\n"


def test_apply_patch_rejects_bad_input(tools, root):
    with pytest.raises(ToolError, match="no file headers"):
        tools["apply_patch"].invoke({"patch": "just some text"})
    with pytest.raises(ToolError, match="hunk before"):
        parse_patch("@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(ToolError, match="already exists"):
        tools["apply_patch"].invoke(
            {"patch": "--- /dev/null\n+++ b/pkg/calc.py\n@@ -0,0 +1 @@\n+x\n"}
        )
    with pytest.raises(ToolError, match="does not exist"):
        tools["apply_patch"].invoke(
            {"patch": "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n"}
        )


def test_atomic_write_leaves_the_old_file_when_the_write_fails(tools, root, monkeypatch):
    target = root / "pkg" / "calc.py"

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic_file.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        tools["write_file"].invoke({"path": "pkg/calc.py", "content": "torn"})
    assert target.read_text() == SOURCE
    assert sorted(p.name for p in target.parent.iterdir()) == ["calc.py"]  # no temp file left


def test_patch_rolls_back_earlier_files_when_a_later_write_fails(tools, root, monkeypatch):
    real = atomic_file.os.replace
    calls = []

    def fail_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real(src, dst)

    monkeypatch.setattr(atomic_file.os, "replace", fail_second)
    with pytest.raises(OSError):
        tools["apply_patch"].invoke({"patch": PATCH})
    assert (root / "pkg" / "calc.py").read_text() == SOURCE


def test_replace_exact_and_candidates_are_pure():
    assert replace_exact("a\nb\n", "b", "c") == ("a\nc\n", 1)
    assert nearest_candidates("alpha\nbeta\ngamma\n", "zzz") == []
    assert nearest_candidates("alpha\nbeta\ngamma\n", "betta")[0] == "     2\tbeta"


def test_a_fifo_or_a_hard_linked_file_is_refused_at_once_never_read(tools, root, tmp_path):
    import os

    os.mkfifo(root / "pipe.txt")
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("TOKEN=do-not-show\n")
    os.link(secret, root / "linked.txt")
    from engram.graph._errors import ToolError

    for path in ("pipe.txt", "linked.txt"):
        with pytest.raises(ToolError, match="refused") as refused:
            tools["edit_file"].invoke({"path": path, "old_string": "TOKEN", "new_string": "x"})
        assert "do-not-show" not in str(refused.value)
    assert secret.read_text() == "TOKEN=do-not-show\n"


def test_a_file_operation_that_hangs_is_stopped_with_a_clear_error(tools, root, monkeypatch):
    import threading

    from engram.graph.tools import _write as write_tools

    hung = threading.Event()
    monkeypatch.setattr(atomic_file, "FILE_OP_SECONDS", 0.2)
    monkeypatch.setattr(write_tools, "read_regular", lambda path: hung.wait(10) or b"")
    try:
        with pytest.raises(ToolError, match=r"reading pkg/calc.py did not finish within 0.2 s"):
            tools["edit_file"].invoke({"path": "pkg/calc.py", "old_string": "a", "new_string": "b"})
    finally:
        hung.set()
    assert (root / "pkg" / "calc.py").read_text() == SOURCE
