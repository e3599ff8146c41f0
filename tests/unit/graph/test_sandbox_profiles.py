"""The sandboxes' command lines, built without running them (pure)."""

from __future__ import annotations

from pathlib import Path

from engram.graph._sandbox import Sandbox


def test_seatbelt_writes_only_to_the_project_and_temp_and_cuts_the_network(tmp_path):
    project, home = tmp_path / 'my "proj"', tmp_path / "home"
    project.mkdir()
    argv = Sandbox("seatbelt", program="/usr/bin/sandbox-exec").wrap(
        ["/bin/sh", "-c", "make test"], project=project, hidden=(home,)
    )
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[3:] == [
        "/bin/sh",
        "-c",
        "make test",
    ]
    profile = argv[2]
    assert "(deny file-write*)" in profile and "(deny network*)" in profile
    assert '(subpath "' + str(project).replace('"', '\\"') + '")' in profile
    assert f'(deny file-read* (subpath "{home}"))' in profile


def test_bubblewrap_binds_the_project_hides_the_home_and_cuts_the_network(tmp_path):
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    argv = Sandbox("bubblewrap", program="bwrap").wrap(["true"], project=project, hidden=(home,))
    assert argv[0] == "bwrap" and argv[-2:] == ["--", "true"]
    assert ["--ro-bind", "/", "/"] == argv[1:4]
    assert argv.index("--bind") < argv.index(str(home))  # hidden even when inside the project
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    with_net = Sandbox("bubblewrap", program="bwrap", network=True).wrap(["true"], project=project)
    assert "--unshare-net" not in with_net


def test_no_sandbox_leaves_the_command_as_it_is():
    assert Sandbox("none", "off").wrap(["true"], project=Path("/x")) == ["true"]
