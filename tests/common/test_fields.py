"""The shared field rules: each refusal names the field and the cause (issue 27)."""

from datetime import date

import pytest

from common import fields
from common.fields import BadField, DateWindow
from common.imports import ImportCounts


@pytest.mark.parametrize(
    "good", ["PP-0001", "GR-P-0001-AG", "SAT-01", "a", "A" * 64, "LB:2025.01_7", "X(1)+2"]
)
def test_an_id_of_the_safe_set_is_kept(good):
    assert fields.identifier("account_id", good) == good


@pytest.mark.parametrize(
    ("bad", "cause"),
    [
        ("", "is required"),
        ("A" * 65, "65 characters long"),
        ("PP\x000001", "control character (U+0000)"),
        ("../../etc/passwd", "slash"),
        ("PP/0001", "slash"),
        ("PP#1", "'#'"),
        ("PP 1", "space"),
        ("-PP", "must start with a letter"),
        ("PP\u00e91", "'\u00e9'"),
    ],
)
def test_an_unsafe_id_is_refused_with_its_cause(bad, cause):
    with pytest.raises(BadField) as refused:
        fields.identifier("meter_id", bad)
    assert refused.value.field == "meter_id"
    assert cause in refused.value.reason


@pytest.mark.parametrize("good", ["53024", "53024-1234"])
def test_us_zip_codes(good):
    assert fields.zip_code("zip", good) == good


@pytest.mark.parametrize("bad", ["ABCDE", "5302", "530241", "53024-12", " 53024"])
def test_a_zip_that_is_not_us_format_is_refused(bad):
    with pytest.raises(BadField, match="not a US ZIP"):
        fields.zip_code("zip", bad)


def test_text_refuses_control_characters_and_length():
    assert fields.text("name", "Ann O'Neil & Sons") == "Ann O'Neil & Sons"
    with pytest.raises(BadField, match="U\\+0000"):
        fields.text("name", "Ann\x00")
    with pytest.raises(BadField, match="201 characters"):
        fields.text("name", "a" * 201)


WINDOW = DateWindow(first=date(2024, 1, 1), today=date(2026, 12, 2))


def test_a_fact_lies_between_the_first_tariff_and_today():
    assert WINDOW.happened("paid_on", date(2024, 1, 1)) == date(2024, 1, 1)
    assert WINDOW.happened("paid_on", date(2026, 12, 2)) == date(2026, 12, 2)
    with pytest.raises(BadField, match="before the first tariff of grafton-sewer \\(2024-01-01\\)"):
        WINDOW.happened("paid_on", date(1900, 1, 1), tenant="grafton-sewer")
    with pytest.raises(BadField, match="in the future"):
        WINDOW.happened("read_on", date(2026, 12, 3))


def test_a_record_may_start_decades_ago_but_not_years_ahead():
    assert WINDOW.started("opened_on", date(1962, 5, 1)) == date(1962, 5, 1)
    assert WINDOW.started("opened_on", date(2027, 6, 1)) == date(2027, 6, 1)
    with pytest.raises(BadField, match="more than 366 days after today"):
        WINDOW.started("opened_on", date(2100, 1, 1))
    with pytest.raises(BadField, match="before opened_on 2025-01-01"):
        WINDOW.ended("closed_on", date(2024, 1, 1), start=date(2025, 1, 1), start_field="opened_on")


def test_counts_add_up_to_the_lines_or_say_so():
    assert (
        ImportCounts(lines=4, accepted=1, repeated=1, changed=1, rejected=1).check().as_dict()["lines"] == 4
    )
    with pytest.raises(AssertionError, match="do not add up"):
        ImportCounts(lines=4, accepted=1).check()
    assert ImportCounts(lines=3, repeated=3).duplicate_file
    assert not ImportCounts(lines=3, repeated=2, rejected=1).duplicate_file
    assert not ImportCounts().duplicate_file
