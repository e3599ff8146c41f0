#!/usr/bin/env bash
# engram's offline main job on this very repository: no model endpoint is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
export ENGRAM_HOME="${ENGRAM_HOME:-$PWD/.engram/demo-home}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
unset ENGRAM_MODEL
engram=".venv/bin/engram"
step() { printf '\n\033[1;36m== %s ==\033[0m\n' "$*"; }

step "1. index this repository (incremental: tree-sitter chunks, BM25, embeddings, code graph)"
"$engram" index .

step "2. hybrid search: exact hits + BM25 + dense similarity, fused"
"$engram" search "where are tool results wrapped as untrusted data" -k 5

step "3. exact search (ripgrep), no index needed"
"$engram" search "def confine" --mode exact -k 3

step "4. code graph: who calls confine?"
"$engram" graph confine --relation callers

step "5. remember a fact about this project (conflicts and secrets are checked)"
"$engram" memory save "Tests run with make test; it also runs ruff and mypy." || true
"$engram" memory search "how do I run the tests"

step "6. Phase 0: task profile and injected experience, low risk vs high risk"
"$engram" profile "Explain what the load_rules node does"
"$engram" profile "Change the production checkpoint schema migration and delete old sessions"

step "7. the context pack for a realistic task (rules, memory, code map, code slices)"
"$engram" context "Fix: read_file should refuse symlinks that point outside the project root" --budget 8000
