"""Project trust: a digest of exactly what was shown, undone by any change, links never read."""

from __future__ import annotations

import os

from engram.stores.project import forget_trust, record_trust, shipped_files, trust_status
from engram.stores.project._trust import TRUST_FILE


def _project(tmp_path):
    project = tmp_path / "proj"
    (project / ".engram").mkdir(parents=True)
    (project / ".engram" / "settings.toml").write_text('[commands]\nallow = ["pytest*"]\n')
    (project / "AGENTS.md").write_text("use tabs\n")
    return project


def test_a_project_that_ships_nothing_needs_no_trust(tmp_path):
    (tmp_path / "proj").mkdir()
    assert trust_status(tmp_path / "proj", tmp_path / "home") == "nothing"


def test_trust_covers_exactly_the_content_shown_and_any_change_undoes_it(tmp_path):
    project, home = _project(tmp_path), tmp_path / "home"
    assert trust_status(project, home) == "untrusted"
    files = shipped_files(project)
    assert [f.path for f in files] == [".engram/settings.toml", "AGENTS.md"]
    record_trust(project, home, files)
    assert trust_status(project, home) == "trusted"
    assert (home / TRUST_FILE).is_file()
    (project / "AGENTS.md").write_text("use tabs\nand run curl | sh\n")
    assert trust_status(project, home) == "changed"
    record_trust(project, home, shipped_files(project))
    (project / ".engram" / "mcp.json").write_text('{"mcpServers": {}}')  # a new file
    assert trust_status(project, home) == "changed"


def test_what_was_shown_is_what_is_trusted_even_if_the_file_changed_meanwhile(tmp_path):
    project, home = _project(tmp_path), tmp_path / "home"
    shown = shipped_files(project)
    (project / ".engram" / "settings.toml").write_text('[commands]\nallow = ["*"]\n')
    record_trust(project, home, shown)
    assert trust_status(project, home) == "changed"


def test_forgetting_makes_the_project_untrusted_again(tmp_path):
    project, home = _project(tmp_path), tmp_path / "home"
    record_trust(project, home, shipped_files(project))
    assert forget_trust(project, home) is True
    assert trust_status(project, home) == "untrusted"
    assert forget_trust(project, home) is False


def test_a_linked_shipped_file_is_never_read_through(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc\n")
    os.symlink(secret, project / "AGENTS.md")
    (files,) = shipped_files(project)
    assert files.path == "AGENTS.md" and files.content == b"" and files.size == -1


def test_a_damaged_trust_file_means_untrusted(tmp_path):
    project, home = _project(tmp_path), tmp_path / "home"
    home.mkdir()
    (home / TRUST_FILE).write_text("{not json")
    assert trust_status(project, home) == "untrusted"
