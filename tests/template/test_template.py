"""template.yaml: it lints, it translates, and it keeps the conventions the code relies on."""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from typing import Any

import pytest

from common.config import FunctionConfig
from common.openapi import PORTAL_API_MODULES, build_document, portal_resolvers, public_paths
from sewerbill.samtemplate import TEMPLATE_PATH, load_template, resources_of_type, translate_template

SERVICES = ("metering", "sampling", "stormwater", "billing", "notices")
TABLES = {f"{s.capitalize()}Table" for s in SERVICES}


@cache
def cfn() -> dict[str, Any]:
    return translate_template()


@cache
def sam() -> dict[str, Any]:
    return load_template()


def functions() -> dict[str, dict[str, Any]]:
    return resources_of_type(cfn(), "AWS::Lambda::Function")


def sam_functions() -> dict[str, dict[str, Any]]:
    return resources_of_type(sam(), "AWS::Serverless::Function")


def refs(node: Any) -> set[str]:
    """Logical ids referenced anywhere in ``node`` (Ref, GetAtt, Sub variables)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "Ref" and isinstance(v, str):
                found.add(v)
            elif k == "Fn::GetAtt":
                found.add(v[0] if isinstance(v, list) else str(v).split(".")[0])
            elif k == "Fn::Sub":
                text, variables = (v, {}) if isinstance(v, str) else (v[0], v[1])
                found |= {m for m in re.findall(r"\$\{([A-Za-z0-9]+)[.}]", text) if m not in variables}
                found |= refs(variables)
            else:
                found |= refs(v)
    elif isinstance(node, list):
        for v in node:
            found |= refs(v)
    return found


def service_of(function_id: str) -> str:
    handler = functions()[function_id]["Properties"]["Handler"]
    return handler.split(".")[0]


def test_cfn_lint_reports_no_errors_or_warnings() -> None:
    from cfnlint.api import lint_file

    matches = lint_file(TEMPLATE_PATH)
    assert not matches, "\n".join(str(m) for m in matches)


def test_parameters_the_local_runtime_relies_on_have_their_defaults() -> None:
    params = sam()["Parameters"]
    assert params["Stage"]["Default"] == "local"
    assert params["JwtIssuer"]["Default"] == "https://auth.sewerbill.local/"
    assert params["JwtAudience"]["Default"] == "sewerbill-portal"
    assert params["LogRetentionDays"]["Default"] == 30
    assert params["TariffsDir"]["Default"] == "/opt/tariffs"  # the TariffsLayer's folder


def test_every_function_handler_imports_and_exposes_a_callable_lambda_handler() -> None:
    assert len(functions()) >= 7
    for function_id, resource in functions().items():
        module_name, _, attr = resource["Properties"]["Handler"].rpartition(".")
        module = importlib.import_module(module_name)
        assert attr == "lambda_handler", function_id
        assert callable(getattr(module, attr)), function_id


def test_one_table_per_service_on_demand_with_point_in_time_recovery() -> None:
    tables = resources_of_type(cfn(), "AWS::DynamoDB::Table")
    assert set(tables) == TABLES
    for table_id, table in tables.items():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST", table_id
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True, table_id
        assert [k["AttributeName"] for k in props["KeySchema"]] == ["pk", "sk"], table_id


def test_every_outbox_publisher_reads_its_own_tables_stream() -> None:
    for function_id, resource in sam_functions().items():
        for event in resource["Properties"].get("Events", {}).values():
            if event["Type"] != "DynamoDB":
                continue
            table_id = event["Properties"]["Stream"]["Fn::GetAtt"][0]
            assert table_id == f"{service_of(function_id).capitalize()}Table", function_id
            assert resource["Properties"]["Handler"].endswith("publish_outbox.lambda_handler")
            assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
            stream = cfn()["Resources"][table_id]["Properties"]["StreamSpecification"]
            assert stream["StreamViewType"] in {"NEW_IMAGE", "NEW_AND_OLD_IMAGES"}


def test_every_sqs_consumer_has_a_dlq_and_a_visibility_timeout_of_six_function_timeouts() -> None:
    mappings = resources_of_type(cfn(), "AWS::Lambda::EventSourceMapping")
    queues = resources_of_type(cfn(), "AWS::SQS::Queue")
    checked = 0
    for mapping in mappings.values():
        props = mapping["Properties"]
        source = props["EventSourceArn"]
        if "Fn::GetAtt" not in source or source["Fn::GetAtt"][0] not in queues:
            continue
        queue_id = source["Fn::GetAtt"][0]
        function_id = props["FunctionName"]["Ref"]
        queue = queues[queue_id]["Properties"]
        timeout = functions()[function_id]["Properties"]["Timeout"]
        assert queue["VisibilityTimeout"] >= 6 * timeout, queue_id
        dlq_id = queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        assert dlq_id == queue_id.removesuffix("Queue") + "DLQ"
        assert dlq_id in queues
        assert 1 < queue["RedrivePolicy"]["maxReceiveCount"] <= 10
        assert props["BatchSize"] == 10
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        # A flood of messages cannot scale a consumer without bound (checkov: concurrency).
        assert 2 <= props["ScalingConfig"]["MaximumConcurrency"] <= 10, queue_id
        checked += 1
    assert checked >= 4


def test_every_consumer_queue_is_fed_by_a_rule_or_a_schedule_and_allows_it_to_send() -> None:
    rules = resources_of_type(cfn(), "AWS::Events::Rule")
    schedules = resources_of_type(cfn(), "AWS::Scheduler::Schedule")
    policies = resources_of_type(cfn(), "AWS::SQS::QueuePolicy")
    fed = {t["Arn"]["Fn::GetAtt"][0] for r in rules.values() for t in r["Properties"]["Targets"]}
    fed |= {s["Properties"]["Target"]["Arn"]["Fn::GetAtt"][0] for s in schedules.values()}
    # A queue one function feeds another (billing's cycle chunks): its policy names that role.
    fed |= {
        p["Properties"]["Queues"][0]["Ref"]
        for p in policies.values()
        if "Fn::GetAtt" in p["Properties"]["PolicyDocument"]["Statement"][0]["Principal"].get("AWS", {})
        and p["Properties"]["PolicyDocument"]["Statement"][0]["Principal"]["AWS"]["Fn::GetAtt"][0].endswith(
            "FunctionRole"
        )
    }
    consumer_queues = {q for q in resources_of_type(cfn(), "AWS::SQS::Queue") if not q.endswith("DLQ")}
    assert consumer_queues == fed
    for queue_id in consumer_queues:
        assert f"{queue_id}Policy" in policies, queue_id
        assert policies[f"{queue_id}Policy"]["Properties"]["Queues"] == [{"Ref": queue_id}]


def test_upload_rules_live_on_the_default_bus_and_service_rules_on_the_custom_bus() -> None:
    for rule_id, rule in resources_of_type(cfn(), "AWS::Events::Rule").items():
        props = rule["Properties"]
        if props["EventPattern"]["source"] == ["aws.s3"]:
            assert props.get("EventBusName", "default") == "default", rule_id
            assert props["EventPattern"]["detail"]["bucket"]["name"] == [{"Ref": "UploadsBucket"}]
        else:
            assert props["EventBusName"] == {"Ref": "EventBus"}, rule_id
            assert all(s.startswith("sewerbill.") for s in props["EventPattern"]["source"]), rule_id


def test_uploads_bucket_announces_uploads_to_eventbridge() -> None:
    bucket = cfn()["Resources"]["UploadsBucket"]["Properties"]
    assert bucket["NotificationConfiguration"]["EventBridgeConfiguration"]["EventBridgeEnabled"] is True


def test_schedules_send_their_fire_time_to_a_queue_through_the_scheduler_role() -> None:
    schedules = resources_of_type(cfn(), "AWS::Scheduler::Schedule")
    tenants = set()
    for schedule_id, schedule in schedules.items():
        props = schedule["Properties"]
        assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}
        assert props["ScheduleExpressionTimezone"] == "America/Chicago"
        assert props["Target"]["RoleArn"] == {"Fn::GetAtt": ["SchedulerRole", "Arn"]}
        body = json.loads(props["Target"]["Input"])
        assert body["scheduled_time"] == "<aws.scheduler.scheduled-time>", schedule_id
        if "tenant" in body:
            tenants.add(body["tenant"])
    assert tenants == {
        "pleasant-prairie-sewer",
        "pleasant-prairie-stormwater",
        "grafton-sewer",
        "sullivan-sewer",
    }
    role = cfn()["Resources"]["SchedulerRole"]["Properties"]
    targets = {s["Properties"]["Target"]["Arn"]["Fn::GetAtt"][0] for s in schedules.values()}
    granted = {
        r["Fn::GetAtt"][0]
        for p in role["Policies"]
        for st in p["PolicyDocument"]["Statement"]
        for r in st["Resource"]
    }
    assert granted == targets


def test_every_function_has_a_log_group_with_retention() -> None:
    groups = resources_of_type(cfn(), "AWS::Logs::LogGroup")
    covered: dict[str, Any] = {}
    for group in groups.values():
        props = group["Properties"]
        assert props["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        covered |= {r: group for r in refs(props["LogGroupName"])}
    assert set(functions()) <= set(covered)


def test_each_function_touches_only_its_own_table() -> None:
    for function_id in functions():
        role = cfn()["Resources"][f"{function_id}Role"]["Properties"]
        touched = refs(role.get("Policies", [])) & TABLES
        assert touched <= {f"{service_of(function_id).capitalize()}Table"}, function_id
        env = functions()[function_id]["Properties"]["Environment"]["Variables"]
        assert refs(env) & TABLES <= {f"{service_of(function_id).capitalize()}Table"}, function_id


def test_only_outbox_publishers_may_put_events_on_the_bus() -> None:
    for function_id, resource in functions().items():
        role = cfn()["Resources"][f"{function_id}Role"]["Properties"]
        may_put = "events:PutEvents" in json.dumps(role.get("Policies", []))
        assert may_put == resource["Properties"]["Handler"].endswith("publish_outbox.lambda_handler"), (
            function_id
        )


def _config_models() -> dict[str, type[FunctionConfig]]:
    from billing import config as billing_config
    from metering import config as metering_config
    from notices import config as notices_config
    from sampling import config as sampling_config
    from stormwater import config as stormwater_config
    from webportal.config import PortalConfig

    return {
        "metering.handlers.on_read_file_uploaded.lambda_handler": metering_config.MeteringConfig,
        "metering.handlers.on_interval_file_uploaded.lambda_handler": metering_config.MeteringConfig,
        "metering.handlers.run_daily.lambda_handler": metering_config.MeteringConfig,
        "metering.handlers.api.lambda_handler": metering_config.MeteringConfig,
        "metering.handlers.publish_outbox.lambda_handler": metering_config.PublishOutboxConfig,
        "billing.handlers.on_consumption_determined.lambda_handler": billing_config.TableConfig,
        "billing.handlers.run_billing_cycle.lambda_handler": billing_config.CycleFanOutConfig,
        "billing.handlers.run_daily_assessment.lambda_handler": billing_config.BillingCycleConfig,
        "billing.handlers.publish_outbox.lambda_handler": billing_config.PublishOutboxConfig,
        "sampling.handlers.on_lab_file_uploaded.lambda_handler": sampling_config.SamplingConfig,
        "sampling.handlers.on_accounts_changed.lambda_handler": sampling_config.SamplingConfig,
        "sampling.handlers.publish_outbox.lambda_handler": sampling_config.PublishOutboxConfig,
        "sampling.handlers.run_sampling_daily.lambda_handler": sampling_config.SamplingConfig,
        "sampling.handlers.api.lambda_handler": sampling_config.SamplingConfig,
        "billing.handlers.api.lambda_handler": billing_config.StaffApiConfig,
        "billing.handlers.on_file_uploaded.lambda_handler": billing_config.FileUploadedConfig,
        "billing.handlers.issue_bills.lambda_handler": billing_config.BillingCycleConfig,
        "billing.handlers.on_producer_event.lambda_handler": billing_config.TableConfig,
        "billing.handlers.on_audit_event.lambda_handler": billing_config.TableConfig,
        "stormwater.handlers.on_gis_extract_uploaded.lambda_handler": stormwater_config.ExtractUploadedConfig,
        "stormwater.handlers.publish_outbox.lambda_handler": stormwater_config.PublishOutboxConfig,
        "stormwater.handlers.api.lambda_handler": stormwater_config.TableConfig,
        "stormwater.handlers.on_billing_event.lambda_handler": stormwater_config.TableConfig,
        "stormwater.handlers.run_tariff_check.lambda_handler": stormwater_config.TableConfig,
        "notices.handlers.on_notice_event.lambda_handler": notices_config.NoticesConfig,
        "notices.handlers.run_print_batch.lambda_handler": notices_config.NoticesConfig,
        "notices.handlers.publish_outbox.lambda_handler": notices_config.PublishOutboxConfig,
        "notices.handlers.api.lambda_handler": notices_config.ApiConfig,
        "webportal.handlers.pre_token_generation.lambda_handler": PortalConfig,
        "webportal.handlers.write_site_config.lambda_handler": PortalConfig,
    }


def test_the_template_sets_every_variable_each_functions_config_model_requires() -> None:
    models = _config_models()
    for function_id, resource in functions().items():
        handler = resource["Properties"]["Handler"]
        assert handler in models, f"{function_id}: no config model registered for {handler}"
        env = {k.lower() for k in resource["Properties"]["Environment"]["Variables"]}
        required = {name for name, f in models[handler].model_fields.items() if f.is_required()}
        assert required <= env, f"{function_id} lacks {sorted(required - env)}"
        assert "powertools_service_name" in env, function_id


def _http_routes() -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    routes = {}
    for resource in sam_functions().values():
        for event in resource["Properties"].get("Events", {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]
                assert props["ApiId"] == {"Ref": "PortalApi"}
                routes[(props["Method"].upper(), props["Path"])] = (resource["Properties"]["Handler"], props)
    return routes


def test_portal_api_has_a_jwt_authorizer_by_default() -> None:
    api = sam()["Resources"]["PortalApi"]["Properties"]["Auth"]
    assert api["DefaultAuthorizer"] == "PortalJwt"
    jwt = api["Authorizers"]["PortalJwt"]
    assert jwt["IdentitySource"] == "$request.header.Authorization"
    # The local issuer by default (PortalSignIn=local-issuer); the Cognito pool in AWS (issue 14).
    assert jwt["JwtConfiguration"] == {
        "issuer": {
            "Fn::If": [
                "PortalUsesCognito",
                {"Fn::Sub": "https://cognito-idp.${AWS::Region}.amazonaws.com/${PortalUserPool}"},
                {"Ref": "JwtIssuer"},
            ]
        },
        "audience": [
            {"Fn::If": ["PortalUsesCognito", {"Ref": "PortalUserPoolClient"}, {"Ref": "JwtAudience"}]}
        ],
    }
    assert sam()["Parameters"]["PortalSignIn"]["Default"] == "local-issuer"


def test_the_portal_in_aws_is_a_private_bucket_behind_cloudfront_with_cognito_sign_in() -> None:
    resources = sam()["Resources"]
    portal = {k: v for k, v in resources.items() if v.get("Condition") == "PortalUsesCognito"}
    kinds = sorted({v["Type"] for v in portal.values()})
    assert kinds == [
        "AWS::CloudFront::Distribution",
        "AWS::CloudFront::OriginAccessControl",
        "AWS::CloudWatch::Alarm",  # the portal functions' errors and throttles (issue 30)
        "AWS::Cognito::UserPool",
        "AWS::Cognito::UserPoolClient",
        "AWS::Cognito::UserPoolDomain",
        "AWS::Cognito::UserPoolGroup",
        "AWS::Lambda::Permission",
        "AWS::Logs::LogGroup",
        "AWS::S3::Bucket",
        "AWS::S3::BucketPolicy",
        "AWS::Serverless::Function",
        "Custom::PortalSiteConfig",
    ]
    bucket = resources["PortalSiteBucket"]["Properties"]["PublicAccessBlockConfiguration"]
    assert all(bucket.values())
    origin = resources["PortalDistribution"]["Properties"]["DistributionConfig"]["Origins"][0]
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": ["PortalOriginAccessControl", "Id"]}
    groups = sorted(
        v["Properties"]["GroupName"] for v in portal.values() if v["Type"] == "AWS::Cognito::UserPoolGroup"
    )
    assert groups == ["customer", "owner", "staff"]
    attributes = [a["Name"] for a in resources["PortalUserPool"]["Properties"]["Schema"]]
    assert attributes == ["tenants", "accounts", "parcels"]


def test_cognito_tokens_get_the_contract_claims_from_the_pre_token_trigger() -> None:
    resources = sam()["Resources"]
    trigger = resources["PortalUserPool"]["Properties"]["LambdaConfig"]["PreTokenGeneration"]
    assert trigger == {"Fn::GetAtt": ["PortalPreTokenFunction", "Arn"]}
    handler = resources["PortalPreTokenFunction"]["Properties"]["Handler"]
    assert handler == "webportal.handlers.pre_token_generation.lambda_handler"
    permission = resources["PortalPreTokenPermission"]["Properties"]
    assert permission["Principal"] == "cognito-idp.amazonaws.com"
    assert permission["SourceArn"] == {"Fn::GetAtt": ["PortalUserPool", "Arn"]}


def test_the_app_client_uses_the_code_flow_and_no_secret() -> None:
    # A public client (static pages) must not hold a secret; PKCE protects its code instead.
    client = sam()["Resources"]["PortalUserPoolClient"]["Properties"]
    assert client["AllowedOAuthFlows"] == ["code"]
    assert client["GenerateSecret"] is False


def test_the_portal_config_is_written_to_its_bucket_at_deploy_from_the_stacks_values() -> None:
    resources = sam()["Resources"]
    config = resources["PortalSiteConfig"]["Properties"]
    assert config["ServiceToken"] == {"Fn::GetAtt": ["PortalSiteConfigFunction", "Arn"]}
    assert refs(config) >= {"PortalSiteBucket", "PortalApi", "PortalUserPoolDomain", "PortalUserPoolClient"}
    [policy] = resources["PortalSiteConfigFunction"]["Properties"]["Policies"]
    [statement] = policy["Statement"]  # config.json only (issue 30: least privilege)
    assert (statement["Action"], statement["Resource"]) == (
        "s3:PutObject",
        {"Fn::Sub": "${PortalSiteBucket.Arn}/config.json"},
    )


def test_http_routes_in_the_template_are_the_routes_in_the_openapi_document() -> None:
    routes = _http_routes()
    document = build_document(portal_resolvers())
    documented = {(m.upper(), p) for p, ops in document["paths"].items() for m in ops}
    assert set(routes) == documented
    public = {
        route for route, (_, props) in routes.items() if props.get("Auth", {}).get("Authorizer") == "NONE"
    }
    assert public == public_paths(document)
    assert {handler.rpartition(".")[0] for handler, _ in routes.values()} == set(PORTAL_API_MODULES)


@pytest.mark.parametrize("stage", ["local", "prod"])
def test_template_translates_for_any_stage(stage: str) -> None:
    assert translate_template(parameter_overrides={"Stage": stage})["Resources"]


def _queue_policy_statements(queue_id: str) -> list[dict[str, Any]]:
    policies = resources_of_type(cfn(), "AWS::SQS::QueuePolicy")
    return [
        statement
        for policy in policies.values()
        if policy["Properties"]["Queues"] == [{"Ref": queue_id}]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_every_outbox_stream_sends_batches_it_could_not_publish_to_a_dlq() -> None:
    queues = resources_of_type(cfn(), "AWS::SQS::Queue")
    streams = [
        m["Properties"]
        for m in resources_of_type(cfn(), "AWS::Lambda::EventSourceMapping").values()
        if "StreamArn" in json.dumps(m["Properties"]["EventSourceArn"])
    ]
    assert len(streams) >= 2
    for props in streams:
        function_id = props["FunctionName"]["Ref"]
        destination = props["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"]
        assert destination[0] in queues and destination[0].endswith("DLQ"), function_id
        assert 0 < props["MaximumRetryAttempts"] <= 100, function_id
        # Lambda sends the failure record with the function's own role.
        role = json.dumps(cfn()["Resources"][f"{function_id}Role"]["Properties"]["Policies"])
        assert '"sqs:SendMessage"' in role and destination[0] in role, function_id


def test_every_rule_target_has_a_dead_letter_queue_eventbridge_may_send_to() -> None:
    queues = resources_of_type(cfn(), "AWS::SQS::Queue")
    checked = 0
    for rule_id, rule in resources_of_type(cfn(), "AWS::Events::Rule").items():
        for target in rule["Properties"]["Targets"]:
            dlq_id = target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
            assert dlq_id in queues and dlq_id.endswith("DLQ"), rule_id
            retry = target["RetryPolicy"]
            assert 0 < retry["MaximumEventAgeInSeconds"] <= 86400, rule_id
            assert 0 <= retry["MaximumRetryAttempts"] <= 185, rule_id
            allowed = [
                st
                for st in _queue_policy_statements(dlq_id)
                if st["Effect"] == "Allow"
                and st["Principal"] == {"Service": "events.amazonaws.com"}
                and st["Action"] == "sqs:SendMessage"
            ]
            assert allowed, f"{dlq_id} lets no EventBridge rule send to it"
            # Only this account's rules: the condition names a rule ARN of this account.
            assert all("aws:SourceArn" in json.dumps(st["Condition"]) for st in allowed), dlq_id
            checked += 1
    assert checked >= 2


def test_every_bucket_refuses_requests_without_tls() -> None:
    buckets = resources_of_type(cfn(), "AWS::S3::Bucket")
    policies = resources_of_type(cfn(), "AWS::S3::BucketPolicy")
    assert len(buckets) >= 2
    for bucket_id in buckets:
        statements = [
            st
            for p in policies.values()
            if p["Properties"]["Bucket"] == {"Ref": bucket_id}
            for st in p["Properties"]["PolicyDocument"]["Statement"]
        ]
        denies = [
            st
            for st in statements
            if st["Effect"] == "Deny"
            and st["Principal"] == "*"
            and st["Action"] == "s3:*"
            and st["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        ]
        assert denies, f"{bucket_id} accepts plain HTTP"
        resources = json.dumps(denies[0]["Resource"])
        assert bucket_id in resources and "/*" in resources, bucket_id  # the bucket and its objects


def test_the_portal_api_writes_a_json_access_log_and_throttles_runaway_clients() -> None:
    [stage] = resources_of_type(cfn(), "AWS::ApiGatewayV2::Stage").values()
    props = stage["Properties"]
    logs = props["AccessLogSettings"]
    group_id = logs["DestinationArn"]["Fn::GetAtt"][0]
    assert cfn()["Resources"][group_id]["Type"] == "AWS::Logs::LogGroup"
    # The format is one JSON object per request (placeholders filled in by API Gateway).
    fields = json.loads(re.sub(r"\$context\.[A-Za-z.]+", "x", logs["Format"]))
    assert {"requestId", "ip", "routeKey", "status", "requestTime"} <= set(fields)
    throttle = props["DefaultRouteSettings"]
    assert 0 < throttle["ThrottlingRateLimit"] <= throttle["ThrottlingBurstLimit"]


def test_every_function_is_traced_and_emits_metrics_in_the_sewerbill_namespace() -> None:
    from common.observability import NAMESPACE

    globals_env = sam()["Globals"]["Function"]["Environment"]["Variables"]
    assert globals_env["POWERTOOLS_METRICS_NAMESPACE"] == NAMESPACE
    for function_id, resource in functions().items():
        assert resource["Properties"]["TracingConfig"] == {"Mode": "Active"}, function_id
        role = cfn()["Resources"][f"{function_id}Role"]["Properties"]
        assert any("AWSXrayWriteOnlyAccess" in json.dumps(arn) for arn in role["ManagedPolicyArns"]), (
            function_id
        )


def test_every_entry_point_is_wrapped_with_logger_metrics_and_tracer() -> None:
    for function_id, resource in functions().items():
        module_name, _, attr = resource["Properties"]["Handler"].rpartition(".")
        entry = getattr(importlib.import_module(module_name), attr)
        assert getattr(entry, "__observed__", False), f"{function_id}: decorate it with @observed"


def test_the_max_receive_count_functions_see_is_every_queues_redrive_count() -> None:
    # common.handling counts a failure on this receive as a dead letter.
    expected = int(sam()["Globals"]["Function"]["Environment"]["Variables"]["MAX_RECEIVE_COUNT"])
    queues = resources_of_type(cfn(), "AWS::SQS::Queue")
    redriven = [
        q["Properties"]["RedrivePolicy"] for q in queues.values() if "RedrivePolicy" in q["Properties"]
    ]
    assert len(redriven) >= 4
    assert {r["maxReceiveCount"] for r in redriven} == {expected}
