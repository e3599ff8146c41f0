"""grep_code's redaction of matching lines among their neighbours (``_line_redaction``)."""

from __future__ import annotations

from engram.graph.tools._line_redaction import redacted_matches
from engram.stores import CONTEXT_LINES, redact_lines
from engram.stores.codeindex import GrepMatch

TOKEN = "q9Zk2LmP0xT7vB4nR8sW1yC6"


def test_a_line_is_redacted_with_the_lines_around_it_and_shown_as_ripgrep_saw_it(tmp_path):
    (tmp_path / "deploy.yaml").write_text(f"auth:\n  token:\n    {TOKEN}\nregion: eu\n")
    matches = [
        GrepMatch("deploy.yaml", 3, f"    {TOKEN}"),
        GrepMatch("deploy.yaml", 4, "region: eu"),
    ]
    assert redacted_matches(tmp_path, matches) == ["    [REDACTED credential]", "region: eu"]


def test_a_private_key_line_is_hidden_however_far_its_begin_line_is(tmp_path):
    body = [f"MIIEpAIBAAKCAQEAzXq9Vbody{n:02d}" for n in range(3 * CONTEXT_LINES + 5)]
    lines = ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----", "x = 1"]
    (tmp_path / "k.txt").write_text("\n".join(lines) + "\n")
    far = len(lines) - 2  # a body line more than CONTEXT_LINES below the BEGIN line
    matches = [GrepMatch("k.txt", far, body[-1]), GrepMatch("k.txt", len(lines), "x = 1")]
    assert redacted_matches(tmp_path, matches) == ["[REDACTED private key]", "x = 1"]


def test_a_file_changed_or_gone_since_ripgrep_read_it_is_redacted_from_its_matches(tmp_path):
    (tmp_path / "a.env").write_text("changed since\n")
    matches = [
        GrepMatch("a.env", 1, "API_TOKEN="),
        GrepMatch("a.env", 2, f"  {TOKEN}"),
        GrepMatch("gone.env", 1, f"OPENAI_API_KEY={TOKEN}"),
    ]
    out = redacted_matches(tmp_path, matches)
    assert out[0] == "API_TOKEN=" and TOKEN not in "".join(out)


def test_files_past_the_read_limits_are_redacted_from_their_matches(tmp_path, monkeypatch):
    import engram.graph.tools._line_redaction as module

    monkeypatch.setattr(module, "READ_CHUNK_BYTES", 16)
    monkeypatch.setattr(module, "MAX_READ_BYTES", 64)
    (tmp_path / "long.yaml").write_text("pad: 1\n" * 20 + f"token:\n  {TOKEN}\n")
    alone = redact_lines([f"  {TOKEN}"])  # what the match gives without its neighbours
    assert redacted_matches(tmp_path, [GrepMatch("long.yaml", 22, f"  {TOKEN}")]) == alone
    (tmp_path / "short.yaml").write_text(f"token:\n  {TOKEN}\n")
    monkeypatch.setattr(module, "MAX_TOTAL_READ_BYTES", 0)
    assert redacted_matches(tmp_path, [GrepMatch("short.yaml", 2, f"  {TOKEN}")]) == alone
    monkeypatch.setattr(module, "MAX_TOTAL_READ_BYTES", 64)
    assert TOKEN not in redacted_matches(tmp_path, [GrepMatch("short.yaml", 2, f"  {TOKEN}")])[0]
