from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.stores.files import PathEscapeError, confine
from engram.stores.files._paths import is_secret_path


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".env").write_text("KEY=secret\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (root / "id_rsa").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("nope")
    os.symlink(outside / "secret.txt", root / "link_out.txt")
    os.symlink(outside, root / "linked_dir")
    os.symlink("/etc", root / "etc_link")
    os.symlink(root / "src" / "app.py", root / "inner_link.py")
    return root.resolve()


ESCAPES = [
    "../outside/secret.txt",
    "../../etc/passwd",
    "src/../../outside/secret.txt",
    "/etc/passwd",
    "/",
    "~/.ssh/id_rsa",
    "~",
    "link_out.txt",
    "linked_dir/secret.txt",
    "etc_link/passwd",
    "src/app.py\x00.txt",
    "a" * 5000,
    ".git/config",
    ".git",
    ".env",
    "keys/server.pem",
    "id_rsa",
    "",
    "   ",
    "./../outside",
    "src/./../../outside/secret.txt",
]


@pytest.mark.parametrize("raw", ESCAPES)
def test_escape_attempts_are_refused(project: Path, raw: str):
    with pytest.raises(PathEscapeError):
        confine(project, raw)


def test_absolute_path_of_the_parent_is_refused(project: Path):
    with pytest.raises(PathEscapeError):
        confine(project, str(project.parent / "outside" / "secret.txt"))


@pytest.mark.parametrize(
    "raw", ["src/app.py", "./src/app.py", "src//app.py", "inner_link.py", "src/../src/app.py"]
)
def test_paths_inside_are_allowed(project: Path, raw: str):
    resolved = confine(project, raw)
    assert project in resolved.parents


def test_absolute_path_inside_is_allowed(project: Path):
    assert confine(project, str(project / "src" / "app.py")) == project / "src" / "app.py"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        (".env", True),
        (".env.production", True),
        ("prod.env", True),
        ("id_ed25519", True),
        ("cert.pem", True),
        (".netrc", True),
        (".env.example", False),
        ("envelope.py", False),
        ("keys.py", False),
        ("README.md", False),
    ],
)
def test_secret_names(name: str, secret: bool):
    assert is_secret_path(name) is secret


@pytest.mark.parametrize("name", [".GIT", ".Git", ".ENGRAM", ".Engram", ".git.", ".engram ", ".HG"])
def test_protected_folders_are_matched_in_any_case(tmp_path, name):
    """On macOS and Windows these are the real folder: a write there is a write to ``.git``."""
    from engram.stores.files import is_protected_or_secret

    assert is_protected_or_secret(f"{name}/hooks/pre-commit")
    with pytest.raises(PathEscapeError):
        confine(tmp_path, f"{name}/config")


def test_an_ordinary_folder_that_resembles_a_protected_one_is_not_protected():
    from engram.stores.files import is_protected_or_secret

    assert not is_protected_or_secret("gitlab/ci.yml")
    assert not is_protected_or_secret("docs/engram/intro.md")
