"""Gold changed lines of locbench issues, from the fix commits in the repositories' git mirrors.

Usage:
    python3 bench/context/gold_lines.py --mirrors DIR --cases F [F ...] --out gold_lines.jsonl

``DIR/<owner>+<name>/repo`` is a bare mirror of each case's repository. For a case
``owner__name-N`` the fix is the commit reachable from a branch whose subject names pull
request N (a squash merge ``… (#N)`` or ``Merge pull request #N …``) and that touches at least
one gold file; of several, the one whose touched files best match ``gold_files`` (Jaccard),
then the oldest. A merge commit is diffed against its first parent. With no such commit, the
pull request's own head (``refs/pull/N/head``, when the mirror has it) is diffed against its
merge base with the case's base commit.

Which diff, and why: the pack reads the tree at ``base_commit``, so line numbers must refer to
the base commit's files. Diffing the base commit against the fix directly would also count
every line other pull requests changed in those files in between; diffing the fix against its
parent gives exactly the fix, but numbered in the parent's files. So the fix's own diff is
taken (parent → fix, restricted to the gold files) and each pre-image line is mapped back onto
the base commit's version of the file by a line diff of the two versions (identity when the
blobs are equal); a line that did not exist at the base commit is dropped.

Changed lines are the pre-image lines a hunk deletes or modifies; a pure insertion after line
``a`` counts lines ``a`` and ``a + 1`` (the lines around the insertion point, as exist).

Output rows (JSONL): ``{"instance_id", "lines": {path: [line numbers]}, "commit", "source"}``;
cases without gold lines are listed on stderr with the reason, and a summary of reasons.
Standard library and the ``git`` executable only.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


class GitError(RuntimeError):
    """A git command failed (a missing object, an unknown revision)."""


@dataclass(frozen=True)
class Fix:
    """The commit pair whose diff is the fix."""

    parent: str
    commit: str
    source: str


def git(repo: Path, *args: str) -> str:
    """Run git on the bare ``repo``; return its stdout (raise GitError on failure)."""
    proc = subprocess.run(
        ["git", "--git-dir", str(repo), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise GitError(proc.stderr.strip()[-300:] or f"git {args[0]} exited {proc.returncode}")
    return proc.stdout


CommitRow = tuple[str, list[str], str]
"""A commit's hash, its parents' hashes and its subject."""


def branch_commits(repo: Path) -> list[CommitRow]:
    """Return (commit, parents, subject) of every commit reachable from a branch, newest first."""
    out = git(repo, "log", "--branches", "--format=%H%x00%P%x00%s")
    rows = []
    for line in out.splitlines():
        commit, parents, subject = (line.split("\x00") + ["", ""])[:3]
        rows.append((commit, parents.split(), subject))
    return rows


def names_pr(subject: str, number: int) -> bool:
    """True when a commit subject is pull request ``number``'s squash or merge commit."""
    return bool(
        re.search(rf"\(#{number}\)\s*$", subject)
        or re.match(rf"Merge pull request #{number}\b", subject)
    )


def touched(repo: Path, parent: str, commit: str) -> set[str]:
    """Return the paths changed between ``parent`` and ``commit``."""
    return set(git(repo, "diff", "--no-renames", "--name-only", parent, commit).split("\n")) - {""}


def find_fix(
    repo: Path, commits: list[CommitRow], number: int, gold: set[str], base: str
) -> Fix | str:
    """Return the fix commit pair of pull request ``number``, or why there is none."""
    best: tuple[float, int, Fix] | None = None
    named = 0
    for age, (commit, parents, subject) in enumerate(commits):
        if not parents or not names_pr(subject, number):
            continue
        named += 1
        files = touched(repo, parents[0], commit)
        if not files & gold:
            continue
        score = len(files & gold) / len(files | gold)
        kind = "merge" if len(parents) > 1 else "squash"
        candidate = (score, age, Fix(parents[0], commit, kind))
        if best is None or (score, age) > best[:2]:
            best = candidate
    if best is not None:
        return best[2]
    try:
        head = git(repo, "rev-parse", "--verify", "--quiet", f"refs/pull/{number}/head").strip()
        fork = git(repo, "merge-base", base, head).strip()
    except GitError:
        head = fork = ""
    if head and fork and touched(repo, fork, head) & gold:
        return Fix(fork, head, "pull-head")
    if named:
        return f"{named} commit(s) name #{number} but none touches a gold file"
    return f"no commit on a branch names #{number}" + ("" if head else " and no refs/pull head")


def changed_lines(repo: Path, fix: Fix, path: str) -> list[int]:
    """Return the parent-side line numbers the fix deletes, modifies or inserts around."""
    out = git(repo, "diff", "--no-renames", "-U0", fix.parent, fix.commit, "--", path)
    lines: set[int] = set()
    for row in out.splitlines():
        match = HUNK.match(row)
        if not match:
            continue
        start, length = int(match.group(1)), int(match.group(2) or 1)
        if length:
            lines.update(range(start, start + length))
        else:  # an insertion after line ``start`` (0: at the top)
            lines.update(n for n in (start, start + 1) if n >= 1)
    return sorted(lines)


def blob(repo: Path, rev: str, path: str) -> str | None:
    """Return ``path``'s text at ``rev`` (None when it does not exist there)."""
    try:
        return git(repo, "show", f"{rev}:{path}")
    except GitError:
        return None


def to_base(base_text: str, parent_text: str, lines: list[int]) -> list[int]:
    """Map 1-based line numbers of ``parent_text`` onto ``base_text``; drop lines new since."""
    if base_text == parent_text:
        wanted = lines
    else:
        a, b = base_text.splitlines(), parent_text.splitlines()
        mapping: dict[int, int] = {}
        for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
            for k in range(block.size):
                mapping[block.b + k + 1] = block.a + k + 1
        wanted = [mapping[n] for n in lines if n in mapping]
    total = len(base_text.splitlines())
    return sorted({n for n in wanted if 1 <= n <= max(total, 1)})


def gold_of(repo: Path, case: dict, commits: list[CommitRow]) -> dict | str:
    """Return the case's gold-lines row, or why it has none."""
    number = int(case["instance_id"].rsplit("-", 1)[1])
    gold = set(case["gold_files"])
    fix = find_fix(repo, commits, number, gold, case["base_commit"])
    if isinstance(fix, str):
        return fix
    result: dict[str, list[int]] = {}
    for path in sorted(gold):
        base_text = blob(repo, case["base_commit"], path)
        parent_text = blob(repo, fix.parent, path)
        if base_text is None or parent_text is None:
            continue  # a file the fix creates, or one missing from the mirror
        lines = to_base(base_text, parent_text, changed_lines(repo, fix, path))
        if lines:
            result[path] = lines
    if not result:
        return f"fix {fix.commit[:10]} ({fix.source}) changes no base-commit line of a gold file"
    return {
        "instance_id": case["instance_id"],
        "lines": result,
        "commit": fix.commit,
        "source": fix.source,
    }


def main() -> int:
    """Write the gold lines of every case that has a findable fix; report the rest."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of <owner>+<name>/repo mirrors")
    ap.add_argument("--cases", nargs="+", required=True, help="cases JSONL files")
    ap.add_argument("--out", required=True, help="gold_lines.jsonl to write")
    a = ap.parse_args()
    cases = [
        json.loads(line)
        for name in a.cases
        for line in Path(name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    history: dict[str, list[CommitRow]] = {}
    reasons: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    rows = []
    for case in cases:
        repo = Path(a.mirrors) / case["repo"].replace("/", "+") / "repo"
        if not repo.is_dir():
            why: dict | str = "no mirror"
        else:
            try:
                if case["repo"] not in history:
                    history[case["repo"]] = branch_commits(repo)
                why = gold_of(repo, case, history[case["repo"]])
            except GitError as exc:
                why = f"git failed: {exc}"
        if isinstance(why, str):
            reasons[re.sub(r"#\d+|[0-9a-f]{10}", "…", why)] += 1
            print(f"{case['instance_id']}: {why}", file=sys.stderr)
            continue
        sources[why["source"]] += 1
        rows.append(why)
    Path(a.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    lines = sum(len(v) for r in rows for v in r["lines"].values())
    print(
        f"{len(rows)} of {len(cases)} cases have gold lines ({lines} lines); by fix: {dict(sources)}"
    )
    for why, n in reasons.most_common():
        print(f"  {n} without: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
