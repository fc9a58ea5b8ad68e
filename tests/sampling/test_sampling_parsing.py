"""Validation of untrusted classify input: every error names its field."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from sampling.domain.errors import InvalidInput, SamplingError, UnknownTenant
from sampling.domain.parsing import parse_classify_request, parse_concentration, parse_results


def test_parses_ints_decimal_strings_and_decimals():
    [result] = parse_results(
        [{"sampled_on": "2025-01-15", "bod": 220, "tss": "150.5", "phosphorus": Decimal("4.2")}]
    )
    assert result.sampled_on == date(2025, 1, 15)
    assert result.bod == Decimal("220")
    assert result.tss == Decimal("150.5")
    assert result.phosphorus == Decimal("4.2")
    assert result.fog is None


def test_a_python_float_is_refused_like_everywhere_else():
    # One policy for the product (common.values): JSON is parsed with parse_float=Decimal,
    # so a float can only come from code that already lost exactness.
    with pytest.raises(SamplingError) as exc:
        parse_concentration(0.1, "results[0].bod")
    assert exc.value.field == "results[0].bod"
    assert "float" in exc.value.message


def test_json_floats_parsed_as_decimal():
    raw = json.loads('[{"sampled_on": "2025-01-15", "bod": 180.10}]', parse_float=Decimal)
    assert parse_results(raw)[0].bod == Decimal("180.10")


def test_null_concentration_means_not_analysed():
    assert parse_results([{"sampled_on": "2025-01-15", "bod": 10, "fog": None}])[0].fog is None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ([{"sampled_on": "2025-01-15", "bod": -1}], "results[0].bod"),
        ([{"sampled_on": "2025-01-15", "bod": 1, "colour": "brown"}], "results[0].colour"),
        (
            [{"sampled_on": "2025-01-15", "bod": 1}, {"sampled_on": "15/01/2025", "bod": 1}],
            "results[1].sampled_on",
        ),
        ([{"sampled_on": "2025-01-15", "bod": 1}, {"bod": 1}], "results[1].sampled_on"),
        ([{"sampled_on": "2025-02-30", "bod": 1}], "results[0].sampled_on"),
        ([{"sampled_on": 20250115, "bod": 1}], "results[0].sampled_on"),
        ([{"sampled_on": "2025-01-15", "tss": "lots"}], "results[0].tss"),
        ([{"sampled_on": "2025-01-15", "tss": True}], "results[0].tss"),
        ([{"sampled_on": "2025-01-15", "tss": "NaN"}], "results[0].tss"),
        ([{"sampled_on": "2025-01-15", "tss": "Infinity"}], "results[0].tss"),
        ([{"sampled_on": "2025-01-15", "tss": [1]}], "results[0].tss"),
        (
            [
                {"sampled_on": "2025-01-15", "bod": 1},
                {"sampled_on": "2025-01-15", "phosphorus": Decimal("-0.1")},
            ],
            "results[1].phosphorus",
        ),
        ([{"sampled_on": "2025-01-15"}], "results[0]"),
        (["2025-01-15"], "results[0]"),
        ({"sampled_on": "2025-01-15"}, "results"),
    ],
)
def test_bad_results_name_the_field(raw, field):
    with pytest.raises(InvalidInput) as err:
        parse_results(raw)
    assert err.value.field == field
    assert str(err.value).startswith(f"{field}: ")


def test_classify_request():
    request = parse_classify_request({"tenant": "grafton-sewer", "as_of": "2026-01-01"})
    assert request.tenant == "grafton-sewer"
    assert request.as_of == date(2026, 1, 1)
    assert request.results == ()


@pytest.mark.parametrize(
    ("raw", "field", "error"),
    [
        ({"as_of": "2026-01-01"}, "tenant", InvalidInput),
        ({"tenant": "grafton-sewer"}, "as_of", InvalidInput),
        ({"tenant": "grafton-sewer", "as_of": "soon"}, "as_of", InvalidInput),
        ({"tenant": "grafton-sewer", "as_of": "2026-01-01T00:00:00"}, "as_of", InvalidInput),
        ({"tenant": "pleasant-prairie-stormwater", "as_of": "2026-01-01"}, "tenant", UnknownTenant),
        ({"tenant": 7, "as_of": "2026-01-01"}, "tenant", UnknownTenant),
        ({"tenant": "grafton-sewer", "as_of": "2026-01-01", "account": {}}, "account", InvalidInput),
        (
            {"tenant": "grafton-sewer", "as_of": "2026-01-01", "results": [{"bod": 1}]},
            "results[0].sampled_on",
            InvalidInput,
        ),
        (["tenant"], "input", InvalidInput),
    ],
)
def test_bad_classify_requests_name_the_field(raw, field, error):
    with pytest.raises(error) as err:
        parse_classify_request(raw)
    assert err.value.field == field
    assert isinstance(err.value, SamplingError)
