"""Output formatting (decimal strings, never floats) and the purity of the rating domain."""

from __future__ import annotations

import ast
import json
from datetime import date
from decimal import Decimal as D
from pathlib import Path

from billing.domain.rating import Account, ParcelCharge
from billing.domain.rating.output import bill_to_contract, detail_value, plain, rate_text

RATING = Path(__file__).resolve().parents[2] / "services" / "billing" / "domain" / "rating"


def test_preview_output_shape(rate):
    bill = rate(
        "grafton-sewer",
        date(2026, 7, 1),
        date(2026, 10, 1),
        account=Account("residential", None, "5/8"),
        water_gallons=D(24500),
    )
    out = bill_to_contract(bill)
    assert out["tenant"] == "grafton-sewer"
    assert out["period"] == {"start": "2026-07-01", "end": "2026-10-01"}
    assert out["tariff_versions"] == ["grafton-sewer@2025-01-01"]
    assert out["lines"][0] == {
        "rule_id": "GR-SVC",
        "description": 'Quarterly service charge, 5/8" meter',
        "quantity": "1",
        "unit": "quarter",
        "rate": "45.00",
        "amount": "45.00",
        "details": {
            "meter_size": "5/8",
            "tariff_versions": ["grafton-sewer@2025-01-01"],
            "funds": {"replacement": "5.40", "om": "39.60"},
        },
    }
    # 24.5 kgal x 6.50 = 159.25
    assert (out["lines"][1]["quantity"], out["lines"][1]["amount"]) == ("24.5", "159.25")
    assert out["total"] == "204.25"
    assert out["notes"] == []
    json.dumps(out)  # only JSON types: no Decimal, no float


def test_notes_output(rate):
    bill = rate(
        "pleasant-prairie-stormwater",
        date(2026, 7, 1),
        date(2026, 8, 1),
        parcel=ParcelCharge("right_of_way", D(0)),
    )
    out = bill_to_contract(bill)
    assert (out["lines"], out["total"]) == ([], "0.00")
    assert out["notes"] == [{"rule_id": "PP-CWU-EXEMPT", "text": "public right-of-way is exempt"}]


def test_credit_output(rate):
    bill = rate(
        "pleasant-prairie-stormwater",
        date(2026, 7, 1),
        date(2026, 8, 1),
        parcel=ParcelCharge("nonresidential", D("12.34"), D(20)),
    )
    credit = bill_to_contract(bill)["lines"][2]
    assert (credit["quantity"], credit["rate"], credit["amount"]) == ("12.34", "-1.20", "-14.81")


def test_number_formats():
    assert plain(D("23.000")) == "23"
    assert plain(D("24.500")) == "24.5"
    assert plain(D("1E+3")) == "1000"
    assert plain(D("-0.0")) == "0"
    assert rate_text(D("6.5")) == "6.50"
    assert rate_text(D("37.5000")) == "37.50"
    assert rate_text(D("0.48")) == "0.48"
    assert rate_text(D("8.345")) == "8.345"


def test_details_keep_money_at_two_places_and_write_other_figures_plain():
    from types import MappingProxyType

    details = {
        "funds": {"om": D("39.60"), "replacement": D("5.40")},
        "kgal": D("23.000"),
        "days": 92,
        "share": 0.5,
        "estimated": True,
        "meter": None,
        "segments": [{"from": date(2026, 7, 1), "rate": D("6.5")}, ("a", D("1.20"))],
        3: "a key that is not text",
    }
    assert detail_value(details) == {
        "funds": {"om": "39.60", "replacement": "5.40"},
        "kgal": "23",
        "days": 92,
        "share": 0.5,
        "estimated": True,
        "meter": None,
        "segments": [{"from": "2026-07-01", "rate": "6.5"}, ["a", "1.20"]],
        "3": "a key that is not text",
    }
    # any mapping, not only a dict, is written as one
    assert detail_value(MappingProxyType({"kgal": D("1E+1")})) == {"kgal": "10"}


FORBIDDEN_MODULES = {"os", "boto3", "botocore", "aws_lambda_powertools", "time", "random", "pydantic", "sys"}


def test_the_rating_domain_is_pure():
    # STYLE.md 1: no I/O, no AWS, no clock, no float. (pydantic models are only read, via
    # common.tariffs, when a version is compiled; the hot path uses plain Decimals.)
    for path in RATING.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]}
            else:
                names = set()
            assert not names & FORBIDDEN_MODULES, f"{path.name} imports {names & FORBIDDEN_MODULES}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"float", "open", "print", "input"}, (
                    f"{path.name} calls {node.func.id}"
                )
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"today", "now", "utcnow"}, f"{path.name} reads the clock"


def test_periodic_lines_are_shared_read_only(engine):
    import pytest

    from billing.domain.rating import RatingInput

    def bill(gallons: int):
        return engine.rate(
            RatingInput(
                "grafton-sewer",
                date(2026, 7, 1),
                date(2026, 10, 1),
                Account("residential", None, "5/8"),
                water_gallons=D(gallons),
            )
        )

    first, second = bill(1000), bill(2000)
    assert first.lines[0] is second.lines[0]  # GR-SVC: built once for the period
    with pytest.raises(TypeError):
        first.lines[0].details["funds"]["om"] = D(0)  # type: ignore[index]
    assert first.lines[1] is not second.lines[1]  # GR-VOL depends on the account


def test_engine_errors_name_the_field(engine):
    import pytest

    from billing.domain.rating import RatingError, RatingInput

    with pytest.raises(RatingError) as err:
        engine.rate(RatingInput("nowhere", date(2026, 7, 1), date(2026, 8, 1)))
    assert err.value.field == "tenant"
    with pytest.raises(RatingError) as err:
        engine.rate(
            RatingInput(
                "grafton-sewer",
                date(2020, 1, 1),
                date(2020, 4, 1),
                Account("residential", None, "5/8"),
                water_gallons=D(1),
            )
        )
    assert err.value.field == "period.start"
    with pytest.raises(RatingError) as err:
        engine.rate(RatingInput("grafton-sewer", date(2026, 7, 1), date(2026, 7, 1)))
    assert err.value.field == "period.end"
