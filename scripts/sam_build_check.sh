#!/usr/bin/env bash
# `sam build` (no container), report the unzipped sizes, then import and invoke each *built*
# function with its layers laid out as on Lambda (tests/integration/functions/test_built_functions.py).
#
# Needs: the SAM CLI in .venv-sam (SAM_VENV=...), the app venv in .venv (APP_VENV=...), and a
# python3.12 (the functions' runtime; found on PATH or under pyenv, or set MNEMO_PYTHON312).
# Builds are cached in .aws-sam/ (`sam build --cached`): only changed functions/layers rebuild.
set -euo pipefail

cd "$(dirname "$0")/.."
SAM_VENV="${SAM_VENV:-.venv-sam}"
APP_VENV="${APP_VENV:-.venv}"
export SAM_CLI_TELEMETRY=0

PYTHON312="$(scripts/find_python312.sh)"
export MNEMO_PYTHON312="$PYTHON312"
export PATH="$(dirname "$PYTHON312"):$PATH"

echo "==> sam build (python: $PYTHON312)"
"$SAM_VENV/bin/sam" build --cached --parallel

echo "==> unzipped sizes (Lambda limit: 250 MB per function including its layers)"
( cd .aws-sam/build && du -sh --apparent-size -- */ | sed 's#/$##' )

echo "==> built functions answer their sample events"
status=0
MNEMO_SAM_BUILT=1 PYTHONPATH="$PWD/shared" "$APP_VENV/bin/python" -m pytest -m sam -q \
  tests/integration/functions/test_built_functions.py "$@" || status=$?
if [[ -f .aws-sam/built-functions.json ]]; then
  echo "==> handler import time in the check's subprocess (ms; a hint, not the cold-start benchmark)"
  cat .aws-sam/built-functions.json
fi
exit "$status"
