"""The *built* functions answer their sample events with only their code and layers on the path.

`sam build` output (.aws-sam/build) is laid out as Lambda lays it out - the function's code as the
task root, the layers' contents merged into an `opt/` folder with `opt/python` on PYTHONPATH - and
each function runs in a fresh python3.12 subprocess started with `-S` (no site-packages: neither
this repo's virtualenv nor its shared/ folder is visible). A dependency missing from the deps
layer, a wrong-platform wheel or a module left out of the shared layer fails here, not in
production. Every event of a function is invoked in the same process, as warm invocations of one
instance would be.

AWS: DynamoDB and SQS are a moto server started by this test (tables and queues created from
template.yaml); the OpenSearch and Bedrock endpoints point at closed local ports, so a request path
that would call them fails fast instead of reaching the internet - none of these events needs them.
Tracing is disabled (there is no X-Ray daemon).

Run through scripts/sam_build_check.sh (builds, then sets MNEMO_SAM_BUILT=1).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.adapters.dynamodb.keys import DynamoDbKeyStore
from mnemo.local.server import refusing_address, start_moto
from mnemo.local.template_resources import create_local_resources, load_template
from mnemo.services.tenancy.keys import KeyService
from tests.conftest import REPO, TEMPLATE

pytestmark = [
    pytest.mark.sam,
    pytest.mark.skipif(os.environ.get("MNEMO_SAM_BUILT") != "1", reason="needs `sam build` output: MNEMO_SAM_BUILT=1"),
]

BUILD = REPO / ".aws-sam" / "build"
EVENTS = REPO / "events"
TEST_SECRET = "mn_test_local_key_0123456789"  # the bearer key in events/*.json
LAMBDA_UNZIPPED_LIMIT = 262_144_000  # bytes: function code + all its layers, unzipped

# The HTTP events were recorded against this API (requestContext.apiId / domainName).
API_ID = json.loads((EVENTS / "api_health.json").read_text())["requestContext"]["apiId"]
REGION = "us-east-1"

# function logical id -> its sample events, invoked in this order in one process (warm invocations).
CASES: dict[str, list[str]] = {
    "ApiFunction": ["api_health.json", "api_create_memory.json", "api_list_memories.json", "api_console.json",
                    "api_docs_asset.json"],
    "McpFunction": ["mcp_initialize.json", "mcp_tools_list.json", "mcp_get_405.json"],
    "WorkerFunction": ["sqs_enrichment.json"],
    "ReconcilerFunction": ["schedule_reconcile.json"],
}

# Modules only the local stack selects (they need packages the deps layer leaves out: numpy, PyYAML).
# Everything else in mnemo must import with the layers alone - production may import it lazily.
LOCAL_ONLY_MODULES = ["mnemo.local", "mnemo.adapters.local.minilm_embedder", "mnemo.adapters.local.minilm_onnx",
                      "mnemo.adapters.local.late_interaction", "mnemo.adapters.local.index"]

# Runs inside the Lambda-like subprocess: import the handler (the cold start), invoke it per event.
DRIVER = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys, time, traceback, uuid

    out_path, handler_spec, function_name, memory, local_only, *event_paths = sys.argv[1:]
    module_name, _, attribute = handler_spec.rpartition(".")
    report = {"sys_path": sys.path, "invocations": []}

    class Context:
        function_name = function_name
        function_version = "$LATEST"
        memory_limit_in_mb = int(memory)
        invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}"
        log_group_name = f"/aws/lambda/{function_name}"
        log_stream_name = "2025/11/30/[$LATEST]0123456789abcdef"

        def __init__(self):
            self.aws_request_id = str(uuid.uuid4())
            self._deadline = time.monotonic() + 29

        def get_remaining_time_in_millis(self):
            return int((self._deadline - time.monotonic()) * 1000)

    started = time.perf_counter()
    try:
        handler = getattr(importlib.import_module(module_name), attribute)
    except BaseException:
        report["import_error"] = traceback.format_exc()
        json.dump(report, open(out_path, "w"))
        sys.exit(0)
    report["init_ms"] = round((time.perf_counter() - started) * 1000, 1)
    mnemo = sys.modules.get("mnemo")
    report["mnemo_file"] = getattr(mnemo, "__file__", None)

    for path in event_paths:
        event = json.load(open(path))
        entry = {"event": path}
        try:
            entry["result"] = handler(event, Context())
        except BaseException:
            entry["error"] = traceback.format_exc()
        report["invocations"].append(entry)
    report["loaded_local_only"] = sorted(m for m in ("numpy", "tokenizers", "safetensors") if m in sys.modules)

    # Every module production may import lazily (adapters chosen by settings, opensearch-py) imports too.
    report["unimportable"] = {}
    names = ["opensearchpy", *(m.name for m in pkgutil.walk_packages(mnemo.__path__, "mnemo."))]
    for name in names:
        if not name.startswith(tuple(json.loads(local_only))):
            try:
                importlib.import_module(name)
            except BaseException:
                report["unimportable"][name] = traceback.format_exc(limit=-3)
    json.dump(report, open(out_path, "w"), default=str)
    """
)


# --- the built artefacts -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    template_path = BUILD / "template.yaml"
    if not template_path.is_file():
        pytest.fail(f"{template_path} is missing: run scripts/sam_build_check.sh (sam build) first")
    return load_template(template_path)


def python312() -> str:
    candidates = [os.environ.get("MNEMO_PYTHON312"), shutil.which("python3.12")]
    candidates += sorted(glob.glob("/root/.pyenv/versions/3.12.*/bin/python3.12"))
    for candidate in filter(None, candidates):
        version = subprocess.run(
            [candidate, "-S", "-c", "import sys; print(sys.version_info[:2])"], check=False, capture_output=True
        )
        if version.returncode == 0 and version.stdout.strip() == b"(3, 12)":
            return candidate
    pytest.fail("no python3.12 found (set MNEMO_PYTHON312): Lambda's runtime is python3.12")


def function_resources(built: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in built["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def layer_dirs(built: dict[str, Any], logical_id: str) -> list[Path]:
    """The function's layers, in order, as built directories."""
    properties = function_resources(built)[logical_id]["Properties"]
    layers = properties.get("Layers") or built.get("Globals", {}).get("Function", {}).get("Layers", [])
    dirs = []
    for layer in layers:
        assert isinstance(layer, dict) and "Ref" in layer, f"{logical_id}: layer {layer!r} is not a layer of this stack"
        dirs.append(BUILD / built["Resources"][layer["Ref"]]["Properties"]["ContentUri"])
    return dirs


def tree_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


# --- AWS stand-in --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aws(built: dict[str, Any]) -> Iterator[dict[str, str]]:
    """moto server with template.yaml's tables and queues, and the events' API key registered."""
    import boto3

    server, endpoint = start_moto()
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    dynamodb = session.client("dynamodb", endpoint_url=endpoint)
    resources = create_local_resources(dynamodb, session.client("sqs", endpoint_url=endpoint), TEMPLATE)
    KeyService(DynamoDbKeyStore(dynamodb, resources["KeysTable"])).ensure("local", "sam-build-check", ["admin"], TEST_SECRET)
    with refusing_address() as closed:  # nothing listens: fails fast, never the internet
        yield {**resources, "endpoint": endpoint, "closed": closed}
    server.stop()


# --- the function's environment, from template.yaml ------------------------------------------------


def resolve(value: Any, template: dict[str, Any], refs: dict[str, str], attributes: dict[str, str]) -> Any:
    """Evaluate the few intrinsics the functions' environment uses, with local stand-ins."""
    if not isinstance(value, dict):
        return value
    ((name, arg),) = value.items()
    if name == "Ref":
        if arg in refs:
            return refs[arg]
        return str(template["Parameters"][arg]["Default"])
    if name == "Fn::GetAtt":
        return attributes[".".join(arg)]
    if name == "Fn::Sub":
        return re.sub(r"\$\{([^}!]+)\}", lambda m: str(resolve({"Ref": m.group(1)}, template, refs, attributes)), arg)
    if name == "Fn::If":
        condition, if_true, if_false = arg
        chosen = if_true if resolve(template["Conditions"][condition], template, refs, attributes) else if_false
        return resolve(chosen, template, refs, attributes)
    if name == "Fn::Equals":
        return resolve(arg[0], template, refs, attributes) == resolve(arg[1], template, refs, attributes)
    if name == "Fn::Not":
        return not resolve(arg[0], template, refs, attributes)
    raise AssertionError(f"the test cannot evaluate {name} in a function's environment")


def function_env(logical_id: str, aws: dict[str, str], tmp: Path) -> dict[str, str]:
    template = load_template(TEMPLATE)
    closed = aws["closed"]
    refs = {
        "MemoriesTable": aws["MemoriesTable"],
        "KeysTable": aws["KeysTable"],
        "OAuthTable": aws["OAuthTable"],
        "EnrichmentQueue": aws["EnrichmentQueue"],
        "EnrichmentDLQ": aws["EnrichmentDLQ"],
        "HttpApi": API_ID,
        "AWS::Region": REGION,
        "AWS::URLSuffix": "amazonaws.com",
        "AWS::Partition": "aws",
        "AWS::AccountId": "123456789012",
        "AWS::StackName": "mnemo",
    }
    attributes = {"OpenSearchCollection.CollectionEndpoint": closed}
    properties = template["Resources"][logical_id]["Properties"]
    variables = {
        **template["Globals"]["Function"]["Environment"]["Variables"],
        **properties.get("Environment", {}).get("Variables", {}),
    }
    env = {name: str(resolve(value, template, refs, attributes)) for name, value in variables.items()}
    function_name = resolve(properties["FunctionName"], template, refs, attributes)
    env.update(
        {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp),
            "LANG": "C.UTF-8",
            "TZ": ":UTC",
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",  # /opt and /var/task are read-only on Lambda
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
            "AWS_LAMBDA_FUNCTION_NAME": function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(properties["MemorySize"]),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_ENDPOINT_URL_DYNAMODB": aws["endpoint"],
            "AWS_ENDPOINT_URL_SQS": aws["endpoint"],
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": closed,
            "POWERTOOLS_TRACE_DISABLED": "true",
        }
    )
    return env


# --- invoking ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def opt_dir(tmp_path_factory: pytest.TempPathFactory, built: dict[str, Any]) -> Path:
    """Every function uses the Globals layers: merge them once into an /opt look-alike."""
    opt = tmp_path_factory.mktemp("opt")
    for layer in layer_dirs(built, "ApiFunction"):
        shutil.copytree(layer, opt, dirs_exist_ok=True, symlinks=True)  # later layers win, as on Lambda
    return opt


@pytest.fixture(scope="module")
def invocations(
    built: dict[str, Any], aws: dict[str, str], opt_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    python = python312()
    reports: dict[str, dict[str, Any]] = {}
    for logical_id, events in CASES.items():
        resource = function_resources(built)[logical_id]
        assert layer_dirs(built, logical_id) == layer_dirs(built, "ApiFunction"), "the test assumes shared layers"
        task_root = BUILD / resource["Properties"]["CodeUri"]
        tmp = tmp_path_factory.mktemp(logical_id)
        out = tmp / "report.json"
        env = function_env(logical_id, aws, tmp)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(task_root), str(opt_dir / "python" / "lib" / "python3.12" / "site-packages"), str(opt_dir / "python")]
        )
        handler = resource["Properties"].get("Handler") or built["Globals"]["Function"]["Handler"]
        command = [python, "-S", "-s", "-c", DRIVER, str(out), handler, env["AWS_LAMBDA_FUNCTION_NAME"]]
        command += [str(resource["Properties"]["MemorySize"]), json.dumps(LOCAL_ONLY_MODULES)]
        command += [str(EVENTS / name) for name in events]
        run = subprocess.run(command, check=False, cwd=task_root, env=env, capture_output=True, text=True, timeout=180)
        report = json.loads(out.read_text()) if out.is_file() else {}
        report["returncode"] = run.returncode
        report["output"] = (run.stdout + run.stderr)[-4000:]
        report["opt"] = str(opt_dir)
        reports[logical_id] = report
    summary = {lid: {"init_ms": r.get("init_ms"), "import_error": "import_error" in r} for lid, r in reports.items()}
    (REPO / ".aws-sam" / "built-functions.json").write_text(json.dumps(summary, indent=2) + "\n")
    return reports


def invocation(invocations: dict[str, dict[str, Any]], logical_id: str, event: str) -> Any:
    report = invocations[logical_id]
    assert "import_error" not in report, f"{logical_id} does not import:\n{report['import_error']}"
    assert report["returncode"] == 0, f"{logical_id} crashed:\n{report['output']}"
    (entry,) = [e for e in report["invocations"] if e["event"].endswith("/" + event)]
    assert "error" not in entry, f"{logical_id} raised on {event}:\n{entry['error']}"
    return entry["result"]


def http(invocations: dict[str, dict[str, Any]], logical_id: str, event: str, status: int) -> dict[str, Any]:
    result = invocation(invocations, logical_id, event)
    assert result["statusCode"] == status, f"{event}: {result.get('statusCode')} {result.get('body', '')[:500]}"
    return result


def body(result: dict[str, Any]) -> Any:
    return json.loads(result["body"]) if result.get("body") else None


# --- the checks ----------------------------------------------------------------------------------


def test_the_layers_hold_the_code_and_the_deps_nothing_else(invocations: dict[str, dict[str, Any]]) -> None:
    for logical_id, report in invocations.items():
        assert "import_error" not in report, f"{logical_id} does not import:\n{report['import_error']}"
        # Then mnemo came from the shared layer, and no local-only dependency was imported
        assert report["mnemo_file"].startswith(report["opt"] + "/python/mnemo/"), report["mnemo_file"]
        assert report["loaded_local_only"] == [], f"{logical_id} imported {report['loaded_local_only']}"
        unimportable = "\n".join(f"{name}:\n{error}" for name, error in report["unimportable"].items())
        assert not unimportable, f"with {logical_id}'s layers these modules do not import:\n{unimportable}"


def test_the_shared_layer_leaves_the_local_stack_out(built: dict[str, Any]) -> None:
    # The embedded stack (moto patches, poller) only runs on a workstation: it is not shipped.
    layer = BUILD / "SharedLayer" / "python" / "mnemo"
    assert (layer / "surfaces" / "app.py").is_file(), "the shared layer holds mnemo"  # positive control
    assert (REPO / "shared" / "mnemo" / "local" / "__main__.py").is_file()
    assert not (layer / "local").exists(), "mnemo/local is in the shared layer"


def test_every_function_has_sample_events(built: dict[str, Any]) -> None:
    # A function added to template.yaml gets an events/*.json and a line in CASES.
    assert set(function_resources(built)) == set(CASES)


def test_each_function_fits_the_lambda_size_limit(built: dict[str, Any]) -> None:
    for logical_id, resource in function_resources(built).items():
        code = tree_size(BUILD / resource["Properties"]["CodeUri"])
        total = code + sum(tree_size(layer) for layer in layer_dirs(built, logical_id))
        assert total < LAMBDA_UNZIPPED_LIMIT * 0.8, f"{logical_id}: {total / 1e6:.1f} MB unzipped with its layers"


def test_rest_health(invocations: dict[str, dict[str, Any]]) -> None:
    http(invocations, "ApiFunction", "api_health.json", 200)


def test_rest_serves_the_console_and_the_docs_assets_from_the_shared_layer(invocations: dict[str, dict[str, Any]]) -> None:
    # The console's modules and Swagger UI's starter ship in the package as committed (nothing built),
    # each under the strict policy that keeps a third-party script off the console's origin.
    for event, marker in (("api_console.json", "sessionStorage"), ("api_docs_asset.json", "SwaggerUIBundle")):
        result = http(invocations, "ApiFunction", event, 200)
        assert marker in result["body"], event
        headers = {k.lower(): v for k, v in result["headers"].items()}
        assert "script-src 'self'" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"


def test_rest_create_then_list(invocations: dict[str, dict[str, Any]]) -> None:
    http(invocations, "ApiFunction", "api_create_memory.json", 201)
    listed = http(invocations, "ApiFunction", "api_list_memories.json", 200)
    assert "team standups are Tuesdays" in listed["body"]


def test_mcp_initialize(invocations: dict[str, dict[str, Any]]) -> None:
    result = body(http(invocations, "McpFunction", "mcp_initialize.json", 200))
    assert result["id"] == 1 and "serverInfo" in result["result"], result


def test_mcp_tools_list(invocations: dict[str, dict[str, Any]]) -> None:
    result = body(http(invocations, "McpFunction", "mcp_tools_list.json", 200))
    assert "capture_thought" in {tool["name"] for tool in result["result"]["tools"]}, result


def test_mcp_get_is_405(invocations: dict[str, dict[str, Any]]) -> None:
    http(invocations, "McpFunction", "mcp_get_405.json", 405)


def test_worker_reports_partial_batch_failures(invocations: dict[str, dict[str, Any]]) -> None:
    result = invocation(invocations, "WorkerFunction", "sqs_enrichment.json")
    assert isinstance(result["batchItemFailures"], list), result


def test_reconciler_runs_on_schedule(invocations: dict[str, dict[str, Any]]) -> None:
    invocation(invocations, "ReconcilerFunction", "schedule_reconcile.json")
