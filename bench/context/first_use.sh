#!/bin/bash
# Whole-process time of `engram context` on a project never indexed: auto-index off and on.
#
#   bash bench/context/first_use.sh TREE [RUNS]
#
# Each run copies TREE to a fresh folder, with a fresh ENGRAM_HOME and no warm server, then
# times a first and a second `engram context --json --budget 8000 TASK` and counts the slices
# of the first pack. Needs the dev venv (.venv/bin/engram).
set -euo pipefail
tree=$1
runs=${2:-3}
engram="$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/engram"
task="the download fails when the server answers slowly"
now() { date +%s.%N; }
for mode in off on; do
  for run in $(seq "$runs"); do
    home=$(mktemp -d)
    project=$(mktemp -d)
    out=$(mktemp)
    cp -r "$tree/." "$project/"
    start=$(now)
    ENGRAM_SERVE=off ENGRAM_AUTO_INDEX=$mode ENGRAM_HOME=$home \
      "$engram" context --json --budget 8000 -p "$project" "$task" </dev/null >"$out" 2>/dev/null
    first=$(echo "$(now) - $start" | bc)
    start=$(now)
    ENGRAM_SERVE=off ENGRAM_AUTO_INDEX=$mode ENGRAM_HOME=$home \
      "$engram" context --json --budget 8000 -p "$project" "$task" </dev/null >/dev/null 2>&1
    second=$(echo "$(now) - $start" | bc)
    slices=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(sum(len(s['items']) for s in d['sections'] if s['name'] == 'slices'))" "$out")
    echo "auto-index $mode, run $run: first ${first} s, second ${second} s, slices $slices"
    rm -rf "$home" "$project" "$out"
  done
done
