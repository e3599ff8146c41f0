#!/usr/bin/env python3
# ruff: noqa: E702, E741
"""Extract pre-image gold line numbers per gold file from Loc-Bench reference patches.

For each case in cases.jsonl, parse the `patch` of data/locbench.jsonl (chronorepo_icdm26 copy)
and, for each gold file, list the old-side (pre-image) line numbers that the patch removes or
modifies ('-' lines). For a run of '+' lines with no '-' line in the same change block (a pure
insertion), the nearest old-side context lines on each side of the insertion point are taken
(the line just before and the line just after; one of them if the insertion is at a hunk edge).
Each hunk is placed on the file at base_commit (from the mirror) the way `git apply` does:
at the nearest offset from its header where its pre-image (context and '-' lines) matches.
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument(
    "--cases",
    default=str(
        Path(__file__).resolve().parents[3] / "shared" / "bench" / "locbench-dev" / "cases.jsonl"
    ),
)
ap.add_argument(
    "--locbench",
    required=True,
    help="data/locbench.jsonl of ITMO-NSS-team/chronorepo_icdm26 (has each case's patch)",
)
ap.add_argument("--mirrors", required=True, help="folder of <owner>+<name>/repo bare mirrors")
ap.add_argument("--out", required=True)
a = ap.parse_args()

rows = {}
for l in open(a.locbench, encoding="utf-8"):
    r = json.loads(l)
    rows[r["instance_id"]] = r
cases = [json.loads(l) for l in open(a.cases, encoding="utf-8") if l.strip()]

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def resolve(hunks, src):
    """Place each hunk on the base file like `git apply` (nearest offset whose pre-image
    matches), then return (removed line set, anchor line set, offsets used)."""
    removed, anchors, offsets = set(), set(), []
    norm = [x.rstrip("\r") for x in src]
    for old, body in hunks:
        pre = [t.rstrip("\r") for tag, _, t in body if tag != "+"]
        start = old if pre else old + 1
        delta = None
        for d in sorted(range(-len(norm), len(norm) + 1), key=abs):
            s0 = start - 1 + d
            if 0 <= s0 and s0 + len(pre) <= len(norm) and norm[s0 : s0 + len(pre)] == pre:
                delta = d
                break
        if delta is None:
            raise SystemExit(f"hunk at -{old} does not match the base file")
        offsets.append(delta)
        body = [(tag, (n + delta if n is not None else None), t) for tag, n, t in body]
        j = 0
        while j < len(body):
            if body[j][0] == " ":
                j += 1
                continue
            k = j
            while k < len(body) and body[k][0] != " ":
                k += 1
            block = body[j:k]
            rem = [b for b in block if b[0] == "-"]
            if rem:
                removed.update(n for _, n, _ in rem)
            else:  # pure insertion: anchors = nearest old-side lines around it
                before = body[j - 1][1] if j > 0 else None
                after = body[k][1] if k < len(body) else None
                if before is None and after is None:
                    before = max(old + delta, 1)
                for n in (before, after):
                    if n is not None and n >= 1:
                        anchors.add(n)
            j = k
    return removed, anchors, offsets


def parse(patch):
    """Return {path: {"removed": set, "anchors": set, "hunks": [...]}} keyed by old path."""
    files = {}
    cur = None
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            m = re.match(r"diff --git a/(.*) b/(.*)$", line)
            cur = files.setdefault(m.group(1), {"hunks": []})
            i += 1
            continue
        m = HUNK.match(line)
        if m and cur is not None:
            old = int(m.group(1))
            olen = int(m.group(2)) if m.group(2) is not None else 1
            # walk the hunk body
            i += 1
            o = old
            body = []
            seen_old = 0
            while i < len(lines) and seen_old <= olen:
                l = lines[i]
                if l.startswith("@@") or l.startswith("diff --git"):
                    break
                if l.startswith("\\"):
                    i += 1
                    continue
                if l == "" and i == len(lines) - 1:
                    break
                tag = l[:1] if l else " "
                if tag == " ":
                    body.append((" ", o, l[1:]))
                    o += 1
                    seen_old += 1
                elif tag == "-":
                    body.append(("-", o, l[1:]))
                    o += 1
                    seen_old += 1
                elif tag == "+":
                    body.append(("+", None, l[1:]))
                else:
                    break
                i += 1
            cur["hunks"].append((old, body))
            continue
        i += 1
    return files


bad = 0
with open(a.out, "w", encoding="utf-8") as out:
    for c in cases:
        r = rows[c["instance_id"]]
        assert r["base_commit"] == c["base_commit"]
        files = parse(r["patch"])
        gd = f"{a.mirrors}/{c['repo'].replace('/', '+')}/repo"
        res = {}
        detail = {}
        for g in c["gold_files"]:
            f = files[g]
            src = (
                subprocess.run(
                    ["git", "--git-dir", gd, "show", f"{c['base_commit']}:{g}"],
                    capture_output=True,
                    check=True,
                )
                .stdout.decode("utf-8", "replace")
                .split("\n")
            )
            removed, anchors, offsets = resolve(f["hunks"], src)
            if any(offsets):
                bad += 1
                print("OFFSET", c["instance_id"], g, offsets, file=sys.stderr)
            res[g] = sorted(removed | anchors)
            detail[g] = {
                "removed": len(removed),
                "anchor_only": len(anchors - removed),
                "hunks": len(offsets),
                "hunk_offsets": offsets,
            }
        out.write(
            json.dumps({"instance_id": c["instance_id"], "lines": res, "detail": detail}) + "\n"
        )
print(
    f"{len(cases)} cases written to {a.out}; {bad} gold files whose hunks needed an offset",
    file=sys.stderr,
)
