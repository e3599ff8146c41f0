"""Show Phase 0 for a low- and a high-risk task over a small seeded experience memory.

Usage: .venv/bin/python -m bench.phase0.demo   (uses a temporary ENGRAM_HOME and project)
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engram.graph import Context, count_text
from engram.graph.profile import run_phase0
from engram.stores.memory import Episode, ExperienceStore, Pattern, Strategy, Trigger
from engram.stores.project import project_key
from engram.stores.sqlite import open_memory_store

TASKS = (
    "Rename the variable tmp to retry_count in worker.py",
    "把用户表的 password 字段改成 bcrypt 哈希，并写数据库迁移脚本，周五上线生产",
)


def seed(repo: ExperienceStore, now: datetime) -> None:
    repo.put(
        Strategy(
            id="st-names",
            principle="Rename with the editor's symbol rename, then "
            "grep for string uses (configs, templates).",
            applies_to=("refactor",),
            priority="medium",
            source="team habit",
        )
    )
    repo.put(
        Strategy(
            id="st-rollback",
            principle="Production change: write the rollback "
            "steps before the change, and test them on staging.",
            applies_to=("production", "schema"),
            priority="high",
            scope="global",
        )
    )
    repo.put(
        Strategy(
            id="st-auth",
            principle="Auth change: keep old credentials valid until every user has migrated.",
            applies_to=("auth",),
            priority="high",
        )
    )
    repo.put(
        Pattern(
            id="pat-migration-lock",
            name="Migration locks a hot table",
            trigger=Trigger(features=("schema",), production=True),
            failure="checkout stalled for 6 minutes during ALTER TABLE",
            root_cause="the migration rewrote a 40M-row table in one transaction",
            prevention="add the column nullable, backfill in batches, then constrain",
            confidence=4,
            last_validated=now - timedelta(days=12),
            evidence=("ep-orders-lock",),
        )
    )
    repo.put(
        Episode(
            id="ep-orders-lock",
            date=now - timedelta(days=120),
            task_type="feature",
            summary="added NOT NULL column to orders",
            outcome="failure",
            files=("migrations/0042_orders.py",),
            lesson="big-table migrations need batches",
            severity=2,
        )
    )
    repo.put(
        Episode(
            id="ep-argon2",
            date=now - timedelta(days=5),
            task_type="feature",
            summary="switched password hashing to argon2",
            outcome="failure",
            files=("auth/passwords.py",),
            lesson="old hashes stopped verifying",
            prevention="verify with both algorithms during the rollout",
            severity=1,
        )
    )


def main() -> None:
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "shop"
        (project / "tests").mkdir(parents=True)
        context = Context(project=str(project), engram_home=str(Path(tmp) / "home"))
        with open_memory_store(context.home_path) as store:
            seed(ExperienceStore(store, project_key(project)), now)
            for task in TASKS:
                result = run_phase0(store, task, context, count_tokens=count_text, now=now)
                p = result.profile
                print(
                    f"\n=== {task}\n{p.task_type} task, {p.risk} risk; features: "
                    f"{', '.join(p.features) or 'none'}"
                )
                for reason in p.reasons:
                    print(f"  - {reason}")
                print(
                    f"injected: {[(i.kind, i.id) for i in result.selection.items]} "
                    f"({result.selection.tokens}/{result.selection.budget} tokens)"
                )
                print(result.block)


if __name__ == "__main__":
    main()
