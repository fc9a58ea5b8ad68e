"""Create a translated template's resources on the emulator and describe its wiring.

Every name, ARN, handler, event source, route, authorizer and schedule comes from the
template; this module only knows how each CloudFormation resource type maps to the API
calls that create it, and gives resources deterministic physical names
(`<stack>-<LogicalId>`, or the name the template sets).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from sewerbill.local.alarms import Alarm
from sewerbill.local.archive import LocalArchive
from sewerbill.local.emulator import Emulator
from sewerbill.local.filters import parse_filters
from sewerbill.local.intrinsics import Resolver
from sewerbill.local.schedule import Schedule

log = logging.getLogger("sewerbill.local")

EMULATED = {
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::Events::EventBus",
    "AWS::S3::Bucket",
    "AWS::SES::EmailIdentity",
    "AWS::Lambda::Function",
    "AWS::Events::Rule",
    "AWS::Events::Archive",  # on disk, a file a day, replayable (sewerbill.local.archive)
    "AWS::Scheduler::Schedule",
    "AWS::Lambda::EventSourceMapping",
    "AWS::ApiGatewayV2::Api",
    "AWS::CloudWatch::Alarm",  # its condition evaluated on the local stack (sewerbill.local.alarms)
    "AWS::SNS::Topic",
    "AWS::SNS::Subscription",
}

# Types with nothing to run locally, by design: permissions (the runtime enforces no IAM),
# log groups (logs go to the console), API stages and deployments (the gateway serves the
# routes directly) and dashboards (`sewerbill local status` lists the alarms that hold).
# Any other type the runtime does not create stops start-up
# (NotEmulated): a template must not run locally with a part silently missing.
NO_OPS = {
    "AWS::IAM::Role",
    "AWS::IAM::Policy",
    "AWS::IAM::ManagedPolicy",
    "AWS::Lambda::Permission",
    "AWS::Logs::LogGroup",
    "AWS::SQS::QueuePolicy",
    "AWS::S3::BucketPolicy",
    "AWS::ApiGatewayV2::Stage",
    "AWS::ApiGatewayV2::Deployment",
    "AWS::CloudWatch::Dashboard",
    # A layer's contents are part of each function's artifact (sewerbill.local.template.artifacts):
    # its modules are importable from the code folder, its tariffs are TariffsDir's folder.
    "AWS::Lambda::LayerVersion",
}


@dataclass
class Function:
    logical_id: str
    name: str
    arn: str
    handler: str
    environment: dict[str, str]
    timeout_s: int = 3
    memory_mb: int = 128
    code_dir: Path | None = None
    # What its worker may import: sewerbill.local.template.import_rules (None: anything).
    imports: dict[str, list[str]] | None = None


@dataclass
class QueueSource:
    """An SQS event source mapping."""

    function: str
    queue_url: str
    queue_arn: str
    batch_size: int = 10
    report_batch_item_failures: bool = False
    enabled: bool = True
    filters: list[dict[str, Any]] = field(default_factory=list)
    # ScalingConfig.MaximumConcurrency: invocations at once when the runtime runs sources
    # concurrently (absent: 1 here, so a queue without one is handled in order)
    maximum_concurrency: int = 1


@dataclass
class StreamSource:
    function: str
    stream_arn: str
    table_name: str
    batch_size: int = 100
    starting_position: str = "TRIM_HORIZON"
    report_batch_item_failures: bool = False
    max_retries: int = 3
    enabled: bool = True
    filters: list[dict[str, Any]] = field(default_factory=list)
    on_failure: str | None = None  # DestinationConfig.OnFailure: a queue ARN of the stack


@dataclass
class JwtAuthorizer:
    name: str
    issuer: str
    audience: list[str]
    identity_source: str = "$request.header.Authorization"


@dataclass
class Route:
    method: str  # upper case, or ANY
    path: str  # /things/{tenant}, /files/{proxy+} or $default
    function: str
    authorizer: JwtAuthorizer | None = None
    scopes: list[str] = field(default_factory=list)

    @property
    def route_key(self) -> str:
        return "$default" if self.path == "$default" else f"{self.method} {self.path}"

    def pattern(self) -> re.Pattern[str]:
        if self.path == "$default":
            return re.compile(r"^/.*$")
        regex = ""
        for piece in re.split(r"(\{[^}]+\})", self.path):
            if piece.startswith("{") and piece.endswith("+}"):
                regex += f"(?P<{_group(piece[1:-2])}>.+)"
            elif piece.startswith("{"):
                regex += f"(?P<{_group(piece[1:-1])}>[^/]+)"
            else:
                regex += re.escape(piece)
        return re.compile(f"^{regex}$")

    def specificity(self) -> tuple[int, int, int]:
        literal = len(re.sub(r"\{[^}]+\}", "", self.path))
        return (self.path != "$default", self.method != "ANY", literal)


def _group(name: str) -> str:
    return re.sub(r"\W", "_", name)


@dataclass
class ScheduledTarget:
    logical_id: str
    name: str
    arn: str
    schedule: Schedule
    target_arn: str
    input: str | None
    enabled: bool = True
    message_group_id: str | None = None


@dataclass
class Stack:
    name: str
    account: str
    region: str
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)  # logical id -> attrs
    types: dict[str, str] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    queue_sources: list[QueueSource] = field(default_factory=list)
    stream_sources: list[StreamSource] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    authorizers: dict[str, JwtAuthorizer] = field(default_factory=dict)
    schedules: list[ScheduledTarget] = field(default_factory=list)
    dead_letter_queues: dict[str, str] = field(default_factory=dict)  # dlq url -> logical id
    queue_urls_by_arn: dict[str, str] = field(default_factory=dict)
    alarms: list[Alarm] = field(default_factory=list)
    archives: list[LocalArchive] = field(default_factory=list)
    # bucket name -> the NotificationConfiguration it was given (a restore turns it off and on)
    bucket_notifications: dict[str, dict[str, Any]] = field(default_factory=dict)

    def physical(self, logical_id: str) -> Any:
        return self.resources[logical_id]["Ref"]

    def function_by_arn(self, arn: str) -> Function | None:
        for fn in self.functions.values():
            if arn in (fn.arn, fn.name) or arn.startswith(fn.arn + ":"):
                return fn
        return None


class NotEmulated(RuntimeError):
    """The template uses something the local runtime cannot run faithfully."""


class Provisioner:
    """Creates resources in dependency-friendly order and records their attributes."""

    def __init__(
        self,
        cfn: dict[str, Any],
        emulator: Emulator,
        stack_name: str,
        parameters: dict[str, Any],
        account: str,
        code_dirs: dict[str, Path],
        gateway_url: str,
    ) -> None:
        self.cfn = cfn
        self.emulator = emulator
        self.code_dirs = code_dirs
        self.gateway_url = gateway_url
        self.stack = Stack(name=stack_name, account=account, region=emulator.region)
        pseudo = {
            "AWS::Region": emulator.region,
            "AWS::AccountId": account,
            "AWS::StackName": stack_name,
            "AWS::StackId": f"arn:aws:cloudformation:{emulator.region}:{account}:stack/{stack_name}/local",
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NotificationARNs": [],
        }
        self.r = Resolver(cfn, parameters, pseudo, fallback=self._fallback)
        self.resources = {
            lid: res for lid, res in (cfn.get("Resources") or {}).items() if self.r.included(res)
        }
        for lid, res in self.resources.items():
            self.stack.types[lid] = res["Type"]
        self._clients: dict[str, Any] = {}

    def _client(self, service: str) -> Any:
        """One client per service for the whole provisioning (a boto3 client takes tens of
        milliseconds to build; the stack's 34 queues alone built one each)."""
        client = self._clients.get(service)
        if client is None:
            client = self._clients[service] = self.emulator.client(service)
        return client

    # --- naming -----------------------------------------------------------------------
    def _default_name(self, logical_id: str, limit: int = 64, lower: bool = False) -> str:
        name = f"{self.stack.name}-{logical_id}"
        if lower:
            name = re.sub(r"[^a-z0-9.-]", "-", name.lower())
        return name[:limit]

    def _name(self, logical_id: str, prop: str, limit: int = 64, lower: bool = False) -> str:
        props = self.resources[logical_id].get("Properties") or {}
        if prop in props:
            return str(self.r.resolve(props[prop]))
        return self._default_name(logical_id, limit, lower)

    def _arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.stack.region}:{self.stack.account}:{resource}"

    def _fallback(self, logical_id: str, attribute: str) -> Any:
        rtype = self.stack.types.get(logical_id)
        if rtype is None:
            return None
        name = self._default_name(logical_id)
        if rtype == "AWS::IAM::Role":
            return name if attribute == "Ref" else f"arn:aws:iam::{self.stack.account}:role/{name}"
        if attribute == "Ref":
            return name
        if attribute == "Arn":
            service = rtype.split("::")[1].lower()
            return self._arn(service, name)
        return None

    def _props(self, logical_id: str) -> dict[str, Any]:
        return self.r.resolve(self.resources[logical_id].get("Properties") or {}) or {}

    def _of_type(self, *types: str) -> list[str]:
        return [lid for lid, res in self.resources.items() if res["Type"] in types]

    # --- the whole stack ----------------------------------------------------------------
    def provision(self) -> Stack:
        unknown = {
            lid: res["Type"]
            for lid, res in self.resources.items()
            if res["Type"] not in EMULATED and res["Type"] not in NO_OPS
        }
        if unknown:
            raise NotEmulated(
                "the local runtime cannot emulate "
                + ", ".join(f"{lid} ({rtype})" for lid, rtype in sorted(unknown.items()))
            )
        self._name_everything()
        for lid in self._of_type("AWS::DynamoDB::Table"):
            self._table(lid)
        queues = self._of_type("AWS::SQS::Queue")
        for lid in queues:
            self._queue(lid)
        for lid in queues:
            self._redrive(lid)
        for lid in self._of_type("AWS::Events::EventBus"):
            self._bus(lid)
        for lid in self._of_type("AWS::S3::Bucket"):
            self._bucket(lid)
        for lid in self._of_type("AWS::SES::EmailIdentity"):
            self._email_identity(lid)
        for lid in self._of_type("AWS::SNS::Topic"):
            self._client("sns").create_topic(Name=self.r.attrs[lid]["TopicName"])
        for lid in self._of_type("AWS::SNS::Subscription"):
            p = self._props(lid)
            self._client("sns").subscribe(
                TopicArn=p["TopicArn"], Protocol=p["Protocol"], Endpoint=p.get("Endpoint", "")
            )
        for lid in self._of_type("AWS::Lambda::Function"):
            self._function(lid)
        for lid in self._of_type("AWS::Events::Rule"):
            self._rule(lid)
        for lid in self._of_type("AWS::Events::Archive"):
            self._archive(lid)
        for lid in self._of_type("AWS::Scheduler::Schedule"):
            self._schedule(lid)
        for lid in self._of_type("AWS::Lambda::EventSourceMapping"):
            self._event_source(lid)
        for lid in self._of_type("AWS::ApiGatewayV2::Api"):
            self._http_api(lid)
        for lid in self._of_type("AWS::CloudWatch::Alarm"):
            self.stack.alarms.append(Alarm.of(lid, self._default_name(lid, 255), self._props(lid)))
        self.stack.resources = self.r.attrs
        return self.stack

    def _name_everything(self) -> None:
        """Attributes that are known before anything is created (names and ARNs)."""
        region, account = self.stack.region, self.stack.account
        for lid, res in self.resources.items():
            rtype = res["Type"]
            attrs: dict[str, Any]
            if rtype == "AWS::DynamoDB::Table":
                name = self._name(lid, "TableName", 255)
                attrs = {"Ref": name, "Arn": self._arn("dynamodb", f"table/{name}")}
            elif rtype == "AWS::SQS::Queue":
                name = self._name(lid, "QueueName", 80)
                props = res.get("Properties") or {}
                if props.get("FifoQueue") in (True, "true") and not name.endswith(".fifo"):
                    name = name[:75] + ".fifo"
                attrs = {"QueueName": name, "Arn": self._arn("sqs", name)}
            elif rtype == "AWS::Events::EventBus":
                name = self._name(lid, "Name", 256)
                attrs = {"Ref": name, "Name": name, "Arn": self._arn("events", f"event-bus/{name}")}
            elif rtype == "AWS::S3::Bucket":
                name = self._name(lid, "BucketName", 63, lower=True)
                attrs = {
                    "Ref": name,
                    "Arn": f"arn:aws:s3:::{name}",
                    "DomainName": f"{name}.s3.amazonaws.com",
                    "RegionalDomainName": f"{name}.s3.{region}.amazonaws.com",
                }
            elif rtype == "AWS::Lambda::Function":
                name = self._name(lid, "FunctionName", 64)
                attrs = {"Ref": name, "Arn": self._arn("lambda", f"function:{name}")}
            elif rtype == "AWS::Events::Rule":
                name = self._name(lid, "Name", 64)
                attrs = {"Ref": name, "Arn": self._arn("events", f"rule/{name}")}
            elif rtype == "AWS::Events::Archive":
                name = self._name(lid, "ArchiveName", 48)
                attrs = {"Ref": name, "ArchiveName": name, "Arn": self._arn("events", f"archive/{name}")}
            elif rtype == "AWS::Scheduler::Schedule":
                name = self._name(lid, "Name", 64)
                group = (res.get("Properties") or {}).get("GroupName", "default")
                attrs = {
                    "Ref": name,
                    "Arn": self._arn("scheduler", f"schedule/{self.r.resolve(group)}/{name}"),
                }
            elif rtype == "AWS::SNS::Topic":
                name = self._name(lid, "TopicName", 256)
                arn = self._arn("sns", name)
                attrs = {"Ref": arn, "TopicArn": arn, "TopicName": name}
            elif rtype == "AWS::SES::EmailIdentity":
                attrs = {"Ref": self._name(lid, "EmailIdentity")}
            elif rtype == "AWS::ApiGatewayV2::Api":
                attrs = {"Ref": lid.lower()[:10], "ApiId": lid.lower()[:10], "ApiEndpoint": self.gateway_url}
            elif rtype == "AWS::IAM::Role":
                name = self._name(lid, "RoleName", 64)
                attrs = {"Ref": name, "Arn": f"arn:aws:iam::{account}:role/{name}", "RoleId": name}
            elif rtype == "AWS::Logs::LogGroup":
                name = self._name(lid, "LogGroupName", 512)
                attrs = {"Ref": name, "Arn": self._arn("logs", f"log-group:{name}:*")}
            else:
                attrs = {}
            self.r.attrs[lid] = attrs

    # --- resources ----------------------------------------------------------------------
    def _table(self, lid: str) -> None:
        p = self._props(lid)
        name = self.r.attrs[lid]["Ref"]
        ddb = self._client("dynamodb")
        args: dict[str, Any] = {
            "TableName": name,
            "KeySchema": p["KeySchema"],
            "AttributeDefinitions": p["AttributeDefinitions"],
        }
        on_demand = p.get("BillingMode", "PROVISIONED" if "ProvisionedThroughput" in p else "PAY_PER_REQUEST")
        args["BillingMode"] = on_demand
        if on_demand == "PROVISIONED":
            args["ProvisionedThroughput"] = p.get(
                "ProvisionedThroughput", {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
            )
        for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if p.get(key):
                indexes = []
                for index in p[key]:
                    index = dict(index)
                    if on_demand == "PAY_PER_REQUEST":
                        index.pop("ProvisionedThroughput", None)
                    index.pop("ContributorInsightsSpecification", None)
                    indexes.append(index)
                args[key] = indexes
        stream = p.get("StreamSpecification")
        if stream:
            args["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream["StreamViewType"]}
        try:
            desc = ddb.create_table(**args)["TableDescription"]
        except ddb.exceptions.ResourceInUseException:
            desc = ddb.describe_table(TableName=name)["Table"]
        ttl = p.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled") in (True, "true"):
            ddb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )
        pitr = p.get("PointInTimeRecoverySpecification") or {}
        if pitr.get("PointInTimeRecoveryEnabled") in (True, "true"):
            # as AWS keeps it: what an export to S3 (DEPLOY.md 7, restore tried locally) needs
            with contextlib.suppress(ClientError):
                ddb.update_continuous_backups(
                    TableName=name,
                    PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
                )
        self.r.attrs[lid]["Arn"] = desc["TableArn"]
        if desc.get("LatestStreamArn"):
            self.r.attrs[lid]["StreamArn"] = desc["LatestStreamArn"]

    def _queue(self, lid: str) -> None:
        p = self._props(lid)
        attrs = self.r.attrs[lid]
        names = {
            "VisibilityTimeout",
            "MessageRetentionPeriod",
            "DelaySeconds",
            "MaximumMessageSize",
            "ReceiveMessageWaitTimeSeconds",
            "FifoQueue",
            "ContentBasedDeduplication",
            "DeduplicationScope",
            "FifoThroughputLimit",
        }
        attributes = {k: _attr_text(v) for k, v in p.items() if k in names}
        sqs = self._client("sqs")
        url = sqs.create_queue(QueueName=attrs["QueueName"], Attributes=attributes)["QueueUrl"]
        # a queue's ARN is its region, account and name (SQS's own format): no call to ask it
        arn = f"arn:aws:sqs:{self.stack.region}:{self.stack.account}:{attrs['QueueName']}"
        attrs.update({"Ref": url, "QueueUrl": url, "Arn": arn})
        self.stack.queue_urls_by_arn[arn] = url

    def _redrive(self, lid: str) -> None:
        p = self._props(lid)
        policy = p.get("RedrivePolicy")
        if not policy:
            return
        if isinstance(policy, str):
            policy = json.loads(policy)
        target = policy["deadLetterTargetArn"]
        policy = {"deadLetterTargetArn": target, "maxReceiveCount": int(policy["maxReceiveCount"])}
        self._client("sqs").set_queue_attributes(
            QueueUrl=self.r.attrs[lid]["Ref"], Attributes={"RedrivePolicy": json.dumps(policy)}
        )
        dlq_url = self.stack.queue_urls_by_arn.get(target)
        if dlq_url:
            dlq_lid = next(k for k, v in self.r.attrs.items() if v.get("QueueUrl") == dlq_url)
            self.stack.dead_letter_queues[dlq_url] = dlq_lid

    def _bus(self, lid: str) -> None:
        events = self._client("events")
        name = self.r.attrs[lid]["Ref"]
        try:
            arn = events.create_event_bus(Name=name)["EventBusArn"]
        except events.exceptions.ResourceAlreadyExistsException:
            arn = events.describe_event_bus(Name=name)["Arn"]
        self.r.attrs[lid]["Arn"] = arn

    def _bucket(self, lid: str) -> None:
        p = self._props(lid)
        name = self.r.attrs[lid]["Ref"]
        s3 = self._client("s3")
        try:
            if self.stack.region == "us-east-1":
                s3.create_bucket(Bucket=name)
            else:
                s3.create_bucket(
                    Bucket=name, CreateBucketConfiguration={"LocationConstraint": self.stack.region}
                )
        except (s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
            pass
        notification = p.get("NotificationConfiguration") or {}
        config: dict[str, Any] = {}
        eb = notification.get("EventBridgeConfiguration") or {}
        if eb.get("EventBridgeEnabled") in (True, "true"):
            config["EventBridgeConfiguration"] = {}
        for queue in notification.get("QueueConfigurations") or []:
            entry: dict[str, Any] = {"QueueArn": queue["Queue"], "Events": [queue["Event"]]}
            rules = ((queue.get("Filter") or {}).get("S3Key") or {}).get("Rules")
            if rules:
                entry["Filter"] = {"Key": {"FilterRules": rules}}
            config.setdefault("QueueConfigurations", []).append(entry)
        if config:
            s3.put_bucket_notification_configuration(Bucket=name, NotificationConfiguration=config)
            self.stack.bucket_notifications[name] = config

    def _email_identity(self, lid: str) -> None:
        identity = self.r.attrs[lid]["Ref"]
        ses = self._client("ses")
        if "@" in identity:
            ses.verify_email_identity(EmailAddress=identity)
        else:
            ses.verify_domain_identity(Domain=identity)

    def _function(self, lid: str) -> None:
        p = self._props(lid)
        env = {k: _env_text(v) for k, v in ((p.get("Environment") or {}).get("Variables") or {}).items()}
        self.stack.functions[lid] = Function(
            logical_id=lid,
            name=self.r.attrs[lid]["Ref"],
            arn=self.r.attrs[lid]["Arn"],
            handler=p["Handler"],
            environment=env,
            timeout_s=int(p.get("Timeout", 3)),
            memory_mb=int(p.get("MemorySize", 128)),
            code_dir=self.code_dirs.get(lid),
        )

    def _archive(self, lid: str) -> None:
        """An archive of its bus's events (sewerbill.local.archive): a rule with the archive's
        pattern on the bus, delivering to a queue of the runtime's own."""
        p = self._props(lid)
        name = self.r.attrs[lid]["Ref"]
        bus = str(p["SourceArn"]).rsplit("/", 1)[-1]
        queue = f"{name}-archive"[:80]
        sqs = self._client("sqs")
        url = sqs.create_queue(QueueName=queue)["QueueUrl"]
        arn = f"arn:aws:sqs:{self.stack.region}:{self.stack.account}:{queue}"
        pattern = p.get("EventPattern") or {"source": [{"prefix": ""}]}
        events = self._client("events")
        events.put_rule(
            Name=queue[:64],
            EventBusName=bus,
            EventPattern=pattern if isinstance(pattern, str) else json.dumps(pattern),
        )
        events.put_targets(Rule=queue[:64], EventBusName=bus, Targets=[{"Id": "archive", "Arn": arn}])
        retention = p.get("RetentionDays")
        self.stack.archives.append(
            LocalArchive(lid, name, url, arn, None if retention is None else int(retention))
        )

    def _rule(self, lid: str) -> None:
        p = self._props(lid)
        name = self.r.attrs[lid]["Ref"]
        bus = p.get("EventBusName")
        if isinstance(bus, str) and bus.startswith("arn:"):
            bus = bus.rsplit("/", 1)[-1]
        events = self._client("events")
        args: dict[str, Any] = {"Name": name, "State": p.get("State", "ENABLED")}
        if bus:
            args["EventBusName"] = bus
            self.r.attrs[lid]["Arn"] = self._arn("events", f"rule/{bus}/{name}")
        if "EventPattern" in p:
            pattern = p["EventPattern"]
            args["EventPattern"] = pattern if isinstance(pattern, str) else json.dumps(pattern)
        if "ScheduleExpression" in p:
            raise NotEmulated(f"{lid}: schedules are AWS::Scheduler::Schedule resources here, not rules")
        arn = events.put_rule(**args)["RuleArn"]
        self.r.attrs[lid]["Arn"] = arn
        targets = []
        for target in p.get("Targets") or []:
            target_arn = target["Arn"]
            if target_arn not in self.stack.queue_urls_by_arn:
                # Every asynchronous trigger goes through a queue with a DLQ (DESIGN.md).
                raise NotEmulated(f"{lid}: target {target_arn} is not a queue of this stack")
            entry = {
                k: v
                for k, v in target.items()
                if k
                in (
                    "Id",
                    "Input",
                    "InputPath",
                    "InputTransformer",
                    "SqsParameters",
                    "DeadLetterConfig",
                    "RetryPolicy",
                )
            }
            entry["Arn"] = target_arn
            self._dead_letter_queue(lid, (target.get("DeadLetterConfig") or {}).get("Arn"))
            targets.append(entry)
        if targets:
            put = {"Rule": name, "Targets": targets}
            if bus:
                put["EventBusName"] = bus
            events.put_targets(**put)

    def _dead_letter_queue(self, lid: str, arn: str | None) -> str | None:
        """A dead-letter destination (stream OnFailure, rule target DeadLetterConfig): it must
        be a queue of the stack, watched and reported like the queues' DLQs."""
        if arn is None:
            return None
        url = self.stack.queue_urls_by_arn.get(arn)
        if url is None:
            raise NotEmulated(f"{lid}: dead-letter destination {arn} is not a queue of this stack")
        self.stack.dead_letter_queues[url] = next(
            k for k, v in self.r.attrs.items() if v.get("QueueUrl") == url
        )
        return arn

    def _schedule(self, lid: str) -> None:
        p = self._props(lid)
        target = p["Target"]
        if target["Arn"] not in self.stack.queue_urls_by_arn:
            raise NotEmulated(f"{lid}: target {target['Arn']} is not a queue of this stack")
        self.stack.schedules.append(
            ScheduledTarget(
                logical_id=lid,
                name=self.r.attrs[lid]["Ref"],
                arn=self.r.attrs[lid]["Arn"],
                schedule=Schedule(
                    p["ScheduleExpression"],
                    p.get("ScheduleExpressionTimezone", "UTC"),
                    _parse_time(p.get("StartDate")),
                    _parse_time(p.get("EndDate")),
                ),
                target_arn=target["Arn"],
                input=target.get("Input"),
                enabled=p.get("State", "ENABLED") == "ENABLED",
                message_group_id=(target.get("SqsParameters") or {}).get("MessageGroupId"),
            )
        )

    def _event_source(self, lid: str) -> None:
        p = self._props(lid)
        fn = self.stack.function_by_arn(str(p["FunctionName"]))
        if fn is None:
            raise NotEmulated(f"{lid}: {p['FunctionName']} is not a function of this stack")
        source_arn = p["EventSourceArn"]
        reports = "ReportBatchItemFailures" in (p.get("FunctionResponseTypes") or [])
        enabled = p.get("Enabled", True) not in (False, "false")
        if source_arn in self.stack.queue_urls_by_arn:
            self.stack.queue_sources.append(
                QueueSource(
                    function=fn.logical_id,
                    queue_url=self.stack.queue_urls_by_arn[source_arn],
                    queue_arn=source_arn,
                    batch_size=int(p.get("BatchSize", 10)),
                    report_batch_item_failures=reports,
                    enabled=enabled,
                    filters=parse_filters(p.get("FilterCriteria")),
                    maximum_concurrency=int((p.get("ScalingConfig") or {}).get("MaximumConcurrency", 1)),
                )
            )
        elif ":dynamodb:" in source_arn and "/stream/" in source_arn:
            retries = int(p.get("MaximumRetryAttempts", -1))
            self.stack.stream_sources.append(
                StreamSource(
                    function=fn.logical_id,
                    stream_arn=source_arn,
                    table_name=source_arn.split(":table/", 1)[1].split("/", 1)[0],
                    batch_size=int(p.get("BatchSize", 100)),
                    starting_position=p.get("StartingPosition", "TRIM_HORIZON"),
                    report_batch_item_failures=reports,
                    # Lambda retries a stream batch until it expires by default; locally a
                    # bound keeps drain() finite, and the record is reported as dead.
                    max_retries=retries if retries >= 0 else 3,
                    enabled=enabled,
                    filters=parse_filters(p.get("FilterCriteria")),
                    on_failure=self._dead_letter_queue(
                        lid, ((p.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
                    ),
                )
            )
        else:
            raise NotEmulated(f"{lid}: event source {source_arn} is not emulated locally")

    # --- HTTP API -------------------------------------------------------------------------
    def _http_api(self, lid: str) -> None:
        p = self._props(lid)
        if not p.get("Body"):
            # SAM writes an HttpApi's routes as an OpenAPI body; nothing else is emulated.
            raise NotEmulated(f"{lid}: an HTTP API without an OpenAPI body (SAM HttpApi) is not emulated")
        self._routes_from_openapi(p["Body"])

    def _routes_from_openapi(self, body: dict[str, Any]) -> None:
        schemes = (body.get("components") or {}).get("securitySchemes") or {}
        for name, scheme in schemes.items():
            auth = scheme.get("x-amazon-apigateway-authorizer") or {}
            if auth.get("type") == "jwt":
                cfg = auth.get("jwtConfiguration") or {}
                self.stack.authorizers[name] = JwtAuthorizer(
                    name=name,
                    issuer=cfg.get("issuer", ""),
                    audience=_as_list(cfg.get("audience")),
                    identity_source=_first(auth.get("identitySource", "$request.header.Authorization")),
                )
        global_security = body.get("security") or []
        for path, methods in (body.get("paths") or {}).items():
            for method, op in methods.items():
                if not isinstance(op, dict) or "x-amazon-apigateway-integration" not in op:
                    continue
                uri = str(op["x-amazon-apigateway-integration"].get("uri", ""))
                fn = self._function_in_uri(uri)
                if fn is None:
                    log.warning("route %s %s: integration %s is not a local function", method, path, uri)
                    continue
                authorizer, scopes = None, []
                for requirement in op.get("security", global_security) or []:
                    for scheme_name, scheme_scopes in requirement.items():
                        if scheme_name in self.stack.authorizers:
                            authorizer, scopes = self.stack.authorizers[scheme_name], list(scheme_scopes)
                verb = "ANY" if method == "x-amazon-apigateway-any-method" else method.upper()
                route_path = "$default" if path == "$default" else path
                self.stack.routes.append(Route(verb, route_path, fn.logical_id, authorizer, scopes))

    def _function_in_uri(self, uri: str) -> Function | None:
        match = re.search(r"functions/([^/]+)/invocations", uri)
        candidate = match.group(1) if match else uri
        return self.stack.function_by_arn(candidate)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _first(value: Any) -> str:
    return str(value[0]) if isinstance(value, list) else str(value)


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _env_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
