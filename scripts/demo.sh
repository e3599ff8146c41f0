#!/usr/bin/env bash
# What engram does offline, on this very repository: no model endpoint needed.
set -euo pipefail
cd "$(dirname "$0")/.."
export ENGRAM_HOME="${ENGRAM_HOME:-$PWD/.engram/demo-home}"
engram=".venv/bin/engram"
step() { printf '\n\033[1;36m== %s ==\033[0m\n' "$*"; }

step "exact search: where are tool results wrapped as untrusted data?"
"$engram" search "wrap_tool_result" --mode exact -k 5
