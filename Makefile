# engram — set-up, demo and tests. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: install install-dev demo test test-matrix lint typecheck unit integration clean \
	bench-reliability bench-coding

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

TABLE := engram/stores/embeddings/static_minilm/table.npy

# The offline embedder's table is generated, not tracked: distilled once from all-MiniLM-L6-v2
# with the [distill] extra (torch pinned to the CPU wheel, never a multi-GB CUDA build), then
# packaged into the wheel. Only this build environment gets torch; the package's run-time
# dependencies do not.
$(TABLE): | $(BIN)/python
	$(BIN)/pip install --quiet --prefer-binary torch==2.13.0
	$(BIN)/pip install --quiet --prefer-binary -e '.[distill]'
	$(BIN)/python scripts/distill_static_table.py

$(STAMP): pyproject.toml $(TABLE) | $(BIN)/python
	$(BIN)/pip install --quiet --prefer-binary -e .
	touch $(STAMP)

$(DEV_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install --quiet --prefer-binary -e '.[dev]'
	touch $(DEV_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

demo: install
	@bash scripts/demo.sh

lint: install-dev
	$(BIN)/ruff check engram studio tests bench examples scripts
	$(BIN)/ruff format --check engram studio tests bench examples scripts

typecheck: install-dev
	$(BIN)/mypy

# The suite's order is fixed here (pytest-randomly is off); `make test-matrix` shuffles it.
# `make test` runs it on every core (pytest-xdist), one test file per worker at a time, so a
# file's servers and fixtures stay in one process.
PYTEST := $(BIN)/pytest -q -p no:cacheprovider -p no:randomly --strict-markers

unit: install-dev
	$(PYTEST) -m "not integration" tests/unit

integration: install-dev
	$(PYTEST) -m integration tests

test: install-dev
	$(BIN)/ruff check engram studio tests bench examples scripts
	$(BIN)/ruff format --check engram studio tests bench examples scripts
	$(BIN)/mypy
	$(PYTEST) -n auto --dist loadfile --durations=15 tests

# The suite under several terminal widths, TERM, locale and time zone, in random order.
test-matrix: install-dev
	bash scripts/test_matrix.sh

# Hostile repositories, damaged storage and the other reliability suites: one table.
bench-reliability: install-dev
	$(BIN)/python bench/reliability/run.py

# 21 scripted fix tasks (Python, JavaScript, Java fixtures) through `engram run` under each
# approval policy, with rewind checks and snapshot costs: one table (about 40 minutes).
bench-coding: install-dev
	$(BIN)/python -m bench.coding.run

clean:
	rm -rf $(VENV) .engram .pytest_cache .mypy_cache .ruff_cache
