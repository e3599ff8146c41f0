#!/usr/bin/env bash
# Run the whole suite under several environments, in random order, with stdin closed.
# Each run prints its combination and seed; the summary at the end lists every run's result.
# Usage: scripts/test_matrix.sh [extra pytest args]   (make test-matrix)
set -uo pipefail
cd "$(dirname "$0")/.."
PYTEST=".venv/bin/pytest"
combos=(
  "COLUMNS unset|-u COLUMNS"
  "COLUMNS=40|COLUMNS=40"
  "COLUMNS=300|COLUMNS=300"
  "TERM=dumb|-u COLUMNS TERM=dumb"
  "LANG=C.UTF-8|-u COLUMNS LANG=C.UTF-8 LC_ALL=C.UTF-8"
  "TZ=Pacific/Kiritimati|-u COLUMNS TZ=Pacific/Kiritimati"
)
summary=()
status=0
for combo in "${combos[@]}"; do
  name="${combo%%|*}"
  settings="${combo#*|}"
  seed=$(( (RANDOM << 15 | RANDOM) % 1000000 ))
  echo "=== ${name} (random order, --randomly-seed=${seed}, stdin closed) ==="
  # shellcheck disable=SC2086  # $settings is a list of env(1) options and assignments
  out=$(env $settings "$PYTEST" -q -p no:cacheprovider -p randomly --randomly-seed="$seed" \
        --strict-markers "$@" tests </dev/null 2>&1)
  rc=$?
  last=$(printf '%s\n' "$out" | grep -E '(passed|failed|error)' | tail -1)
  printf '%s\n' "$out" | grep -E '^(FAILED|ERROR) ' || true
  echo "$last"
  summary+=("${name} seed=${seed}: ${last:-no result} (exit ${rc})")
  [ "$rc" -eq 0 ] || status=1
done
echo
echo "=== test matrix summary ==="
printf '%s\n' "${summary[@]}"
exit "$status"
