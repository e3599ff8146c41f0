"""``kill -9`` at random moments of ``engram index``, ``memory import``, ``run`` and compaction.

Each trial starts the real CLI as a subprocess, kills it after a random delay, and checks what a
crash may leave: the stores open, the code index answers from its old or its new state (and
``engram index`` recovers), an import is whole per batch, a session resumes, a compaction
leaves either the old history or the compacted one. A check returns "" when it held, else what
went wrong. Used by ``tests/integration/test_crash_points.py`` and
``bench/reliability/crashes.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.graph.compaction._history_rules import SUMMARY_SECTIONS
from tests.support.openai_stub import OpenAIStub
from tests.support.storage_faults import ENGRAM

IMPORT_FACTS = 2_000
IMPORT_BATCH = 500  # engram.stores.memory._admin.IMPORT_BATCH
NEW_SYMBOL = "reconcile_ledger_totals"
THREAD = "crash-trial"
TASK = "Which function parses the settings file?"
ANSWER = "`load_settings` in app/settings.py parses the settings file."
SUMMARY = "\n\n".join(
    f"## {name}\n- the settings loader is app/settings.py" for name in SUMMARY_SECTIONS
)
COMPACTED = "[Compacted conversation summary]"
Trial = Callable[[Path, random.Random], str]


def cli(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    """Run ``engram`` to completion."""
    return subprocess.run(
        [ENGRAM, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def killed(args: list[str], env: dict[str, str], cwd: Path, delay_s: float) -> bool:
    """Start ``engram``, ``kill -9`` it after ``delay_s``; return True if it was still running."""
    proc = subprocess.Popen(
        [ENGRAM, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        proc.wait(timeout=delay_s)
        return False
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def base_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every trial: its own home, the hash embedder, no colour."""
    env = {
        **os.environ,
        "ENGRAM_HOME": str(home),
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
        "NO_COLOR": "1",
        **(extra or {}),
    }
    env.pop("ENGRAM_PROJECT", None)
    return env


def failed(done: subprocess.CompletedProcess[str], what: str) -> str:
    """Return why ``done`` did not hold ("" when it exited 0 without a traceback)."""
    output = done.stdout + done.stderr
    if done.returncode != 0 or "Traceback" in output:
        return f"{what}: exit {done.returncode}: {output[-400:]}"
    return ""


def doctor_clean(env: dict[str, str], cwd: Path) -> str:
    """Return "" when ``engram doctor`` finds no store broken."""
    done = cli(["doctor", "--json"], env, cwd)
    try:
        broken = [row for row in json.loads(done.stdout) if row["status"] == "broken"]
    except json.JSONDecodeError:
        return f"doctor: {done.stdout[-300:]} {done.stderr[-300:]}"
    return f"doctor found {broken}" if broken else ""


# -- engram index -------------------------------------------------------------------------


def make_code_project(root: Path, files: int = 120) -> Path:
    """Write a project big enough that indexing takes a few seconds."""
    for i in range(files):
        body = "\n\n".join(
            f'def step_{i}_{j}(value):\n    """Step {j} of stage {i}."""\n'
            f"    return value * {j} + {i}"
            for j in range(8)
        )
        folder = root / f"pkg_{i % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{i}.py").write_text(f'"""Stage {i}."""\n\n{body}\n', encoding="utf-8")
    return root


def index_trial(work: Path, rng: random.Random) -> str:
    """Kill ``engram index`` while it adds a file; the index answers old or new, then recovers."""
    project, env = make_code_project(work / "project"), base_env(work / "home")
    if problem := failed(cli(["index", "."], env, project), "first index"):
        return problem
    (project / "pkg_0" / "ledger.py").write_text(
        f"def {NEW_SYMBOL}(rows):\n    return sum(r.total for r in rows)\n", encoding="utf-8"
    )
    for i in range(0, 120, 3):  # enough changed files that the update takes a while
        path = project / f"pkg_{i % 6}" / f"mod_{i}.py"
        path.write_text(path.read_text(encoding="utf-8") + f"\n\nEXTRA_{i} = {i}\n")
    killed(["index", "."], env, project, rng.uniform(0.5, 6.0))
    between = cli(["search", NEW_SYMBOL, "--json"], env, project)
    if problem := failed(between, "search after the kill"):
        return problem
    if problem := failed(cli(["index", "."], env, project), "index after the kill"):
        return problem
    after = cli(["search", NEW_SYMBOL, "--json"], env, project)
    if "pkg_0/ledger.py" not in after.stdout:
        return f"the recovered index misses the new file: {after.stdout[-300:]}"
    return doctor_clean(env, project)


# -- engram memory import -----------------------------------------------------------------


def import_trial(work: Path, rng: random.Random) -> str:
    """Kill ``memory import`` of several batches; each batch is stored whole or not at all."""
    project, env = work / "project", base_env(work / "home")
    project.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "id": f"fact{n:05d}",
                "scope": "global",
                "text": f"Service {n} listens on port {10_000 + n}",
            }
        )
        for n in range(IMPORT_FACTS)
    ]
    (project / "facts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    killed(["memory", "import", "facts.jsonl"], env, project, rng.uniform(0.3, 5.0))
    listed = cli(["memory", "list", "--json"], env, project)
    if problem := failed(listed, "memory list after the kill"):
        return problem
    count = len(json.loads(listed.stdout))
    if count % IMPORT_BATCH and count != IMPORT_FACTS:
        return f"{count} facts stored: not whole batches of {IMPORT_BATCH}"
    if problem := failed(cli(["memory", "import", "facts.jsonl"], env, project), "re-import"):
        return problem
    again = json.loads(cli(["memory", "list", "--json"], env, project).stdout)
    if len(again) != IMPORT_FACTS:
        return f"re-import left {len(again)} facts, not {IMPORT_FACTS}"
    return doctor_clean(env, project)


# -- engram run and compaction against the HTTP OpenAI stub -------------------------------


def scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """Answer by the last message alone, so a resumed session gets the same replies."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if "compacted" in str(last.get("content", "")):
        return {"content": SUMMARY}
    if "grep_code" not in {t["function"]["name"] for t in body.get("tools") or []}:
        return {"content": "[]"}  # fact extraction and other side calls
    if last.get("role") == "tool" and str(last.get("tool_call_id", "")).startswith("grep"):
        return {
            "content": "",
            "tool_calls": [
                {
                    "id": f"read{len(messages)}",
                    "name": "read_file",
                    "args": {"path": "app/settings.py"},
                }
            ],
        }
    if last.get("role") == "tool":
        return {"content": ANSWER}
    return {
        "content": "",
        "tool_calls": [
            {
                "id": f"grep{len(messages)}",
                "name": "grep_code",
                "args": {"pattern": "def load_settings"},
            }
        ],
    }


def make_app_project(root: Path) -> Path:
    """Write the small project the scripted model works in."""
    (root / "app").mkdir(parents=True)
    (root / "app" / "settings.py").write_text(
        "import tomllib\n\n\ndef load_settings(path):\n    with open(path, 'rb') as handle:\n"
        "        return tomllib.load(handle)\n"
        + "".join(
            f"\n\ndef option_{n}(settings):\n    return settings.get('option_{n}', {n})\n"
            for n in range(60)
        ),
        encoding="utf-8",
    )
    return root


def session(env: dict[str, str], project: Path) -> tuple[dict[str, Any] | None, str]:
    """Return the crash-trial session as ``sessions show`` gives it (None if none), or why not."""
    listed = cli(["sessions", "list", "--json"], env, project)
    if problem := failed(listed, "sessions list after the kill"):
        return None, problem
    if THREAD not in {row["thread_id"] for row in json.loads(listed.stdout)}:
        return None, ""
    shown = cli(["sessions", "show", THREAD, "--json"], env, project)
    if problem := failed(shown, "sessions show after the kill"):
        return None, problem
    return json.loads(shown.stdout), ""


def run_trial(work: Path, rng: random.Random) -> str:
    """Kill ``engram run``; the session is absent or resumes to the model's answer."""
    project = make_app_project(work / "project")
    with OpenAIStub(scripted_model, delay_s=0.4) as stub:
        env = base_env(
            work / "home",
            {"ENGRAM_MODEL": "stub-model", "OPENAI_API_KEY": "x", "ENGRAM_BASE_URL": stub.base_url},
        )
        killed(["run", TASK, "--thread", THREAD], env, project, rng.uniform(0.5, 8.0))
        shown, problem = session(env, project)
        if problem:
            return problem
        if shown is not None and shown["next"]:
            resumed = cli(["sessions", "resume", THREAD, "--json"], env, project)
            if problem := failed(resumed, "resume"):
                return problem
            if json.loads(resumed.stdout).get("answer") != ANSWER:
                return f"resumed to a different answer: {resumed.stdout[-300:]}"
        elif shown is not None and shown["messages"][-1]["content"] != ANSWER:
            return f"a finished session without the answer: {shown['messages'][-1]}"
        if stub.rejected:
            return f"the model endpoint rejected a history: {stub.rejected[:1]}"
        return doctor_clean(env, project)


def compaction_trial(work: Path, rng: random.Random) -> str:
    """Kill ``sessions compact``; the session keeps its old or its compacted history, whole."""
    project = make_app_project(work / "project")
    with OpenAIStub(scripted_model) as stub:
        env = base_env(
            work / "home",
            {"ENGRAM_MODEL": "stub-model", "OPENAI_API_KEY": "x", "ENGRAM_BASE_URL": stub.base_url},
        )
        for _ in range(3):
            if problem := failed(cli(["run", TASK, "--thread", THREAD], env, project), "run"):
                return problem
        before, problem = session(env, project)
        if problem or before is None:
            return problem or "the session was not saved"
        stub.delay_s = 1.0
        killed(["sessions", "compact", THREAD], env, project, rng.uniform(0.5, 6.0))
        stub.delay_s = 0.0
        after, problem = session(env, project)
        if problem or after is None:
            return problem or "the session vanished"
        compacted = str(after["messages"][0].get("content", "")).startswith(COMPACTED)
        if after["messages"] != before["messages"] and not compacted:
            return f"a half-compacted history: {[m['role'] for m in after['messages']]}"
        if problem := failed(cli(["run", TASK, "--thread", THREAD], env, project), "next turn"):
            return problem
        if stub.rejected:
            return f"the model endpoint rejected a history: {stub.rejected[:1]}"
        return doctor_clean(env, project)


TRIALS: dict[str, Trial] = {
    "kill -9 index": index_trial,
    "kill -9 import": import_trial,
    "kill -9 run": run_trial,
    "kill -9 compaction": compaction_trial,
}


def run_trials(category: str, kills: int, workdir: Path, seed: int) -> list[str]:
    """Run ``kills`` trials of ``category``; return what did not hold (one line each)."""
    rng = random.Random(seed)
    problems = []
    for number in range(kills):
        started = time.monotonic()
        try:
            outcome = TRIALS[category](workdir / f"{number}", rng)
        except (subprocess.TimeoutExpired, OSError, ValueError, KeyError) as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        if outcome:
            problems.append(f"trial {number} ({time.monotonic() - started:.0f} s): {outcome}")
    return problems
