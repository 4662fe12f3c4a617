# The two commands a newcomer needs: `make dev` (run Mnemo locally) and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.12 || ls /root/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | head -1 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
export PYTHONPATH := $(CURDIR)/shared

.PHONY: dev test install model lint unit integration e2e check-template sam-build bench clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

models/minilm/model.safetensors: scripts/fetch_model.py | install
	$(PY) scripts/fetch_model.py

model: models/minilm/model.safetensors

dev: install model
	$(PY) -m mnemo.local

test: install model
	$(PY) -m pytest tests -q

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache
