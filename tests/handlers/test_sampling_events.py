"""STYLE 5: sampling's events each have a JSON fixture that the consumer's parser accepts."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from handler_support import FIXTURES, fixture_text

import sampling.events
from common.events import Event
from common.messages import parse_event

EVENT_CLASSES = {
    cls.__name__: cls
    for cls in vars(sampling.events).values()
    if isinstance(cls, type)
    and issubclass(cls, Event)
    and cls.__module__ == sampling.events.__name__
    and not cls.__name__.startswith("_")  # a shared base (the satellite deadline fields), never published
}


def test_every_sampling_event_has_a_fixture() -> None:
    fixtures = {p.stem for p in FIXTURES.glob("*.json")}
    assert set(EVENT_CLASSES) <= fixtures


@pytest.mark.parametrize("name", sorted(EVENT_CLASSES))
def test_the_fixture_parses_and_round_trips_field_for_field(name: str) -> None:
    cls = EVENT_CLASSES[name]
    event = parse_event(fixture_text(f"{name}.json"), cls)
    detail = json.loads(fixture_text(f"{name}.json"))["detail"]
    assert json.loads(event.detail_json()) == detail
    assert cls.BUSINESS_KEY and set(cls.BUSINESS_KEY) <= set(cls.model_fields)
    assert cls.model_config.get("frozen") is True


def test_concentrations_travel_as_decimal_strings_never_floats() -> None:
    event = parse_event(fixture_text("StrengthCategoryChanged.json"), sampling.events.StrengthCategoryChanged)
    assert event.basis is not None and event.basis.bod == Decimal("220")
    assert json.loads(event.detail_json())["basis"]["bod"] == "220"
    charge = parse_event(fixture_text("SamplingCostCharged.json"), sampling.events.SamplingCostCharged)
    assert json.loads(charge.detail_json())["amount"] == "85.00"


def test_violation_days_are_per_billing_period() -> None:
    event = parse_event(fixture_text("StrengthClassified.json"), sampling.events.StrengthClassified)
    (period,) = event.violation_days
    assert period.days == len(period.dates) == 2
    assert all(period.period_start <= d < period.period_end for d in period.dates)
