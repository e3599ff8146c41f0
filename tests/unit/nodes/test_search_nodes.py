"""search_exact / search_semantic nodes and the exact-hits router helper."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State
from engram.nodes import search_exact, search_semantic
from engram.nodes._search_exact import bounded_locator
from engram.stores._errors import BackendUnavailableError
from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder


def project(tmp_path: Path) -> Path:
    (tmp_path / "billing.py").write_text(
        "class Invoice:\n    def total_amount(self):\n        return sum(self.lines)\n"
    )
    (tmp_path / "report.py").write_text(
        "from billing import Invoice\n\ndef monthly_report(invoices):\n"
        "    return [i.total_amount() for i in invoices]\n"
    )
    return tmp_path


def runtime(root: Path) -> Runtime:
    return Runtime(context=Context(project=str(root), embedding_provider="hash"))


@pytest.mark.integration  # runs ripgrep
async def test_search_exact_finds_definitions_of_named_identifiers(tmp_path):
    root = project(tmp_path)
    out = search_exact(State(task="Why is total_amount wrong?"), runtime(root), deps=Deps())
    hits = out["code_hits"]
    assert hits[0]["path"] == "billing.py"
    assert hits[0]["symbol"] == "Invoice.total_amount(self)"
    assert set(hits[0]) == {"path", "start_line", "end_line", "symbol", "kind", "score", "source"}
    assert {h["path"] for h in hits} == {"billing.py", "report.py"}


async def test_search_exact_without_code_terms_returns_nothing(tmp_path):
    out = search_exact(
        State(task="make the report faster"), runtime(project(tmp_path)), deps=Deps()
    )
    assert out == {"code_hits": []}


def test_bounded_locator_chunks_small_files_and_keeps_lines_of_large_ones(tmp_path):
    root = project(tmp_path)
    body = "".join(f"    v{n} = total_amount({n})\n" for n in range(400))
    (root / "big.py").write_text("def generated():\n" + body)
    size = (root / "big.py").stat().st_size
    locate = bounded_locator(root, max_file_bytes=size - 1)
    small = locate("billing.py", 3)
    assert small is not None and small.symbol == "Invoice.total_amount(self)"
    big = locate("big.py", 7)
    assert big is not None and (big.kind, big.start_line, big.end_line) == ("line", 7, 7)
    assert locate("missing.py", 1) is None
    whole = bounded_locator(root, max_file_bytes=size)("big.py", 7)
    assert whole is not None and whole.symbol.startswith("generated")


@pytest.mark.integration  # runs ripgrep
async def test_search_exact_gives_the_same_hits_every_time(tmp_path):
    root = project(tmp_path)
    (root / "zz_big.py").write_text("".join(f"x{n} = total_amount\n" for n in range(9000)))
    state = State(task="Why is total_amount wrong?")
    runs = [(search_exact(state, runtime(root), deps=Deps()))["code_hits"] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0]["symbol"] == "Invoice.total_amount(self)"
    big = [h for h in runs[0] if h["path"] == "zz_big.py"]
    assert big and all(h["kind"] == "line" and h["start_line"] == h["end_line"] for h in big)


async def test_search_semantic_without_index_leaves_a_note(tmp_path):
    out = search_semantic(State(task="invoice totals"), runtime(project(tmp_path)), deps=Deps())
    assert "code_hits" not in out and "engram index" in out["notes"][0]


async def test_search_semantic_with_unbuilt_index_leaves_a_note(tmp_path):
    root = project(tmp_path)
    deps = Deps(open_code_index=lambda c: open_memory_code_index(root, embedder=HashEmbedder()))
    out = search_semantic(State(task="invoice totals"), runtime(root), deps=deps)
    assert "run `engram index`" in out["notes"][0]


async def test_search_semantic_returns_hits_from_the_index(tmp_path):
    root = project(tmp_path)
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    deps = Deps(open_code_index=lambda c: index)
    out = search_semantic(State(task="monthly report of invoices"), runtime(root), deps=deps)
    assert out["code_hits"][0]["path"] == "report.py"
    assert out["code_hits"][0]["source"] == "fused"
    assert "notes" not in out
    # An index whose vectors came from another model: hits stay, a note says why dense
    # results may be missing.
    index.manifest.set_meta("model_id", "older-model")
    out = search_semantic(State(task="monthly report of invoices"), runtime(root), deps=deps)
    assert out["code_hits"][0]["path"] == "report.py"
    assert "embedded with older-model" in out["notes"][0] and "engram index" in out["notes"][0]


async def test_search_semantic_degrades_when_the_backend_is_down(tmp_path):
    def broken(context):
        raise BackendUnavailableError("cannot reach Chroma", hint="start the server")

    deps = Deps(open_code_index=broken)
    out = search_semantic(State(task="invoice"), runtime(project(tmp_path)), deps=deps)
    assert out["notes"] == ["semantic search unavailable: cannot reach Chroma (start the server)"]


async def test_search_semantic_notes_a_chroma_server_that_is_down(tmp_path):
    from engram.graph.retrieval._vector_outage import UnreachableVectors

    root = project(tmp_path)
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    index.vectors = UnreachableVectors("http://u:pw-5678@chroma:8000", "refused")
    out = search_semantic(
        State(task="monthly report of invoices"),
        runtime(root),
        deps=Deps(open_code_index=lambda c: index),
    )
    assert out["code_hits"][0]["path"] == "report.py"
    [note] = out["notes"]
    assert "http://u:***@chroma:8000 cannot be reached" in note and "pw-5678" not in note


def test_an_unchanged_files_chunks_come_from_the_index_and_a_changed_ones_are_cut_again(
    tmp_path,
):
    root = project(tmp_path)
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    assert index.indexed_chunks("billing.py") is None  # the localizer's tables are not built
    index.localized_chunks("Invoice.total_amount is wrong")  # builds them
    indexed = index.indexed_chunks("billing.py")
    on_the_fly = bounded_locator(root)
    assert indexed and [on_the_fly("billing.py", c.start_line) for c in indexed] == [
        bounded_locator(root, indexed=index.indexed_chunks)("billing.py", c.start_line)
        for c in indexed
    ]
    assert index.indexed_chunks("missing.py") is None
    text = (root / "billing.py").read_text()
    (root / "billing.py").write_text("# moved down\n" + text)
    assert index.indexed_chunks("billing.py") is None  # changed since indexed: cut again
    moved = bounded_locator(root, indexed=index.indexed_chunks)("billing.py", 3)
    assert moved is not None and (moved.symbol, moved.start_line, moved.end_line) == (
        "Invoice.total_amount(self)",
        3,
        4,
    )  # where the method is now, one line further down than the index has it


@pytest.mark.integration  # runs ripgrep
async def test_search_exact_gives_the_same_hits_with_the_index_open_or_not(tmp_path):
    root = project(tmp_path)
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    index.localized_chunks("Invoice.total_amount is wrong")
    state = State(task="Why is Invoice.total_amount wrong in monthly_report?")
    alone = search_exact(state, runtime(root), deps=Deps())["code_hits"]
    deps = Deps(open_code_index=lambda c: index)
    assert deps.code_index(runtime(root).context) is index  # open, as after the branches ran
    assert search_exact(state, runtime(root), deps=deps)["code_hits"] == alone
