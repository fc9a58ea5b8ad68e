"""The preview input rules of CONTRACTS.md: each violation names its field."""

from __future__ import annotations

import copy
import json
from datetime import date
from decimal import Decimal as D
from typing import Any

import pytest

from billing.domain.rating import Account, InvalidScenario, RatingError, RatingInput
from billing.domain.rating.periods import add_months
from billing.domain.rating.scenario import parse_scenario
from sewerbill.cli.compose import eru_of

GRAFTON: dict[str, Any] = {
    "tenant": "grafton-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "residential", "meter_size": "5/8", "dwelling_units": 1},
    "water_gallons": 23000,
}
PP_SEWER: dict[str, Any] = {
    "tenant": "pleasant-prairie-sewer",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "account": {"class": "residential", "zone": "PP", "meter_size": "5/8"},
    "water_gallons": 5000,
    "winter_average_gallons": 4000,
}
SULLIVAN: dict[str, Any] = {
    "tenant": "sullivan-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "residential", "meter_size": "5/8", "rec_units": "1.0"},
    "water_gallons": 30000,
    "total_recs": "1200",
}
STORM: dict[str, Any] = {
    "tenant": "pleasant-prairie-stormwater",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "parcel": {"use": "nonresidential", "area_sqft": 43560, "impervious_sqft": 30000, "credit_percent": "10"},
}


def doc(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``base`` with dotted-path changes; a value of ``...`` deletes the field."""
    out = copy.deepcopy(base)
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = out
        for p in parents:
            target = target[p]
        if value is ...:
            target.pop(last, None)
        else:
            target[last] = value
    return out


def parsed(document: dict[str, Any]) -> Any:
    """Round-trip through JSON as the CLI reads it (numbers as Decimal)."""
    return json.loads(json.dumps(document), parse_float=D)


def field_of(book, document: dict[str, Any]) -> str:
    with pytest.raises(RatingError) as err:
        parse_scenario(parsed(document), book, eru_of)
    assert str(err.value).startswith(err.value.field + ": ")
    return err.value.field


def test_valid_documents_parse(book):
    # Each document's values arrive in the rating input as given, as Decimals and dates.
    july = date(2026, 7, 1)
    assert parse_scenario(parsed(GRAFTON), book, eru_of) == RatingInput(
        "grafton-sewer",
        july,
        date(2026, 10, 1),
        Account("residential", None, "5/8", 1),
        water_gallons=D(23000),
    )
    assert parse_scenario(parsed(PP_SEWER), book, eru_of) == RatingInput(
        "pleasant-prairie-sewer",
        july,
        date(2026, 8, 1),
        Account("residential", "PP", "5/8", 1),
        water_gallons=D(5000),
        winter_average_gallons=D(4000),
    )
    assert parse_scenario(parsed(SULLIVAN), book, eru_of) == RatingInput(
        "sullivan-sewer",
        july,
        date(2026, 10, 1),
        Account("residential", None, "5/8", 1, D("1.0")),
        water_gallons=D(30000),
        total_recs=D(1200),
    )
    storm = parse_scenario(parsed(STORM), book, eru_of)
    eru, _ = eru_of(parsed(STORM)["parcel"], book.in_force("pleasant-prairie-stormwater", july))
    assert (storm.tenant, storm.period_start, storm.period_end) == (STORM["tenant"], july, date(2026, 8, 1))
    assert storm.parcel is not None and storm.account is None
    assert (storm.parcel.use, storm.parcel.eru, storm.parcel.credit_percent) == ("nonresidential", eru, D(10))


def test_defaults(book):
    inp = parse_scenario(parsed(doc(SULLIVAN, account__rec_units=...)), book, eru_of)
    assert inp.account is not None
    assert inp.account.dwelling_units == 1
    assert inp.account.rec_units is None  # the engine applies dwelling units x 1.0
    assert inp.bod900_violation_days == 0
    storm = parse_scenario(parsed(doc(STORM, parcel__credit_percent=...)), book, eru_of)
    assert storm.parcel is not None and storm.parcel.credit_percent == 0


def test_stormwater_erus_come_from_the_stormwater_domain(book):
    inp = parse_scenario(parsed(STORM), book, eru_of)
    assert inp.parcel is not None
    assert inp.parcel.eru > 0
    assert inp.parcel.eru_details["exempt"] is False
    assert "composite_cn" in inp.parcel.eru_details


@pytest.mark.parametrize(
    ("base", "changes", "field"),
    [
        # unknown tenant, unknown fields anywhere
        (GRAFTON, {"tenant": "kenosha-sewer"}, "tenant"),
        (GRAFTON, {"tenant": ...}, "tenant"),
        (GRAFTON, {"colour": "red"}, "colour"),
        (GRAFTON, {"account__colour": "red"}, "account.colour"),
        (GRAFTON, {"period__middle": "2026-08-01"}, "period.middle"),
        (STORM, {"parcel__height": 3}, "parcel.height"),
        (GRAFTON, {"strength": {"bod": 300, "cod": 5}}, "strength.cod"),
        # period
        (GRAFTON, {"period": ...}, "period"),
        (GRAFTON, {"period__end": "2026-06-01"}, "period.end"),
        (GRAFTON, {"period__end": "2026-07-01"}, "period.end"),
        (GRAFTON, {"period__start": "2026-13-01"}, "period.start"),
        (GRAFTON, {"period__start": "July 1"}, "period.start"),
        (GRAFTON, {"period": {"start": "2024-07-01", "end": "2024-10-01"}}, "period.start"),
        (GRAFTON, {"period__end": "2026-08-01"}, "period"),
        (PP_SEWER, {"period__end": "2026-10-01"}, "period"),
        (PP_SEWER, {"period__end": "2026-07-31"}, "period"),
        # fields of another tenant
        (GRAFTON, {"account__zone": "PP"}, "account.zone"),
        (GRAFTON, {"winter_average_gallons": 4000}, "winter_average_gallons"),
        (GRAFTON, {"samples_collected": 1}, "samples_collected"),
        (PP_SEWER, {"estimated_gallons": 0}, "estimated_gallons"),
        (GRAFTON, {"account__rec_units": "1.0"}, "account.rec_units"),
        (GRAFTON, {"total_recs": "1200"}, "total_recs"),
        (PP_SEWER, {"bod900_violation_days": 0}, "bod900_violation_days"),
        (GRAFTON, {"parcel": {"use": "residential"}}, "parcel"),
        (STORM, {"account": {"class": "residential"}}, "account"),
        (STORM, {"water_gallons": 100}, "water_gallons"),
        (STORM, {"strength": {"bod": 100}}, "strength"),
        # required fields and class values
        (GRAFTON, {"account": ...}, "account"),
        (GRAFTON, {"account__class": ...}, "account.class"),
        (GRAFTON, {"account__class": "commercial"}, "account.class"),
        (SULLIVAN, {"total_recs": ...}, "total_recs"),
        (SULLIVAN, {"total_recs": 0}, "total_recs"),
        (STORM, {"parcel": ...}, "parcel"),
        (STORM, {"parcel__use": ...}, "parcel.use"),
        (STORM, {"parcel__area_sqft": ...}, "parcel.area_sqft"),
        (STORM, {"parcel__impervious_sqft": ...}, "parcel.impervious_sqft"),
        (PP_SEWER, {"account__zone": ...}, "account.zone"),
        (PP_SEWER, {"account__zone": "XX"}, "account.zone"),
        # Pleasant Prairie residential rules
        (PP_SEWER, {"account__dwelling_units": 5}, "account.dwelling_units"),
        (PP_SEWER, {"strength": {"bod": 100}}, "strength"),
        (PP_SEWER, {"samples_collected": 2}, "samples_collected"),
        (doc(PP_SEWER, account__class="nonresidential"), {}, "winter_average_gallons"),
        # metering
        (GRAFTON, {"account__meter_size": "7/8"}, "account.meter_size"),
        (PP_SEWER, {"account__meter_size": "7/8"}, "account.meter_size"),
        (SULLIVAN, {"account__meter_size": 5}, "account.meter_size"),
        (PP_SEWER, {"account__meter_size": ...}, "account.meter_size"),
        (SULLIVAN, {"account__meter_size": ...}, "account.meter_size"),
        (
            GRAFTON,
            {"account__meter_size": ..., "account__dwelling_units": 2, "water_gallons": ...},
            "account.meter_size",
        ),
        (GRAFTON, {"account__meter_size": ...}, "water_gallons"),
        (GRAFTON, {"water_gallons": ...}, "water_gallons"),
        (GRAFTON, {"estimated_gallons": 1000}, "estimated_gallons"),
        # parcel rules
        (STORM, {"parcel__use": "industrial"}, "parcel.use"),
        (STORM, {"parcel__credit_percent": "30.01"}, "parcel.credit_percent"),
        (STORM, {"parcel__use": "residential", "parcel__impervious_sqft": 2000}, "parcel.credit_percent"),
        (STORM, {"parcel__use": "agricultural"}, "parcel.credit_percent"),
        (STORM, {"parcel__area_sqft": 1000}, "parcel.area_sqft"),
        # negatives, floats and non-numbers
        (GRAFTON, {"water_gallons": -1}, "water_gallons"),
        (PP_SEWER, {"winter_average_gallons": -1}, "winter_average_gallons"),
        (GRAFTON, {"strength": {"bod": -5}}, "strength.bod"),
        (SULLIVAN, {"bod900_violation_days": -1}, "bod900_violation_days"),
        (SULLIVAN, {"bod900_violation_days": 1.5}, "bod900_violation_days"),
        (STORM, {"parcel__woods_sqft": -1}, "parcel.woods_sqft"),
        (STORM, {"parcel__credit_percent": "-1"}, "parcel.credit_percent"),
        (GRAFTON, {"water_gallons": "lots"}, "water_gallons"),
        (GRAFTON, {"water_gallons": True}, "water_gallons"),
        (GRAFTON, {"water_gallons": [1]}, "water_gallons"),
        (SULLIVAN, {"account__rec_units": "one"}, "account.rec_units"),
        (GRAFTON, {"account__dwelling_units": "two"}, "account.dwelling_units"),
        (GRAFTON, {"account": "residential"}, "account"),
    ],
)
def test_each_bad_input_names_its_field(book, base, changes, field):
    assert field_of(book, doc(base, **changes)) == field


def test_a_python_float_is_refused(book):
    document = parsed(GRAFTON)
    document["water_gallons"] = 23000.0
    with pytest.raises(InvalidScenario) as err:
        parse_scenario(document, book, eru_of)
    assert err.value.field == "water_gallons"
    assert "float" in err.value.message


def test_message_for_an_unknown_meter_size_matches_the_contract(book):
    with pytest.raises(InvalidScenario) as err:
        parse_scenario(parsed(doc(GRAFTON, account__meter_size="7/8")), book, eru_of)
    assert str(err.value) == "account.meter_size: '7/8' is not a meter size of tenant grafton-sewer"


def test_unmetered_grafton_accounts(book):
    single = parse_scenario(
        parsed(doc(GRAFTON, account__meter_size=..., water_gallons=..., estimated_gallons=25000)),
        book,
        eru_of,
    )
    assert single.account is not None and single.account.meter_size is None
    assert single.estimated_gallons == 25000
    commercial = doc(GRAFTON, account__meter_size=..., account__class="nonresidential", water_gallons=...)
    assert parse_scenario(parsed(commercial), book).estimated_gallons == 0


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-01-31", "2026-02-28"),
        ("2028-01-31", "2028-02-29"),
        ("2026-03-31", "2026-04-30"),
        ("2026-07-15", "2026-08-15"),
    ],
)
def test_a_month_may_start_on_any_day(book, engine, start, end):
    # A month from any day to the same day next month (clamped) is one whole billing
    # period: accepted as given and billed as the calendar month is, with nothing prorated.
    inp = parse_scenario(parsed(doc(PP_SEWER, period={"start": start, "end": end})), book, eru_of)
    assert (inp.period_start, inp.period_end) == (date.fromisoformat(start), date.fromisoformat(end))
    assert lines_of(engine.rate(inp)) == lines_of(engine.rate(parse_scenario(parsed(PP_SEWER), book, eru_of)))


def test_a_quarter_may_start_on_any_day(book, engine):
    inp = parse_scenario(
        parsed(doc(GRAFTON, period={"start": "2026-11-30", "end": "2027-02-28"})), book, eru_of
    )
    assert (inp.period_start, inp.period_end) == (date(2026, 11, 30), date(2027, 2, 28))
    assert lines_of(engine.rate(inp)) == lines_of(engine.rate(parse_scenario(parsed(GRAFTON), book, eru_of)))


def lines_of(bill: Any) -> list[tuple[str, D, str, D, Any]]:
    """A bill's lines as a clerk compares them; a prorated share would show its days."""
    return [(ln.rule_id, ln.quantity, ln.unit, ln.amount, ln.details.get("factor")) for ln in bill.lines]


def test_month_addition_clamps_to_the_end_of_a_shorter_month():
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2026, 11, 30), 3) == date(2027, 2, 28)
    assert add_months(date(2026, 12, 15), 1) == date(2027, 1, 15)


def test_a_rate_not_published_for_the_zone_is_reported_by_rating(book, engine):
    # LM publishes only 5/8": the meter size is known to the tenant, the rate is not.
    document = doc(PP_SEWER, account__zone="LM", account__meter_size="1")
    inp = parse_scenario(parsed(document), book, eru_of)
    with pytest.raises(RatingError) as err:
        engine.rate(inp)
    assert err.value.field == "account.meter_size"
