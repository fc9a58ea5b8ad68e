"""The events' committed JSON Schemas, and the rule that changes within a version are
additive (issue 29: ``ConsumptionDetermined.volume_gal`` once went from integer to string
under the same detail type)."""

import json
from decimal import Decimal
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from common import eventschemas
from common.events import Event

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "docs" / "events"


def test_every_event_type_has_its_committed_schema_as_the_code_generates_it():
    models = list(eventschemas.events())
    assert len(models) >= 40  # every service's events are found, not an empty walk
    stale = []
    for model in models:
        path = eventschemas.path_of(COMMITTED, model)
        generated = eventschemas.render(eventschemas.schema_of(model))
        if not path.exists() or path.read_text(encoding="utf-8") != generated:
            stale.append(str(path.relative_to(ROOT)))
    assert not stale, f"regenerate with: .venv/bin/python -m common.eventschemas docs/events -> {stale}"


def test_no_committed_schema_file_is_left_without_its_event():
    current = {eventschemas.path_of(COMMITTED, m) for m in eventschemas.events()}
    orphans = []
    for path in COMMITTED.rglob("*.json"):
        stem, _, version = path.stem.rpartition(".v")
        if not any(p.parent == path.parent and p.stem.rpartition(".v")[0] == stem for p in current):
            orphans.append(str(path.relative_to(ROOT)))
        assert version.isdigit(), path
    assert not orphans


class _V1(Event):
    SOURCE = "sewerbill.test"
    meter_id: str
    volume_gal: int
    quality: Literal["actual", "estimated"]
    note: str | None = None


def _schema(model: type[BaseModel]) -> dict:
    return model.model_json_schema(mode="serialization")


def test_a_type_change_under_the_same_version_is_breaking():
    class ToString(_V1):
        volume_gal: str  # type: ignore[assignment]

    problems = eventschemas.breaking_changes(_schema(_V1), _schema(ToString))
    assert problems == ["detail.volume_gal: type string where consumers know integer"]


def test_a_removed_field_and_a_field_no_longer_always_present_are_breaking():
    class Removed(Event):
        SOURCE = "sewerbill.test"
        meter_id: str | None = None
        quality: Literal["actual", "estimated"]
        note: str | None = None

    problems = eventschemas.breaking_changes(_schema(_V1), _schema(Removed))
    assert "detail.volume_gal: removed" in problems
    assert "detail.meter_id: no longer always present" in problems
    assert any(p.startswith("detail.meter_id: a value of the new shape") for p in problems)  # may be null


def test_a_new_enumeration_value_is_breaking_and_a_narrower_one_is_not():
    class Wider(_V1):
        quality: Literal["actual", "estimated", "guessed"]  # type: ignore[assignment]

    class Narrower(_V1):
        quality: Literal["actual"]  # type: ignore[assignment]

    assert eventschemas.breaking_changes(_schema(_V1), _schema(Wider)) == [
        'detail.quality: values "guessed" beyond "actual", "estimated"'
    ]
    assert eventschemas.breaking_changes(_schema(_V1), _schema(Narrower)) == []


def test_new_fields_and_an_optional_field_made_always_present_are_additive():
    class Added(_V1):
        note: str  # type: ignore[assignment]
        read_on: str | None = None
        amount: Decimal = Decimal(0)

    assert eventschemas.breaking_changes(_schema(_V1), _schema(Added)) == []


def test_nested_models_are_compared_through_their_definitions():
    class Use(BaseModel):
        volume_gal: int

    class Use2(BaseModel):
        volume_gal: str

    class Old(Event):
        SOURCE = "sewerbill.test"
        uses: tuple[Use, ...]

    class New(Event):
        SOURCE = "sewerbill.test"
        uses: tuple[Use2, ...]

    assert eventschemas.breaking_changes(_schema(Old), _schema(New)) == [
        "detail.uses[].volume_gal: type string where consumers know integer"
    ]


def test_the_writer_refuses_a_breaking_change_and_writes_nothing(tmp_path, monkeypatch):
    assert eventschemas.write(tmp_path) == []
    written = sorted(tmp_path.rglob("*.json"))
    assert written
    target = next(p for p in written if p.name.startswith("ConsumptionDetermined.v"))
    old = json.loads(target.read_text(encoding="utf-8"))
    old["properties"]["tenant"] = {"type": "integer", "title": "Tenant"}  # as if it had been an integer
    target.write_text(json.dumps(old), encoding="utf-8")
    before = {p: p.read_text(encoding="utf-8") for p in written}
    refused = eventschemas.write(tmp_path)
    assert refused == [
        f"ConsumptionDetermined v{old['$comment'].split('schema_version ')[1].split(';')[0]}: "
        "detail.tenant: type string where consumers know integer"
    ]
    assert {p: p.read_text(encoding="utf-8") for p in written} == before
    assert eventschemas.main(["eventschemas", str(tmp_path)]) == 1


@pytest.mark.parametrize("model", list(eventschemas.events()), ids=lambda m: m.detail_type())
def test_every_event_type_names_its_business_key_fields(model):
    assert model.BUSINESS_KEY, f"{model.detail_type()} has no business key"
    assert set(model.BUSINESS_KEY) <= set(model.model_fields)
