"""Helpers for sampling's tests through the local runtime (moto server, the real template)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sewerbill.local import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "events"
PP = "pleasant-prairie-sewer"
HEADER = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
)


def start_capture(rt: LocalRuntime) -> str:
    """A queue receiving every sewerbill.sampling event on the custom bus."""
    sqs = rt.client("sqs")
    url = sqs.create_queue(QueueName="sampling-capture")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = rt.resource("EventBus")
    events = rt.client("events")
    events.put_rule(
        Name="sampling-capture", EventBusName=bus, EventPattern=json.dumps({"source": ["sewerbill.sampling"]})
    )
    events.put_targets(Rule="sampling-capture", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])
    return str(url)


def captured(rt: LocalRuntime, url: str) -> list[dict[str, Any]]:
    sqs = rt.client("sqs")
    found: list[dict[str, Any]] = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for m in messages:
            found.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return found


def call(rt: LocalRuntime, method: str, path: str, body: Any = None, tenants: tuple[str, ...] = (PP,)) -> Any:
    token = rt.mint_token(sub="clerk-anna", claims={"role": "staff", "tenants": list(tenants)})
    req = urllib.request.Request(
        rt.gateway_url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
            answer = resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        answer = err.code, json.loads(err.read())
    rt.drain()  # the route's outbox items go out through the stream, as after an upload
    return answer


def sampling_items(rt: LocalRuntime) -> list[dict[str, Any]]:
    ddb = rt.client("dynamodb")
    pages = ddb.get_paginator("scan").paginate(TableName=rt.resource("SamplingTable"))
    return sorted((i for p in pages for i in p["Items"]), key=lambda i: (i["pk"]["S"], i["sk"]["S"]))
