"""A pack's slices are redacted among their files' lines around them (``redact_slice``)."""

from __future__ import annotations

from engram.graph.pack._assembly import _redactors, redacted_item
from engram.graph.pack._code_slices import slice_items
from engram.graph.pack._fusion import Evidence, rank_files

TOKEN = "q9Zk2LmP0xT7vB4nR8sW1yC6"


def words(text: str) -> int:
    return len(text.split())


def test_a_slice_that_starts_under_a_credential_name_shows_no_piece_of_the_value():
    lines = ["auth:", "  token:", f"    {TOKEN}", "  region: eu", "retries: 3"]
    files = {"deploy.yaml": lines}
    ranked = rank_files([Evidence("deploy.yaml", 3, 5, "", 1.0, "bm25")])
    (item,) = slice_items(ranked, files.get, words, focus=0)
    assert TOKEN in item.text  # the slice itself starts at the value's line
    assert TOKEN in redacted_item(item)  # alone, the value is not known for one
    text = redacted_item(item, _redactors(files.get))
    assert TOKEN not in text and "[REDACTED credential]" in text
    assert text.splitlines()[0] == item.text.splitlines()[0] and "retries: 3" in text


def test_a_slice_inside_a_private_key_is_hidden_line_by_line_and_keeps_its_gaps():
    body = [f"MIIEpAIBAAKCAQEAzXq9Vbody{n:02d}" for n in range(40)]
    lines = ['KEY = """-----BEGIN RSA PRIVATE KEY-----', *body, '-----END RSA PRIVATE KEY-----"""']
    lines += ["", "def sign(data):", "    return KEY"]
    files = {"keys.py": lines}
    spans = [Evidence("keys.py", 20, 45, "", 1.0, "bm25")]
    terms = frozenset({"sign", "data"})
    (item,) = slice_items(rank_files(spans), files.get, words, focus=0, max_tokens=30, terms=terms)
    assert item.shown == ((20, 24), (42, 45))  # the head, a gap, the lines naming the terms
    text = redacted_item(item, _redactors(files.get))
    assert "MIIE" not in text and "END RSA" not in text
    assert text.splitlines()[6:] == [
        "    … 17 lines",
        "[REDACTED private key]",
        "",
        "def sign(data):",
        "    return KEY",
    ]


def test_a_slice_whose_file_changed_since_is_redacted_as_a_whole():
    lines = ["auth:", "  token:", f"    {TOKEN}"]
    ranked = rank_files([Evidence("deploy.yaml", 2, 3, "", 1.0, "bm25")])
    (item,) = slice_items(ranked, {"deploy.yaml": lines}.get, words, focus=0)
    changed = {"deploy.yaml": ["other", "lines", "now"]}.get
    assert redacted_item(item, _redactors(changed)) == redacted_item(item)
    assert TOKEN not in redacted_item(item)


def test_a_slice_header_naming_a_credential_is_redacted_too():
    name = "sk-proj-T3stTokenAbcdefGhijklMnop1234.py"
    files = {name: ["x = 1", "y = 2"]}
    (item,) = slice_items(rank_files([Evidence(name, 1, 2, "", 1.0, "bm25")]), files.get, words)
    text = redacted_item(item, _redactors(files.get))
    assert "T3stToken" not in text and text.endswith("x = 1\ny = 2")
