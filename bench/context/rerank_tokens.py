"""Tokens per call of the optional model re-ranker (``rerank_files``), on real tasks.

Usage:
    .venv/bin/python bench/context/rerank_tokens.py --tree PROJECT [--tasks FILE] [--n 20]

PROJECT must be indexed already (``engram index PROJECT``; ENGRAM_HOME as for that run).
Tasks are one per line in FILE, or by default the subjects of the project's last ``--n``
commits. For each task the pack pipeline runs in process with re-ranking on, against the
repository's local HTTP stub of the OpenAI API (it answers with an empty list, so the ranking
is kept); the prompt the stub received is counted with engram's token estimator, and the
answer a model would give (the 20 candidate paths as JSON) likewise. Prints the median and
maximum per call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph.store.memory import InMemoryStore  # noqa: E402

from engram.api._pack import ensure_openers, run_pack_graph  # noqa: E402
from engram.builder import build_graph  # noqa: E402
from engram.graph import Context, Deps, count_text  # noqa: E402
from engram.graph._llm import make_model  # noqa: E402
from tests.support.openai_stub import OpenAIStub  # noqa: E402


def tasks_of(tree: Path, n: int, path: str) -> list[str]:
    if path:
        return [t for t in Path(path).read_text(encoding="utf-8").splitlines() if t.strip()][:n]
    log = subprocess.run(
        ["git", "log", f"-{n}", "--format=%s"], cwd=tree, capture_output=True, text=True
    )
    return [line for line in log.stdout.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True)
    parser.add_argument("--tasks", default="")
    parser.add_argument("--n", type=int, default=20)
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    prompts: list[int] = []
    answers: list[int] = []
    with OpenAIStub(lambda body: {"content": '{"files": []}'}) as stub:
        context = Context.from_env().replace(
            project=str(tree),
            mode="context",
            model="stub-model",
            base_url=stub.base_url,
            rerank_files=True,
            auto_approve=True,  # high-risk tasks would stop for a confirmation first
        )
        deps = ensure_openers(Deps(model_factory=make_model, store=InMemoryStore()))
        graph = build_graph(deps, store=InMemoryStore())
        for task in tasks_of(tree, args.n, args.tasks):
            before = len(stub.requests)
            pack = run_pack_graph(graph, context, task)
            if len(stub.requests) == before:
                continue  # fewer than two files: nothing to re-rank
            prompt = stub.requests[-1]["messages"][-1]["content"]
            prompts.append(count_text(prompt))
            code_map = next(s for s in pack["sections"] if s["name"] == "code_map")
            paths = [item["path"] for item in code_map["items"]][:20]
            answers.append(count_text(json.dumps({"files": paths})))
    if not prompts:
        raise SystemExit("no task reached the re-ranker (is the project indexed?)")
    print(
        f"| {tree.name} | {len(prompts)} | {statistics.median(prompts):.0f} | {max(prompts)} | "
        f"{statistics.median(answers):.0f} | {max(answers)} |"
    )


if __name__ == "__main__":
    main()
