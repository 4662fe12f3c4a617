"""Translate the SAM template to plain CloudFormation, offline, so cfn-lint can check what SAM generates.

cfn-lint on the SAM form validates only what is written; errors in generated resources (event
source mappings, permissions, roles, the API body) and cycles between them show up only after the
transform. This runs aws-sam-translator the way `sam validate` does, minus the AWS calls:

- local CodeUri/ContentUri paths are replaced by a placeholder S3 URI (the translator rejects paths);
- the managed-policy map is empty: the template names managed policies by ARN only (SAM's policy
  templates and Tracing use ARNs too), so nothing needs resolving through IAM;
- the boto3 session only carries a region for pseudo parameters - no credentials are read.

Usage (with the SAM CLI's virtualenv, which ships aws-sam-translator):
    .venv-sam/bin/python scripts/translate_template.py template.yaml -o .aws-sam/translated.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import boto3
from samcli.yamlhelper import yaml_parse  # understands the short-form tags (!Ref, !Sub, ...)
from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator

PLACEHOLDER_S3_URI = "s3://mnemo-translate-placeholder/artifact.zip"
LOCAL_URI_PROPERTIES = {
    "AWS::Serverless::Function": "CodeUri",
    "AWS::Serverless::LayerVersion": "ContentUri",
    "AWS::Serverless::Api": "DefinitionUri",
    "AWS::Serverless::HttpApi": "DefinitionUri",
    "AWS::Serverless::StateMachine": "DefinitionUri",
}


def replace_local_uris(template: dict[str, Any]) -> None:
    """Point local artifact paths at a placeholder S3 URI, as `sam validate` does before translating."""
    globals_function = template.get("Globals", {}).get("Function", {})
    if isinstance(globals_function.get("CodeUri"), str) and not globals_function["CodeUri"].startswith("s3://"):
        globals_function["CodeUri"] = PLACEHOLDER_S3_URI
    for resource in template.get("Resources", {}).values():
        prop = LOCAL_URI_PROPERTIES.get(resource.get("Type", ""))
        properties = resource.get("Properties", {})
        if prop and isinstance(properties.get(prop), str) and not properties[prop].startswith("s3://"):
            properties[prop] = PLACEHOLDER_S3_URI


def translate(template: dict[str, Any], region: str) -> dict[str, Any]:
    replace_local_uris(template)
    translator = Translator(
        managed_policy_map=None,
        sam_parser=Parser(),
        plugins=[],
        boto_session=boto3.session.Session(region_name=region),
    )
    return translator.translate(sam_template=template, parameter_values={}, get_managed_policy_map=dict)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", type=Path)
    parser.add_argument("-o", "--output", type=Path, help="write the CloudFormation JSON here (default: stdout)")
    parser.add_argument("--region", default="us-east-1")
    args = parser.parse_args(argv)

    template = yaml_parse(args.template.read_text(encoding="utf-8"))
    try:
        translated = translate(template, args.region)
    except InvalidDocumentException as exc:
        for cause in exc.causes:
            print(f"SAM transform error: {cause.message}", file=sys.stderr)
        return 1
    text = json.dumps(translated, indent=2, sort_keys=False) + "\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
