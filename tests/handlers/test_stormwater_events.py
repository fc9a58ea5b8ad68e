"""STYLE 5 for stormwater's events: every event has a fixture that its consumers can parse,
and the producer still produces exactly the fields the fixture shows (additive changes only)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from handler_support import FIXTURES, fixture_text

import stormwater.events
from common.events import Event
from common.messages import parse_event

EVENT_CLASSES = {
    cls.__name__: cls
    for cls in vars(stormwater.events).values()
    if isinstance(cls, type) and issubclass(cls, Event) and cls.__module__ == stormwater.events.__name__
}


def test_every_stormwater_event_has_a_fixture() -> None:
    fixtures = {p.stem for p in FIXTURES.glob("*.json")}
    assert set(EVENT_CLASSES) <= fixtures
    assert {
        "ERUDetermined",
        "CreditChanged",
        "FeeCharged",
        "RefundGranted",
        "CreditRevocationProposed",
    } <= set(EVENT_CLASSES)


@pytest.mark.parametrize("name", sorted(EVENT_CLASSES))
def test_the_fixture_parses_and_round_trips_field_for_field(name: str) -> None:
    cls = EVENT_CLASSES[name]
    text = fixture_text(f"{name}.json")
    event = parse_event(text, cls)
    assert event.SOURCE == "sewerbill.stormwater" == json.loads(text)["source"]
    detail = json.loads(text)["detail"]
    assert json.loads(event.detail_json()) == detail


@pytest.mark.parametrize("name", sorted(EVENT_CLASSES))
def test_every_event_names_its_business_key_and_is_frozen(name: str) -> None:
    cls = EVENT_CLASSES[name]
    assert cls.BUSINESS_KEY and set(cls.BUSINESS_KEY) <= set(cls.model_fields)
    assert cls.model_config.get("frozen") is True


def test_erus_and_money_travel_as_decimal_strings_never_floats() -> None:
    determined = parse_event(fixture_text("ERUDetermined.json"), stormwater.events.ERUDetermined)
    detail = json.loads(determined.detail_json())
    assert detail["eru"] == "6.54" and isinstance(detail["breakdown"]["runoff_cuft"], str)
    assert determined.eru == Decimal("6.54")
    refund = parse_event(fixture_text("RefundGranted.json"), stormwater.events.RefundGranted)
    assert json.loads(refund.detail_json())["amount"] == "16.26"
    # (6.54 - 3.83) x 6.00 x 1 month = 2.71 x 6.00 = 16.26
    assert refund.amount == (Decimal("6.54") - Decimal("3.83")) * Decimal("6.00")
