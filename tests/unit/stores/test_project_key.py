"""Project keys: one key per folder whatever the spelling, never one key for two folders."""

from __future__ import annotations

import os

import pytest

from engram.stores.project import namespace_label, project_key
from engram.stores.project._key import key_from_label


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "proj", target_is_directory=True)
    return tmp_path


def test_spellings_of_one_folder_share_a_key(tree, monkeypatch):
    base = project_key(tree / "proj")
    monkeypatch.chdir(tree)
    spellings = [
        "proj",
        "./proj",
        "proj/",
        "proj//",
        "proj/sub/..",
        str(tree / "proj") + os.sep,
        str(tree / "link"),
        "link/",
    ]
    assert {project_key(s) for s in spellings} == {base}
    assert os.path.isabs(base)


def test_home_is_expanded(tree, monkeypatch):
    monkeypatch.setenv("HOME", str(tree))
    assert project_key("~/proj") == project_key(tree / "proj")


def test_different_folders_never_merge(tree):
    assert project_key(tree / "proj") != project_key(tree / "other")
    assert project_key(tree / "proj") != project_key(tree / "proj" / "sub")


def test_missing_folder_still_gets_a_key(tree):
    assert project_key(tree / "not-yet") == str((tree / "not-yet").resolve())


def test_empty_path_is_rejected():
    with pytest.raises(ValueError):
        project_key("  ")


@pytest.mark.parametrize("key", ["/a/b.c/d", "/x/100%.y", "C:\\Users\\me\\app.v2", "/plain"])
def test_namespace_label_round_trips_and_has_no_dots(key):
    label = namespace_label(key)
    assert "." not in label and "\x00" not in label
    assert key_from_label(label) == key


def test_labels_of_distinct_keys_differ():
    assert namespace_label("/a/b.c") != namespace_label("/a/b%2Ec")
