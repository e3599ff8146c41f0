"""read_file streams within its caps and pages through lines longer than the cap."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest

from engram.graph._errors import ToolError
from engram.graph.tools._file_reading import READ_MAX_CHARS, read_project_file

HINT = re.compile(r"call read_file with start_line=(\d+)(?: and start_char=(\d+))?\]$")


def _page_through(root: Path, path: str) -> tuple[list[str], int]:
    """Follow the continuation hints to the end; return the bodies read and the call count."""
    bodies: list[str] = []
    start_line, start_char, calls = 1, 0, 0
    while True:
        calls += 1
        out = read_project_file(root, path, start_line, None, start_char)
        lines = out.split("\n")[1:]
        hint = HINT.search(lines[-1]) if lines else None
        if hint:
            lines = lines[:-1]
        bodies += [line.split("\t", 1)[1] for line in lines]
        if hint is None:
            return bodies, calls
        start_line, start_char = int(hint.group(1)), int(hint.group(2) or 0)
        assert calls < 100, "paging does not advance"


def test_a_single_line_longer_than_the_cap_is_paged(tmp_path: Path):
    line = "".join(f"{i:07d}," for i in range(31_250))  # 250,000 characters, one line
    (tmp_path / "min.js").write_text(line)
    first = read_project_file(tmp_path, "min.js")
    assert first.startswith("min.js (line 1 of 1, characters 0-")
    assert "start_char=" in first
    bodies, calls = _page_through(tmp_path, "min.js")
    assert "".join(bodies) == line
    assert calls == -(-len(line) // (READ_MAX_CHARS - 8))


def test_a_long_line_after_short_ones_starts_a_new_call(tmp_path: Path):
    long = "x" * (READ_MAX_CHARS * 2)
    (tmp_path / "f.txt").write_text(f"short one\nshort two\n{long}\nlast\n")
    first = read_project_file(tmp_path, "f.txt")
    assert "(lines 1-2 of 4)" in first and first.endswith("start_line=3]")
    bodies, _ = _page_through(tmp_path, "f.txt")
    assert bodies[:2] == ["short one", "short two"]
    assert "".join(bodies[2:-1]) == long and bodies[-1] == "last"


def test_start_char_past_the_line_end_is_a_clear_error(tmp_path: Path):
    (tmp_path / "f.txt").write_text("abc\n")
    with pytest.raises(ToolError, match="start_char 10 is past its end"):
        read_project_file(tmp_path, "f.txt", 1, None, 10)
    with pytest.raises(ToolError, match="past the end"):
        read_project_file(tmp_path, "f.txt", 5)


def test_line_ranges_and_line_cap(tmp_path: Path):
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    out = read_project_file(tmp_path, "f.txt", 10, 12)
    assert out.splitlines() == [
        "f.txt (lines 10-12 of 3000)",
        "    10\tline 10",
        "    11\tline 11",
        "    12\tline 12",
    ]
    assert read_project_file(tmp_path, "f.txt").endswith(
        "[… 1000 more lines; call read_file with start_line=2001]"
    )


def test_a_huge_file_is_read_in_bounded_memory(tmp_path: Path):
    rows = 400_000  # 36 MB of short lines
    with (tmp_path / "big.log").open("w") as handle:
        handle.write(("0123456789" * 9 + "\n") * rows)
        handle.write("z" * 3_000_000)  # and one long last line
    tracemalloc.start()
    try:
        out = read_project_file(tmp_path, "big.log", rows + 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.startswith(f"big.log (line {rows + 1} of {rows + 1}, characters 0-")
    assert peak < 2_000_000, peak


def test_a_page_is_redacted_among_the_lines_around_it(tmp_path: Path):
    token = "q9Zk2LmP0xT7vB4nR8sW1yC6"
    (tmp_path / "deploy.yaml").write_text(f"auth:\n  token:\n    {token}\nregion: eu\n")
    for start in (1, 3):
        out = read_project_file(tmp_path, "deploy.yaml", start)
        assert token not in out and "     3\t    [REDACTED credential]" in out
        assert out.endswith("     4\tregion: eu")
    body = [f"MIIEpAIBAAKCAQEAzXq9Vbody{n:02d}" for n in range(40)]
    (tmp_path / "notes.txt").write_text(
        "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"])
        + "\nafter the key\n"
    )
    page = read_project_file(tmp_path, "notes.txt", 20, 25)
    assert "MIIE" not in page and page.count("[REDACTED private key]") == 6
    tail = read_project_file(tmp_path, "notes.txt", 40)
    assert "MIIE" not in tail and "PRIVATE KEY-----" not in tail
    assert tail.endswith("    43\tafter the key")


def test_a_page_of_code_keeps_names_that_only_look_like_credentials(tmp_path: Path):
    (tmp_path / "login.py").write_text(
        "def login(user, password):\n    token = (\n        make_token(user)\n    )\n"
    )
    out = read_project_file(tmp_path, "login.py", 2, code=True)
    assert "make_token(user)" in out and "[REDACTED" not in out
