"""STYLE 5: every event has a JSON fixture, and consumers still parse it."""

from __future__ import annotations

import json

import pytest
from handler_support import FIXTURES, fixture_text

import billing.events
import metering.events
from billing.domain.cycles import AssessmentScheduled, CycleScheduled
from common.events import Event
from common.messages import parse_event, parse_object_created

EVENT_MODULES = (metering.events, billing.events)
EVENT_CLASSES = {
    cls.__name__: cls
    for module in EVENT_MODULES
    for cls in vars(module).values()
    if isinstance(cls, type)
    and issubclass(cls, Event)
    and cls is not Event
    and cls.__module__ == module.__name__
}


def test_every_event_has_a_fixture() -> None:
    fixtures = {p.stem for p in FIXTURES.glob("*.json") if "." not in p.stem}
    assert set(EVENT_CLASSES) <= fixtures


@pytest.mark.parametrize("name", sorted(EVENT_CLASSES))
def test_the_consumer_parser_accepts_the_fixture(name: str) -> None:
    cls = EVENT_CLASSES[name]
    event = parse_event(fixture_text(f"{name}.json"), cls)
    assert event.detail_type() == name
    assert event.SOURCE == json.loads(fixture_text(f"{name}.json"))["source"]


@pytest.mark.parametrize("name", sorted(EVENT_CLASSES))
def test_the_producer_still_produces_what_the_fixture_shows(name: str) -> None:
    detail = json.loads(fixture_text(f"{name}.json"))["detail"]
    produced = json.loads(EVENT_CLASSES[name].model_validate(detail).detail_json())
    assert set(produced) == set(detail), "a field was added or removed: update the fixture (additively)"


def test_every_event_names_its_business_key_and_is_frozen() -> None:
    for cls in EVENT_CLASSES.values():
        assert cls.BUSINESS_KEY and set(cls.BUSINESS_KEY) <= set(cls.model_fields), cls
        assert cls.model_config.get("frozen") is True


def test_the_s3_upload_fixture_parses() -> None:
    upload = parse_object_created(fixture_text("s3.ObjectCreated.reads.json"))
    assert upload.key.startswith("reads/") and upload.etag


def test_the_schedule_input_fixtures_parse() -> None:
    assert (
        CycleScheduled.model_validate_json(fixture_text("schedule.BillingCycle.json")).tenant
        == "grafton-sewer"
    )
    AssessmentScheduled.model_validate_json(fixture_text("schedule.DailyAssessment.json"))
