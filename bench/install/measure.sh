#!/usr/bin/env bash
# Install size and time of the built wheel in a fresh venv, and the first `engram index`.
#
#   bash bench/install/measure.sh SRC OUT
#
# SRC is a clean checkout (e.g. `git clone . /tmp/src`), OUT a scratch folder. Set PRE to
# packages to install first (e.g. PRE="torch==2.13.0" for the old layout, whose pin pulled it).
# Prints the figures bench/RESULTS.md quotes; the index runs on a copy of SRC's tracked files.
set -euo pipefail
SRC=$(cd "$1" && pwd)
OUT=$2
PYTHON=${PYTHON:-python3}
TABLE=engram/stores/embeddings/static_minilm/table.npy
if [ -d "$SRC/engram/stores/embeddings/static_minilm" ] && [ ! -f "$SRC/$TABLE" ]; then
    echo "$SRC/$TABLE is missing: it is generated, not tracked; run \`make install\` in SRC" \
        "(or copy the table from a built checkout) first" >&2
    exit 2
fi
rm -rf "$OUT" && mkdir -p "$OUT"
"$PYTHON" -m venv "$OUT/build-env"
"$OUT/build-env/bin/pip" install --quiet build
(cd "$SRC" && "$OUT/build-env/bin/python" -m build --wheel --outdir "$OUT/dist" >/dev/null)
WHEEL=$(ls "$OUT"/dist/*.whl)
"$PYTHON" -m venv "$OUT/venv"
"$OUT/venv/bin/pip" install --quiet --upgrade pip
start=$(date +%s.%N)
if [ -n "${PRE:-}" ]; then "$OUT/venv/bin/pip" install --quiet --prefer-binary $PRE; fi
"$OUT/venv/bin/pip" install --quiet --prefer-binary "$WHEEL"
end=$(date +%s.%N)
echo "wheel: $(du -m "$WHEEL" | cut -f1) MB ($(basename "$WHEEL"))"
echo "install: $(echo "$end - $start" | bc) s"
echo "venv: $(du -sm "$OUT/venv" | cut -f1) MB"
"$OUT/venv/bin/python" - <<'PY'
import importlib.metadata as md
for name in ("torch", "transformers", "sentence-transformers", "nvidia-cublas-cu12"):
    try:
        print(f"{name}: {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name}: absent")
PY
mkdir -p "$OUT/project"
(cd "$SRC" && git ls-files -z | xargs -0 cp --parents -t "$OUT/project")
export ENGRAM_HOME="$OUT/home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
start=$(date +%s.%N)
"$OUT/venv/bin/engram" index --path "$OUT/project" >"$OUT/index.log" 2>&1 || (cd "$OUT/project" && "$OUT/venv/bin/engram" index >"$OUT/index.log" 2>&1)
end=$(date +%s.%N)
echo "first index: $(echo "$end - $start" | bc) s ($(tail -1 "$OUT/index.log"))"
