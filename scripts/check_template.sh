#!/usr/bin/env bash
# Static checks of the SAM application - no AWS credentials, no Docker, no network:
#   1. sam validate --lint          (SAM CLI's own validation + cfn-lint)
#   2. cfn-lint on the SAM template
#   3. aws-sam-translator -> plain CloudFormation, then cfn-lint on *that*: errors in generated
#      resources (event source mappings, permissions, roles) and dependency cycles only show here.
#   4. the deps layer's pins agree with requirements.txt
# Every step runs; the script exits non-zero if any failed.
#
# Usage: scripts/check_template.sh [template.yaml]   (tools from .venv-sam; override with SAM_VENV=...)
set -uo pipefail

cd "$(dirname "$0")/.."
SAM_VENV="${SAM_VENV:-.venv-sam}"
REGION="${MNEMO_LINT_REGION:-us-east-1}"
TEMPLATE="${1:-template.yaml}"
TRANSLATED=.aws-sam/translated/template.json
export SAM_CLI_TELEMETRY=0

for tool in sam cfn-lint python; do
  if [[ ! -x "$SAM_VENV/bin/$tool" ]]; then
    echo "missing $SAM_VENV/bin/$tool - install the SAM CLI and cfn-lint into $SAM_VENV" >&2
    exit 2
  fi
done

failed=()
step() {
  local name="$1"; shift
  echo "==> $name"
  if "$@"; then
    echo "    ok"
  else
    echo "    FAILED: $name" >&2
    failed+=("$name")
  fi
}

step "sam validate --lint" "$SAM_VENV/bin/sam" validate --lint --region "$REGION" -t "$TEMPLATE"
step "cfn-lint (SAM template)" "$SAM_VENV/bin/cfn-lint" --regions "$REGION" -- "$TEMPLATE"
rm -f "$TRANSLATED"
step "translate (aws-sam-translator)" "$SAM_VENV/bin/python" scripts/translate_template.py "$TEMPLATE" \
  --region "$REGION" -o "$TRANSLATED"
if [[ -f "$TRANSLATED" ]]; then
  step "cfn-lint (translated CloudFormation)" "$SAM_VENV/bin/cfn-lint" --regions "$REGION" -- "$TRANSLATED"
fi
step "deps layer pins" "$SAM_VENV/bin/python" scripts/check_layer_requirements.py

if (( ${#failed[@]} )); then
  echo "template checks failed: ${failed[*]}" >&2
  exit 1
fi
echo "template checks passed"
