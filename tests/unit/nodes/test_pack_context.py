"""Node pack_context: evidence in state becomes a budgeted, tagged pack; feedback is saved."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps, State
from engram.graph.pack._assembly import NO_EVIDENCE_NOTE, resolve_task_files
from engram.graph.retrieval import record_branch_time
from engram.nodes import pack_context
from engram.nodes._pack_context import NO_MODEL_NOTE, RANKINGS, SEMANTIC_SKIPPED
from engram.stores.memory import BaseStorePackFeedback
from engram.stores.project import project_key


def words(text: str) -> int:
    return len(text.split())


def make_project(tmp_path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "parser.py").write_text(
        "def parse(text):\n    return text.split()\n\n\ndef tokens(text):\n    return []\n"
    )
    (root / "src" / "cli.py").write_text("import parser\n\n\ndef main():\n    parse('x')\n")
    (root / "ENGRAM.md").write_text("Use four spaces.\n\nNever print in library code.\n")
    (root / ".env").write_text("SECRET=1\n")
    return root


def state(**kw) -> State:
    hits = [
        {
            "path": "src/parser.py",
            "start_line": 1,
            "end_line": 2,
            "symbol": "parse",
            "kind": "function",
            "score": 0.9,
            "source": "exact",
        },
        {
            "path": "src/cli.py",
            "start_line": 4,
            "end_line": 5,
            "symbol": "main",
            "kind": "function",
            "score": 0.5,
            "source": "bm25",
        },
        {
            "path": ".env",
            "start_line": 1,
            "end_line": 1,
            "symbol": "",
            "kind": "file",
            "score": 0.1,
            "source": "bm25",
        },
    ]
    base = dict(
        messages=[HumanMessage("fix parse in src/parser.py")],
        task="fix parse in src/parser.py",
        task_profile={"task_type": "debug", "files": ["parser.py"]},
        memory_block="[Memory]\n- parser.py once broke on tabs",
        code_hits=hits,
    )
    base.update(kw)
    return State(**base)


def runtime(
    root, home, *, mode="context", budget=0, store=None, model="", trust=True
) -> Runtime[Context]:
    # A generous branch timeout: a cold first import on a loaded machine is not a hang.
    ctx = Context(
        project=str(root),
        engram_home=str(home),
        mode=mode,
        budget=budget,
        context_window=8_000,
        model=model,
        branch_timeout_ms=30_000,
        trust_project=trust,
    )
    return Runtime(context=ctx, store=store)


async def test_context_mode_pack_has_every_section_and_json_contract(tmp_path, engram_home):
    root = make_project(tmp_path)
    store = InMemoryStore()
    update = pack_context(
        state(), runtime(root, engram_home, store=store), deps=Deps(count_tokens=words)
    )
    pack = update["context_pack"]
    names = [s["name"] for s in pack["sections"]]
    assert names == ["rules", "memory", "code_map", "slices", "history"]
    by = {s["name"]: s for s in pack["sections"]}
    assert by["slices"]["items"][0]["path"] == "src/parser.py"
    assert {"path", "start_line", "end_line", "symbol", "score", "reasons"} <= set(
        by["slices"]["items"][0]
    )
    assert all(i["path"] != ".env" for i in by["slices"]["items"])  # secrets never read
    assert "Never print" in pack["text"] and "parser.py once broke" in pack["text"]
    assert pack["tokens"] <= pack["budget"] == pack["plan"]["budget"]
    assert pack["plan"]["task_type"] == "debug"
    saved = BaseStorePackFeedback(store).get(project_key(root), "debug")
    # The small project used far less than planned: one miss of the deviation streak.
    assert saved.deviations == (pack["tokens"] / pack["budget"],)


async def test_agent_mode_text_leaves_out_rules_and_memory(tmp_path, engram_home):
    root = make_project(tmp_path)
    update = pack_context(
        state(), runtime(root, engram_home, mode="agent"), deps=Deps(count_tokens=words)
    )
    text = update["context_pack"]["text"]
    assert "Never print" not in text and "once broke" not in text
    assert "def parse" in text
    rules = next(s for s in update["context_pack"]["sections"] if s["name"] == "rules")
    assert rules["tokens"] > 0  # still counted against the budget


async def test_budget_override_and_identical_output(tmp_path, engram_home):
    root = make_project(tmp_path)
    rt = runtime(root, engram_home, budget=60)
    a = pack_context(state(), rt, deps=Deps(count_tokens=words))
    b = pack_context(
        state(code_hits=list(reversed(state().code_hits))), rt, deps=Deps(count_tokens=words)
    )
    assert a["context_pack"]["budget"] == 60 and a["context_pack"]["tokens"] <= 60
    assert a["context_pack"]["text"] == b["context_pack"]["text"]


async def test_no_evidence_still_packs_with_a_note(tmp_path, engram_home):
    root = make_project(tmp_path)
    s = state(
        code_hits=[],
        task_profile={"task_type": "explain"},
        notes=["search_semantic timed out after 500 ms; continuing with the other branches"],
    )
    update = pack_context(s, runtime(root, engram_home), deps=Deps(count_tokens=words))
    pack = update["context_pack"]
    assert NO_EVIDENCE_NOTE in pack["notes"]
    assert any("timed out" in n for n in pack["notes"])
    assert "Never print" in pack["text"]


async def test_history_section_uses_earlier_exchanges(tmp_path, engram_home):
    root = make_project(tmp_path)
    messages = [
        HumanMessage("why does parse drop tabs"),
        AIMessage("parse splits on spaces"),
        HumanMessage("fix parse in src/parser.py"),
    ]
    update = pack_context(
        state(messages=messages), runtime(root, engram_home), deps=Deps(count_tokens=words)
    )
    history = next(s for s in update["context_pack"]["sections"] if s["name"] == "history")
    assert len(history["items"]) == 1


def test_resolve_task_files(tmp_path):
    root = make_project(tmp_path)
    found = resolve_task_files(
        root, ["src/cli.py", "parser.py", "nope.py", "../x.py", ".env"], ["src/parser.py"]
    )
    assert found == ["src/cli.py", "src/parser.py"]


class FakeIndex:
    def __init__(self):
        self.modes = []

    def is_built(self):
        return True

    def search(self, query, *, mode, k):
        from engram.stores.codeindex import CodeHit

        self.modes.append(mode)
        return [CodeHit("src/cli.py", 4, 5, "main", "function", 0.3, mode)]

    def localized_chunks(self, issue, *, files, prefer):
        from engram.stores.codeindex import CodeHit

        self.localized = (issue, files, tuple(prefer))
        return [CodeHit("src/parser.py", 0, 0, "", "file", 1.0, "localizer")]


async def test_deepens_thin_evidence_but_skips_vectors_after_a_semantic_timeout(
    tmp_path, engram_home
):
    root = make_project(tmp_path)
    index = FakeIndex()
    deps = Deps(count_tokens=words, open_code_index=lambda _: index)
    update = pack_context(state(), runtime(root, engram_home), deps=deps)
    assert index.modes == ["bm25", "dense"]
    code_map = next(s for s in update["context_pack"]["sections"] if s["name"] == "code_map")
    cli = next(i for i in code_map["items"] if i["path"] == "src/cli.py")
    assert any(r.startswith("dense #1") for r in cli["reasons"])
    assert index.localized[2] == ("source",)
    assert code_map["items"][0]["path"] == "src/parser.py"  # the localizer's first file leads
    index.modes.clear()
    note = "search_semantic timed out after 500 ms; continuing with the other branches"
    pack_context(
        state(notes=[note], degraded_branches=["search_semantic"]),
        runtime(root, engram_home),
        deps=deps,
    )
    assert index.modes == ["bm25"]


async def test_a_hanging_index_cannot_hang_the_pack(tmp_path, engram_home):
    import time

    root = make_project(tmp_path)

    def hang(_):
        time.sleep(3)

    deps = Deps(count_tokens=words, open_code_index=hang)
    rt = Runtime(
        context=Context(
            project=str(root), engram_home=str(engram_home), mode="context", branch_timeout_ms=200
        )
    )
    record_branch_time(rt.context, RANKINGS, 0)  # opened before in this process: not cold
    started = time.perf_counter()
    update = pack_context(state(), rt, deps=deps)
    assert (time.perf_counter() - started) < 1.0
    assert any("index rankings timed out after 200 ms" in n for n in update["notes"])
    assert update["context_pack"]["sections"][3]["items"]  # slices from the hits in state


def test_agent_mode_without_a_model_says_so_after_the_pack(tmp_path, engram_home):
    root = make_project(tmp_path)
    update = pack_context(
        state(), runtime(root, engram_home, mode="agent"), deps=Deps(count_tokens=words)
    )
    assert "def parse" in update["context_pack"]["text"]
    assert NO_MODEL_NOTE in update["notes"]
    (reply,) = update["messages"]
    assert isinstance(reply, AIMessage) and reply.content == NO_MODEL_NOTE
    assert "ENGRAM_MODEL" in NO_MODEL_NOTE and "`mode` to `context`" in NO_MODEL_NOTE


def test_no_note_when_a_model_will_answer_or_only_the_pack_was_asked(tmp_path, engram_home):
    root = make_project(tmp_path)
    for rt in (
        runtime(root, engram_home, mode="agent", model="gpt-4.1-mini"),
        runtime(root, engram_home, mode="context"),
    ):
        update = pack_context(state(), rt, deps=Deps(count_tokens=words))
        assert "messages" not in update and NO_MODEL_NOTE not in update["notes"]


def test_the_pack_tells_the_model_when_semantic_search_dropped_out(tmp_path, engram_home):
    root = make_project(tmp_path)
    degraded = state(degraded_branches=["search_semantic"])
    for item, expected in ((state(), False), (degraded, True)):
        update = pack_context(item, runtime(root, engram_home), deps=Deps(count_tokens=words))
        assert (SEMANTIC_SKIPPED in update["context_pack"]["text"]) is expected
