"""Code index contract: incremental updates and search, over in-memory and Chroma backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.stores import IndexNotBuiltError
from engram.stores.codeindex import open_code_index
from engram.stores.codeindex._index import CodeIndex, open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from tests.support.state import state_of

FILES = {
    "app/auth.py": (
        'import hashlib\n\n\nclass TokenStore:\n    """Keeps login tokens."""\n\n'
        "    def issue_token(self, user):\n        return hashlib.sha1(user.encode()).hexdigest()\n\n"
        "    def revoke_token(self, token):\n        self.tokens.discard(token)\n"
    ),
    "app/render.py": (
        'def render_template(name, values):\n    """Fill an HTML template."""\n'
        "    return open(name).read().format(**values)\n"
    ),
    "app/net.py": "def parse_url(url):\n    scheme, rest = url.split('://', 1)\n    return scheme, rest\n",
    "README.md": "# Demo\n\nA tiny app with tokens, templates and URLs.\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(params=["memory", pytest.param("chroma", marks=pytest.mark.integration)])
def make_index(request, tmp_path):
    def make(root: Path) -> CodeIndex:
        if request.param == "memory":
            return open_memory_code_index(root, embedder=HashEmbedder())
        return open_code_index(root, embedder=HashEmbedder(), state=state_of(root))

    return make


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    write(root, FILES)
    return root


def paths(hits) -> list[str]:
    return [h.path for h in hits]


def test_search_before_update_raises_index_not_built(make_index, project):
    index = make_index(project)
    assert not index.is_built()
    with pytest.raises(IndexNotBuiltError):
        index.search("token")


def test_first_update_indexes_everything_and_finds_code(make_index, project):
    index = make_index(project)
    stats = index.update()
    assert index.is_built()
    assert (stats.files, stats.parsed_files, stats.deleted_files) == (4, 4, 0)
    assert stats.chunks == stats.new_chunks > 4
    for mode in ("hybrid", "bm25", "dense", "exact"):
        hits = index.search("revoke_token of a login token", mode=mode, k=3)
        assert hits and hits[0].path == "app/auth.py", mode
    best = index.search("revoke_token", mode="exact", k=1)[0]
    assert (best.symbol, best.kind, best.source) == (
        "TokenStore.revoke_token(self, token)",
        "method",
        "exact",
    )
    assert index.search("parse the url scheme", k=1)[0].source == "fused"
    files = index.search_files("parse url scheme", k=2)
    assert files[0].path == "app/net.py" and files[0].reasons


def test_noop_update_parses_and_embeds_nothing(make_index, project):
    index = make_index(project)
    first = index.update()
    os.utime(project / "app/net.py", ns=(1, 1))  # touched, same content
    again = index.update()
    assert (again.parsed_files, again.new_chunks, again.removed_chunks) == (0, 0, 0)
    assert again.chunks == first.chunks


def test_modify_add_delete_and_rename(make_index, project):
    index = make_index(project)
    index.update()
    (project / "app/render.py").write_text(
        "def render_markdown(text):\n    return text.replace('*', '')\n"
    )
    write(project, {"app/mail.py": "def send_mail(to, body):\n    return smtp_send(to, body)\n"})
    (project / "README.md").unlink()
    (project / "app/net.py").rename(project / "app/urls.py")
    stats = index.update()
    assert (stats.parsed_files, stats.deleted_files) == (3, 2)
    assert stats.new_chunks >= 3 and stats.removed_chunks >= 3
    assert paths(index.search("render_markdown", mode="exact"))[:1] == ["app/render.py"]
    assert all("render_template" not in h.symbol for h in index.search("render_template", k=50))
    assert paths(index.search("send_mail smtp", k=1)) == ["app/mail.py"]
    everything = {h.path for h in index.search("url scheme tokens mail render", mode="bm25", k=50)}
    assert "README.md" not in everything and "app/net.py" not in everything
    assert paths(index.search("parse_url", k=1)) == ["app/urls.py"]
    dense = {h.path for h in index.search("url tokens mail markdown demo", mode="dense", k=50)}
    assert dense <= {"app/auth.py", "app/render.py", "app/mail.py", "app/urls.py"}


def test_secrets_and_ignored_files_are_not_indexed(make_index, project):
    write(
        project,
        {
            ".env": "API_KEY=secret_value_123\n",
            ".gitignore": "build_out/\n",
            "build_out/gen.py": "def generated_thing():\n    pass\n",
        },
    )
    index = make_index(project)
    index.update()
    found = {h.path for h in index.search("API_KEY secret_value_123 generated_thing", k=50)}
    assert ".env" not in found and "build_out/gen.py" not in found


def test_concurrent_searches_from_threads(make_index, project):
    from concurrent.futures import ThreadPoolExecutor

    index = make_index(project)
    index.update()
    queries = ["revoke_token", "parse url", "render template", "tokens"] * 10
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: index.search(q, k=2), queries))
    assert all(results) and results[0] == results[4]


def test_localized_chunks_give_the_leading_files_chunks_and_follow_an_update(make_index, project):
    index = make_index(project)
    index.update()
    hits = index.localized_chunks("TokenStore.revoke_token drops the wrong token", files=2)
    assert hits[0].path == "app/auth.py" and hits[0].source == "localizer"
    auth = [h for h in hits if h.path == "app/auth.py"]
    # the leading file gives every one of its chunks once, the one the issue names first
    assert auth[0].symbol == "TokenStore.revoke_token(self, token)"
    assert len({(h.start_line, h.end_line) for h in auth}) == len(auth) > 2
    (project / "app" / "auth.py").write_text(
        FILES["app/auth.py"] + "\n    def rotate_token(self, token):\n        return token\n"
    )
    index.update()
    symbols = {h.symbol for h in index.localized_chunks("TokenStore.rotate_token", files=1)}
    assert "TokenStore.rotate_token(self, token)" in symbols


@pytest.mark.integration
def test_updates_of_one_index_folder_wait_for_each_other_across_processes(tmp_path):
    """Another process holding the index's update lock (``engram index``) holds this update back."""
    import subprocess
    import sys
    import threading

    from engram.stores.codeindex._index import INDEX_DIR, UPDATE_LOCK

    root = tmp_path / "proj"
    write(root, FILES)
    state = state_of(root)
    index = open_code_index(root, embedder=HashEmbedder(), state=state)
    lock = state.path(INDEX_DIR, UPDATE_LOCK)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'a+b'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); sys.stdin.read()",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = threading.Event()
        worker = threading.Thread(target=lambda: (index.update(), done.set()))
        worker.start()
        assert not done.wait(1.0)  # waits while the other process holds the lock
        holder.communicate("")  # the other process ends: its lock goes with it
        assert done.wait(30)
        worker.join()
    finally:
        if holder.poll() is None:
            holder.kill()
    assert index.search("issue login token", k=1)[0].path == "app/auth.py"
