"""The local stack's tables and queues are the template's: create them in moto, describe them back.

Expectations are read from the raw template properties, not from `table_specs`/`queue_specs`, so a
translation bug in mnemo.local.template_resources cannot agree with itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from mnemo.local.template_resources import (
    TemplateResourceError,
    create_local_resources,
    load_template,
    queue_specs,
    table_specs,
    time_to_live_specs,
)
from mnemo.settings import MnemoSettings

TEMPLATE_PATH = Path(__file__).resolve().parents[2] / "template.yaml"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE_PATH)


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        yield boto3.client("dynamodb"), boto3.client("sqs")


def resources_of(template: dict[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    return {lid: res for lid, res in template["Resources"].items() if res["Type"] == resource_type}


def key_schema(elements: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(e["AttributeName"], e["KeyType"]) for e in elements]


def gsis(indexes: list[dict[str, Any]]) -> dict[str, tuple[list[tuple[str, str]], dict[str, Any]]]:
    return {i["IndexName"]: (key_schema(i["KeySchema"]), i["Projection"]) for i in indexes}


# --- parsing ------------------------------------------------------------------------------------


def test_short_form_tags_parse_to_intrinsic_functions(template: dict[str, Any]) -> None:
    # Given template.yaml with !Ref, !GetAtt, !Sub and !If, When loaded, Then they are plain intrinsics.
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["MNEMO_MEMORIES_TABLE"] == {"Ref": "MemoriesTable"}
    assert env["MNEMO_OPENSEARCH_SERVICE"] == {"Fn::If": ["IsServerless", "aoss", "es"]}
    assert "Fn::Sub" in env["MNEMO_ALLOWED_HOSTS"]
    redrive = template["Resources"]["EnrichmentQueue"]["Properties"]["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"] == {"Fn::GetAtt": ["EnrichmentDLQ", "Arn"]}


def test_every_table_and_queue_has_the_local_name_the_settings_default_to(template: dict[str, Any]) -> None:
    defaults = MnemoSettings.model_fields
    names = {kwargs["TableName"] for kwargs in table_specs(template)}
    assert names == {defaults["memories_table"].default, defaults["keys_table"].default, defaults["oauth_table"].default}
    assert {spec.logical_id: spec.name for spec in queue_specs(template)} == {
        "EnrichmentDLQ": "mnemo-enrichment-dlq",
        "EnrichmentQueue": "mnemo-enrichment",
    }


def test_dead_letter_queues_come_before_the_queues_that_use_them(template: dict[str, Any]) -> None:
    order = [spec.logical_id for spec in queue_specs(template)]
    assert order.index("EnrichmentDLQ") < order.index("EnrichmentQueue")


def test_template_environment_names_are_settings_fields(template: dict[str, Any]) -> None:
    # Given every MNEMO_* variable the functions get, Then each one is read by MnemoSettings (no typo
    # silently falls back to a local default in production).
    fields = {f"MNEMO_{name.upper()}" for name in MnemoSettings.model_fields}
    env_names = set(template["Globals"]["Function"]["Environment"]["Variables"])
    for resource in resources_of(template, "AWS::Serverless::Function").values():
        env_names |= set(resource["Properties"].get("Environment", {}).get("Variables", {}))
    assert {name for name in env_names if name.startswith("MNEMO_")} <= fields


def test_worker_max_receive_count_matches_the_redrive_policy(template: dict[str, Any]) -> None:
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    redrive = template["Resources"]["EnrichmentQueue"]["Properties"]["RedrivePolicy"]
    assert int(env["MNEMO_MAX_RECEIVE_COUNT"]) == redrive["maxReceiveCount"]


def test_queue_visibility_timeout_is_at_least_six_worker_timeouts(template: dict[str, Any]) -> None:
    worker = template["Resources"]["WorkerFunction"]["Properties"]
    queue = template["Resources"]["EnrichmentQueue"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]


def test_per_route_throttles_name_routes_that_exist(template: dict[str, Any]) -> None:
    # A RouteSettings key that names no route throttles nothing: each must be "<METHOD> <path>" of a route.
    api = template["Resources"]["HttpApi"]["Properties"]
    paths = api["DefinitionBody"]["paths"]
    for key, limits in api["RouteSettings"].items():
        method, path = key.split(" ", 1)
        assert method.lower() in paths[path], key
        assert limits["ThrottlingRateLimit"] < 50 and limits["ThrottlingBurstLimit"] < 100  # below the default routes'


def test_http_routes_target_the_functions_by_their_names(template: dict[str, Any]) -> None:
    # The routes name the functions as "${AWS::StackName}-<suffix>" (no !GetAtt: that would be a
    # dependency cycle, see template.yaml); Given each route, Then its suffix is a function's name.
    names = {
        lid: res["Properties"]["FunctionName"]["Fn::Sub"]
        for lid, res in resources_of(template, "AWS::Serverless::Function").items()
    }
    paths = template["Resources"]["HttpApi"]["Properties"]["DefinitionBody"]["paths"]
    routes = {}
    for path, operations in paths.items():
        for method, operation in operations.items():
            uri = operation["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
            target = re.search(r":function:(\$\{AWS::StackName\}-[a-z]+):live/invocations$", uri)
            assert target, uri
            routes[(method, path)] = next(lid for lid, name in names.items() if name == target.group(1))
    any_method = "x-amazon-apigateway-any-method"
    assert routes == {
        (any_method, "/mcp"): "McpFunction",
        (any_method, "/mcp/{proxy+}"): "McpFunction",
        (any_method, "/api/mcp"): "McpFunction",
        (any_method, "/v1/{proxy+}"): "ApiFunction",
        ("get", "/healthz"): "ApiFunction",
        ("get", "/.well-known/{proxy+}"): "ApiFunction",
        ("get", "/docs"): "ApiFunction",
        ("get", "/openapi.json"): "ApiFunction",
        # MCP authorization (docs/oauth.md)
        ("post", "/register"): "ApiFunction",
        ("get", "/authorize"): "ApiFunction",
        ("post", "/authorize"): "ApiFunction",
        ("post", "/token"): "ApiFunction",
        ("post", "/revoke"): "ApiFunction",
        ("get", "/oauth/consent"): "ApiFunction",
        ("post", "/oauth/consent"): "ApiFunction",
        ("get", "/docs/{proxy+}"): "ApiFunction",
        ("get", "/console"): "ApiFunction",
        ("get", "/console/{proxy+}"): "ApiFunction",
    }
    # and API Gateway may invoke exactly those two functions, through their `live` alias
    permissions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Permission"]
    assert sorted(p["Properties"]["FunctionName"]["Ref"] for p in permissions) == ["ApiFunction.Alias", "McpFunction.Alias"]


def test_the_routed_functions_resume_from_snapstart_snapshots_of_the_live_alias(template: dict[str, Any]) -> None:
    # Given the functions behind the HTTP API, Then each publishes a version per deploy, moves the
    # alias the routes invoke (`live`) to it, and has SnapStart on published versions; the worker and
    # reconciler (no user waits on their cold start) do not pay SnapStart's cache and restore charges.
    functions = resources_of(template, "AWS::Serverless::Function")
    runtime = template["Globals"]["Function"]["Runtime"]
    assert runtime.startswith("python3.") and int(runtime.split(".")[1]) >= 12  # SnapStart needs Python 3.12+
    for logical_id, resource in functions.items():
        properties = resource["Properties"]
        if logical_id in ("McpFunction", "ApiFunction"):
            assert properties["AutoPublishAlias"] == "live", logical_id
            assert properties["SnapStart"] == {"ApplyOn": "PublishedVersions"}, logical_id
            # SnapStart excludes provisioned concurrency, EFS and ephemeral storage above 512 MB
            assert "ProvisionedConcurrencyConfig" not in properties and "FileSystemConfigs" not in properties
            assert properties.get("EphemeralStorage", {"Size": 512})["Size"] <= 512
        else:
            assert "SnapStart" not in properties, logical_id


def test_only_a_stack_with_the_reranker_may_call_bedrock_rerank(template: dict[str, Any]) -> None:
    # The parameter reaches the settings, and the rerank grants exist only under its condition.
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["MNEMO_RERANKER"] == {"Ref": "Reranker"}
    assert env["MNEMO_RERANK_MODEL_ID"] == {"Ref": "RerankModelId"}
    assert template["Conditions"]["UsesReranker"] == {"Fn::Equals": [{"Ref": "Reranker"}, "bedrock"]}
    assert template["Parameters"]["Reranker"]["Default"] == "off"
    for name in ("McpFunction", "ApiFunction"):
        policies = template["Resources"][name]["Properties"]["Policies"]
        statements = [s for policy in policies for s in policy.get("Statement", [])]
        rerank = [s["Fn::If"] for s in statements if "Fn::If" in s and s["Fn::If"][0] == "UsesReranker"]
        assert {r[1]["Action"] for r in rerank} == {"bedrock:Rerank", "bedrock:InvokeModel"}, name
        assert all(r[2] == {"Ref": "AWS::NoValue"} for r in rerank)
        # The embedding grant is unconditional (positive control: the statements were read)
        assert any(s.get("Sid") == "EmbedQueries" for s in statements), name
    worker = json.dumps(template["Resources"]["WorkerFunction"]["Properties"]["Policies"])
    assert "bedrock:Rerank" not in worker and "UsesReranker" not in worker


def test_opensearch_serverless_policies_are_json(template: dict[str, Any]) -> None:
    # CloudFormation only checks these documents at deploy time; a stray comma fails the stack.
    policies = {
        **resources_of(template, "AWS::OpenSearchServerless::SecurityPolicy"),
        **resources_of(template, "AWS::OpenSearchServerless::AccessPolicy"),
    }
    assert len(policies) == 3
    for resource in policies.values():
        document = resource["Properties"]["Policy"]["Fn::Sub"]
        json.loads(re.sub(r"\$\{[^}]+\}", "x", document))


def test_a_name_the_local_stack_cannot_resolve_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "template.yaml"
    path.write_text(
        "Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n"
        "      TableName: !Sub '${AWS::StackName}-t'\n      KeySchema: []\n",
        encoding="utf-8",
    )
    with pytest.raises(TemplateResourceError, match="LocalName"):
        table_specs(load_template(path))


# --- created in moto, described back --------------------------------------------------------------


def test_tables_match_the_template(template: dict[str, Any], clients: tuple[Any, Any]) -> None:
    dynamodb, sqs = clients
    # When the local stack creates everything from the template
    created = create_local_resources(dynamodb, sqs, TEMPLATE_PATH)
    # Then every table exists with the template's keys, attribute types, GSIs, billing and TTL
    for logical_id, resource in resources_of(template, "AWS::DynamoDB::Table").items():
        expected = resource["Properties"]
        table = dynamodb.describe_table(TableName=created[logical_id])["Table"]
        assert table["TableName"] == resource["Metadata"]["LocalName"]
        assert key_schema(table["KeySchema"]) == key_schema(expected["KeySchema"])
        assert sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
            expected["AttributeDefinitions"], key=lambda a: a["AttributeName"]
        )
        assert gsis(table.get("GlobalSecondaryIndexes", [])) == gsis(expected.get("GlobalSecondaryIndexes", []))
        assert table["BillingModeSummary"]["BillingMode"] == expected["BillingMode"] == "PAY_PER_REQUEST"
        ttl = dynamodb.describe_time_to_live(TableName=created[logical_id])["TimeToLiveDescription"]
        if "TimeToLiveSpecification" in expected:
            assert ttl["TimeToLiveStatus"] == "ENABLED"
            assert ttl["AttributeName"] == expected["TimeToLiveSpecification"]["AttributeName"]
        else:
            assert ttl["TimeToLiveStatus"] == "DISABLED"


def test_memories_table_has_the_access_patterns_the_store_queries(template: dict[str, Any]) -> None:
    # The indexes the adapters name (gsi1 browse, gsi2 counts, gsi3 reconciler, by_tenant keys).
    specs = {kwargs["TableName"]: kwargs for kwargs in table_specs(template)}
    memories = gsis(specs["mnemo-memories"]["GlobalSecondaryIndexes"])
    assert memories == {
        "gsi1": ([("gsi1pk", "HASH"), ("gsi1sk", "RANGE")], {"ProjectionType": "ALL"}),
        "gsi2": ([("gsi2pk", "HASH"), ("gsi2sk", "RANGE")], {"ProjectionType": "KEYS_ONLY"}),
        "gsi3": ([("gsi3pk", "HASH"), ("gsi3sk", "RANGE")], {"ProjectionType": "ALL"}),
        "gsi4": ([("gsi4pk", "HASH"), ("gsi1sk", "RANGE")], {"ProjectionType": "ALL"}),
        "gsi5": ([("gsi5pk", "HASH"), ("gsi1sk", "RANGE")], {"ProjectionType": "ALL"}),
        "gsi6": ([("gsi6pk", "HASH"), ("gsi1sk", "RANGE")], {"ProjectionType": "ALL"}),
    }
    keys = gsis(specs["mnemo-keys"]["GlobalSecondaryIndexes"])
    assert keys == {"by_tenant": ([("tenant", "HASH"), ("prefix", "RANGE")], {"ProjectionType": "ALL"})}
    assert time_to_live_specs(template) == {"mnemo-memories": "expires_at", "mnemo-oauth": "ttl"}


def test_queues_match_the_template(template: dict[str, Any], clients: tuple[Any, Any]) -> None:
    dynamodb, sqs = clients
    created = create_local_resources(dynamodb, sqs, TEMPLATE_PATH)
    for logical_id, resource in resources_of(template, "AWS::SQS::Queue").items():
        expected = resource["Properties"]
        attributes = sqs.get_queue_attributes(QueueUrl=created[logical_id], AttributeNames=["All"])["Attributes"]
        assert attributes["QueueArn"].endswith(":" + resource["Metadata"]["LocalName"])
        for name in ("VisibilityTimeout", "MessageRetentionPeriod"):
            if name in expected:
                assert attributes[name] == str(expected[name]), name
        assert attributes.get("SqsManagedSseEnabled") == "true"
        if "RedrivePolicy" in expected:
            redrive = json.loads(attributes["RedrivePolicy"])
            target = expected["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
            dlq_arn = sqs.get_queue_attributes(QueueUrl=created[target], AttributeNames=["QueueArn"])["Attributes"]
            assert redrive["deadLetterTargetArn"] == dlq_arn["QueueArn"]
            assert int(redrive["maxReceiveCount"]) == expected["RedrivePolicy"]["maxReceiveCount"]
        else:
            assert "RedrivePolicy" not in attributes


def test_local_overrides_shorten_the_queue_cycle_and_rename(clients: tuple[Any, Any]) -> None:
    dynamodb, sqs = clients
    # Given local overrides (flat for every queue, and per resource)
    overrides = {
        "VisibilityTimeout": 10,
        "maxReceiveCount": 3,
        "MemoriesTable": {"Name": "t-memories"},
        "EnrichmentQueue": {"Name": "t-enrichment"},
    }
    created = create_local_resources(dynamodb, sqs, TEMPLATE_PATH, overrides)
    # Then the queue uses them, the DLQ keeps its own settings, and the names changed where asked
    assert created["MemoriesTable"] == "t-memories"
    assert created["KeysTable"] == "mnemo-keys"
    assert created["EnrichmentQueue"].endswith("/t-enrichment")
    attributes = sqs.get_queue_attributes(QueueUrl=created["EnrichmentQueue"], AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "10"
    assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] in (3, "3")
    dlq = sqs.get_queue_attributes(QueueUrl=created["EnrichmentDLQ"], AttributeNames=["All"])["Attributes"]
    assert dlq["MessageRetentionPeriod"] == "1209600"
    assert "RedrivePolicy" not in dlq


def test_creating_twice_reuses_the_tables(clients: tuple[Any, Any]) -> None:
    dynamodb, sqs = clients
    first = create_local_resources(dynamodb, sqs, TEMPLATE_PATH)
    assert create_local_resources(dynamodb, sqs, TEMPLATE_PATH) == first
