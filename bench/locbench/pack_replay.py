"""Re-pack captured cases with other pack settings: quick A/B of fusion and slicing.

    .venv/bin/python bench/locbench/pack_replay.py CAPTURE.pkl [--budgets 4000,8000,16000] \
        [--set localizer=4 --set depth_share=0.4 --set focus_per_file=16 --set map_files=25
         --set focus_tokens=640 --set lead=none --set scan_share=0.1] [--json OUT]

CAPTURE.pkl comes from ``bench/locbench/pack_lines.py --capture`` (the retrieval evidence of
each case, as the pack node received it). Only the assembly (fusion, slicing, filling) runs
again, so a setting is measured in seconds; the evidence itself is not recomputed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pickle
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "bench" / "context"))


def assemble_captured(item: dict, budget: int):  # noqa: ANN201 - engram.graph.pack.Pack
    """Assemble a captured case's pack again at ``budget`` (the evidence as captured)."""
    import engram.graph.pack._assembly as assembly
    from engram.graph import count_text

    context = dataclasses.replace(item["context"], budget=budget)
    pack, _, _ = assembly.assemble_pack(
        item["state"],
        context,
        count=count_text,
        feedback=item["feedback"],
        extra=item["extra"],
        notes=item["notes"],
    )
    return pack


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("capture")
    parser.add_argument("--gold-lines", required=True)
    parser.add_argument("--budgets", default="4000,8000,16000")
    parser.add_argument("--set", action="append", default=[], help="name=value")
    parser.add_argument("--json", default="", help="write each case's scores here")
    args = parser.parse_args()
    from dataset import load_gold_lines
    from locbench import score_pack

    import engram.graph.pack._assembly as assembly
    import engram.graph.pack._code_slices as slices
    import engram.graph.pack._fusion as fusion

    settings = dict(item.split("=", 1) for item in args.set)
    if "localizer" in settings:
        assembly.FUSION_WEIGHTS = {
            **assembly.FUSION_WEIGHTS,
            "localizer": float(settings["localizer"]),
        }
    if settings.get("lead") == "none":
        assembly.LOCALIZER_SOURCE = ""
    if "depth_share" in settings:
        assembly.DEPTH_SHARE = float(settings["depth_share"])
    if "focus_per_file" in settings:
        slices.slice_items.__kwdefaults__["focus_per_file"] = int(settings["focus_per_file"])
    if "focus" in settings:
        slices.slice_items.__kwdefaults__["focus"] = int(settings["focus"])
    if "focus_tokens" in settings:
        slices.slice_items.__kwdefaults__["focus_tokens"] = int(settings["focus_tokens"])
    if "scan_share" in settings:
        assembly.SCAN_SHARE = float(settings["scan_share"])
    if "map_files" in settings:
        fusion.code_map_items.__kwdefaults__["limit"] = int(settings["map_files"])
    if "rrf_k" in settings:
        fusion.RRF_K = int(settings["rrf_k"])
        fusion.rrf.__defaults__ = (None, int(settings["rrf_k"]))
    gold_lines = load_gold_lines(args.gold_lines)
    captured = pickle.loads(Path(args.capture).read_bytes())
    print(f"settings: {settings or 'defaults'}")
    print(
        "| budget | cases | gold file sliced | gold lines (macro) | gold lines (micro) | gold first in map |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    every: list[dict] = []
    for budget in (int(b) for b in args.budgets.split(",")):
        rows = []
        # each case once, with the evidence captured at this budget when there is one
        chosen: dict[str, dict] = {}
        for item in captured:
            key = item["case"]["instance_id"]
            if key not in chosen or item["context"].budget == budget:
                chosen[key] = item
        for item in chosen.values():
            case = item["case"]
            pack = assemble_captured(item, budget)
            rows.append(
                {
                    **score_pack(
                        pack.to_dict(), case["gold_files"], gold_lines.get(case["instance_id"])
                    ),
                    "category": case["category"],
                    "instance_id": case["instance_id"],
                    "repo": case["repo"],
                }
            )
        every += rows
        shares = [r["gold_lines_share"] for r in rows if r.get("gold_lines_share") is not None]
        total = sum(r.get("gold_lines_total", 0) for r in rows)
        micro = sum(r.get("gold_lines_hit", 0) for r in rows) / total if total else float("nan")
        first = statistics.mean(r["gold_code_map_rank"] == 1 for r in rows)
        print(
            f"| {budget} | {len(rows)} | {statistics.mean(r['covered'] for r in rows):.3f} | "
            f"{statistics.mean(shares):.3f} | {micro:.3f} | {first:.3f} |"
        )
        for category in sorted({r["category"] for r in rows}):
            group = [r for r in rows if r["category"] == category]
            print(
                f"|   {category} | {len(group)} | "
                f"{statistics.mean(r['covered'] for r in group):.3f} | "
                f"{statistics.mean(r['gold_lines_share'] or 0 for r in group):.3f} | | |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(every))


if __name__ == "__main__":
    main()
