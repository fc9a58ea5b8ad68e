"""X-AUDIT: every event names its actor, and the audit store answers who, when, what, why."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from handler_support import TABLES, Stack, authorized_http_event, lambda_context, sqs_event
from test_billing_flow import ACCOUNTS, consume, flow, run_cycle, upload  # noqa: F401

from billing.handlers import api, on_audit_event, publish_outbox
from common.events import Event

STAFF = {"sub": "clerk-7", "role": "staff", "tenants": "[grafton-sewer]"}
OTHER_TENANT = {"sub": "clerk-9", "role": "staff", "tenants": "[pleasant-prairie-sewer]"}
MEMO = {
    "bill_id": "GR-1-2026-07-01",
    "amount": "-20.00",
    "reason": "meter misread",
    "approver": "Finance Director",
    "reference": "ADJ-1",
}


def call(method: str, path: str, claims: dict[str, str] = STAFF, body: Any = None, **query: str) -> Any:
    event = authorized_http_event(
        method, path, claims, query=query or None, body=None if body is None else json.dumps(body)
    )
    response = api.lambda_handler(event, lambda_context("sewerbill-local-BillingApiFunction"))
    return response


def body_of(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


def with_audit_indexes(stack: Stack) -> None:
    """The billing table's two sparse indexes, as template.yaml declares them."""
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("audit_account", "audit_actor", "audit_at")]
    for index, key in (("AuditByAccount", "audit_account"), ("AuditByActor", "audit_actor")):
        stack.ddb.update_table(
            TableName=TABLES["billing"],
            AttributeDefinitions=defs,
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index,
                        "KeySchema": [
                            {"AttributeName": key, "KeyType": "HASH"},
                            {"AttributeName": "audit_at", "KeyType": "RANGE"},
                        ],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                }
            ],
        )


@pytest.fixture
def audited(flow: Stack) -> Stack:  # noqa: F811
    """GR-1 billed by the cycle (the system), then a staff credit memo on its bill; every
    event published and delivered to the audit consumer (twice: kept once)."""
    with_audit_indexes(flow)
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000)
    consume(flow, "GR-2", 12000)
    run_cycle(flow)
    assert call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body=MEMO)["statusCode"] == 200
    return flow


def publish(stack: Stack) -> None:
    """Billing's outbox published (its stream's new records); what the bus took, kept."""
    publish_outbox.lambda_handler({"Records": stack.stream_records("billing")}, lambda_context())
    stack.audited = [*getattr(stack, "audited", []), *stack.captured()]  # type: ignore[attr-defined]


def deliver(stack: Stack) -> list[dict[str, Any]]:
    """Every event the bus took, delivered to the audit consumer."""
    publish(stack)
    events: list[dict[str, Any]] = stack.audited  # type: ignore[attr-defined]
    bodies = [json.dumps({**e, "account": "123456789012"}) for e in events]
    for at in range(0, len(bodies), 10):
        answer = on_audit_event.lambda_handler(sqs_event(*bodies[at : at + 10]), lambda_context())
        assert answer["batchItemFailures"] == []
    return events


def test_a_staff_routes_event_names_the_tokens_sub_and_its_reason(audited: Stack) -> None:
    events = deliver(audited)
    [adjusted] = [e["detail"] for e in events if e["detail-type"] == "BillAdjusted"]
    assert adjusted["actor"] == "clerk-7"
    assert adjusted["reason"] == "meter misread"


def test_a_system_functions_event_names_the_function(audited: Stack) -> None:
    events = deliver(audited)
    started = [e["detail"] for e in events if e["detail-type"] == "BillingCycleStarted"]
    assert started and all(d["actor"] == "test-function" for d in started)
    # who ran it is the function, and no request's actor leaks into the next invocation
    assert not any(
        d.get("actor") == "clerk-7"
        for e in events
        if e["detail-type"] != "BillAdjusted"
        for d in [e["detail"]]
    )


def test_an_event_without_actor_or_reason_leaves_them_out_and_old_events_parse() -> None:
    from datetime import UTC, datetime

    from metering.events import ConsumptionDetermined

    event = ConsumptionDetermined(
        occurred_at=datetime(2026, 10, 1, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        period_start=datetime(2026, 7, 1).date(),
        period_end=datetime(2026, 10, 1).date(),
        volume_gal=1,
        source_file="reads/q.csv",
    )
    detail = json.loads(event.detail_json())
    assert "actor" not in detail and "reason" not in detail
    assert ConsumptionDetermined.from_detail(detail).actor is None
    named = json.loads(event.attributed("fn").detail_json())
    assert named["actor"] == "fn" and Event.model_fields["actor"].default is None


def test_the_audit_trail_of_an_account_says_who_when_what_why_oldest_first(audited: Stack) -> None:
    deliver(audited)
    response = call("GET", "/staff/grafton-sewer/audit", account_id="GR-1")
    assert response["statusCode"] == 200
    rows = body_of(response)["rows"]
    kinds = [r["detail_type"] for r in rows]
    assert "BillAdjusted" in kinds and all(r["account_id"] == "GR-1" for r in rows)
    [adjusted] = [r for r in rows if r["detail_type"] == "BillAdjusted"]
    assert (adjusted["actor"], adjusted["reason"], adjusted["source"]) == (
        "clerk-7",
        "meter misread",
        "sewerbill.billing",
    )
    assert adjusted["detail"]["amount"] == "-20.00"
    assert [r["occurred_at"] for r in rows] == sorted(r["occurred_at"] for r in rows)
    assert body_of(call("GET", "/staff/grafton-sewer/audit", account_id="GR-2"))["rows"] != []


def test_a_redelivered_event_is_kept_once(audited: Stack) -> None:
    events = deliver(audited)
    body = json.dumps({**events[-1], "account": "123456789012"})
    on_audit_event.lambda_handler(sqs_event(body, body), lambda_context())
    audits = [i for i in audited.items("billing") if i["pk"].startswith("AUDIT#") and "member_of" not in i]
    assert sorted(i["event_id"] for i in audits) == sorted({e["detail"]["event_id"] for e in events})
    members = [i for i in audited.items("billing") if "member_of" in i]
    assert len(members) == len({i["pk"] for i in members})  # a chunk's members, once each


def test_the_audit_trail_of_an_actor_is_what_that_actor_did(audited: Stack) -> None:
    deliver(audited)
    rows = body_of(call("GET", "/staff/grafton-sewer/audit", actor="clerk-7"))["rows"]
    assert [r["detail_type"] for r in rows] == ["BillAdjusted"]
    system = body_of(call("GET", "/staff/grafton-sewer/audit", actor="test-function"))["rows"]
    assert system and all(r["actor"] == "test-function" for r in system)


def test_the_audit_trail_pages_with_a_cursor(audited: Stack) -> None:
    deliver(audited)
    everything = body_of(call("GET", "/staff/grafton-sewer/audit", account_id="GR-1"))["rows"]
    assert len(everything) >= 2
    seen: list[str] = []
    cursor: str | None = None
    while True:
        query = {"account_id": "GR-1", "limit": "1", **({"cursor": cursor} if cursor else {})}
        page = body_of(call("GET", "/staff/grafton-sewer/audit", **query))
        seen += [r["event_id"] for r in page["rows"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [r["event_id"] for r in everything]
    bad = call("GET", "/staff/grafton-sewer/audit", account_id="GR-2", cursor=cursor or "eyJ4IjoxfQ")
    assert bad["statusCode"] == 400


def test_the_audit_trail_as_csv_is_spreadsheet_safe(audited: Stack) -> None:
    hostile = {**MEMO, "bill_id": "GR-2-2026-07-01", "reference": "ADJ-2", "reason": "=HYPERLINK(1)"}
    assert call("POST", "/staff/grafton-sewer/accounts/GR-2/adjustments", body=hostile)["statusCode"] == 200
    deliver(audited)
    response = call("GET", "/staff/grafton-sewer/audit", account_id="GR-2", format="csv")
    assert response["statusCode"] == 200
    assert response["headers"]["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response["body"])))
    [adjusted] = [r for r in rows if r["detail_type"] == "BillAdjusted"]
    assert adjusted["reason"] == "'=HYPERLINK(1)" and adjusted["actor"] == "clerk-7"


def test_another_tenants_staff_and_a_customer_get_403(audited: Stack) -> None:
    deliver(audited)
    assert call("GET", "/staff/grafton-sewer/audit", OTHER_TENANT, account_id="GR-1")["statusCode"] == 403
    customer = {"sub": "c-1", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    assert call("GET", "/staff/grafton-sewer/audit", customer, account_id="GR-1")["statusCode"] == 403


def test_the_route_needs_one_of_account_id_or_actor(audited: Stack) -> None:
    assert call("GET", "/staff/grafton-sewer/audit")["statusCode"] == 400
    assert call("GET", "/staff/grafton-sewer/audit", account_id="GR-1", actor="x")["statusCode"] == 400


def test_the_audit_rule_takes_every_source_that_publishes() -> None:
    from common import eventschemas
    from sewerbill.samtemplate import TEMPLATE_PATH, load_template

    resources = load_template(TEMPLATE_PATH)["Resources"]
    sources = {m.SOURCE for m in eventschemas.events()} | {"sewerbill.common"}
    assert set(resources["BillingOnAuditEventRule"]["Properties"]["EventPattern"]["source"]) >= sources
    archive = resources["EventBusArchive"]["Properties"]
    assert set(archive["EventPattern"]["source"]) >= sources
    assert archive["RetentionDays"] >= 7 * 365 + 2  # X-RETENTION: seven years, leap days included
