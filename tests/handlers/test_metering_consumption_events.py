"""Billing keeps metering's consumptions whether they come one per event or a chunk per event."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

from handler_support import Stack, eventbridge_body, fixture_text, lambda_context, sqs_event

from billing.handlers import on_consumption_determined
from metering.events import ConsumptionDetermined, ConsumptionsDetermined

AT = datetime(2026, 10, 6, 12, tzinfo=UTC)


def consumption(account: str, volume: str) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=AT,
        tenant="grafton-sewer",
        account_id=account,
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        volume_gal=Decimal(volume),
        quality="prorated",
        source_file="reads/q3.csv",
    )


def kept(stack: Stack) -> dict[str, Decimal]:
    return {i["account_id"]: Decimal(str(i["volume_gal"])) for i in stack.state("billing")}


def test_every_consumption_of_a_chunk_is_kept_with_its_exact_decimal_volume(billing: Stack) -> None:
    chunk = ConsumptionsDetermined(
        occurred_at=AT,
        file_id="f" * 64,
        chunk=0,
        consumptions=(consumption("GR-1", "23187.5"), consumption("GR-2", "0.001")),
    )
    result = on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(chunk)), lambda_context())

    assert result == {"batchItemFailures": []}
    assert kept(billing) == {"GR-1": Decimal("23187.5"), "GR-2": Decimal("0.001")}


def test_a_chunk_delivered_twice_changes_nothing(billing: Stack) -> None:
    body = fixture_text("ConsumptionsDetermined.json")
    on_consumption_determined.lambda_handler(sqs_event(body), lambda_context())
    before = billing.items("billing")
    on_consumption_determined.lambda_handler(sqs_event(body, body), lambda_context())
    assert billing.items("billing") == before
    # the two consumptions (the clerk's search also indexes their meters, issue 33)
    assert len([i for i in before if not str(i["pk"]).startswith("SEARCH#")]) == 2


def test_a_schema_version_1_event_with_a_whole_volume_is_still_kept(billing: Stack) -> None:
    v1 = json.loads(eventbridge_body(consumption("GR-9", "23000")))
    v1["detail"].update(schema_version=1, volume_gal=23000)
    for added in ("quality", "estimated", "meters", "reads_used", "flags", "winter_average_gal"):
        del v1["detail"][added]
    on_consumption_determined.lambda_handler(sqs_event(json.dumps(v1)), lambda_context())
    assert kept(billing) == {"GR-9": Decimal(23000)}
