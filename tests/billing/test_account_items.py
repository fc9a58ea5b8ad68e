"""An account kept in billing's table reads back as the very record written: the item's
JSON document (``items.account_item``) through ``account_of`` (``AccountRecord.from_values``)
gives the same record for any values a record can hold (a cycle reads each account twice)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.adapters.items import account_item, account_of
from billing.domain.accounts import AccountRecord

texts = st.text(max_size=10)
optional_texts = st.none() | texts
days = st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31))
decimals = st.none() | st.decimals(min_value=0, max_value=10**9, places=3, allow_nan=False)

records = st.builds(
    AccountRecord,
    tenant=texts,
    account_id=texts,
    name=texts,
    service_address=texts,
    mailing_address=texts,
    zip=texts,
    opened_on=days,
    account_class=st.sampled_from(["residential", "nonresidential"]),
    closed_on=st.none() | days,
    email=optional_texts,
    email_opt_in=st.booleans(),
    zone=optional_texts,
    meter_size=optional_texts,
    dwelling_units=st.integers(min_value=0, max_value=10_000),
    rec_units=decimals,
    estimated_gallons=decimals,
    parcel_id=optional_texts,
    owner_name=optional_texts,
    owner_address=optional_texts,
    bill_recipient_name=optional_texts,
    bill_recipient_address=optional_texts,
    billing_frequency=optional_texts,
    satellite=st.booleans(),
    sic=optional_texts,
)


@settings(max_examples=200, deadline=None)
@given(records)
def test_an_account_item_reads_back_as_the_record_written(record: AccountRecord) -> None:
    read = account_of(account_item(record, "2026-09-30T12:00:00+00:00"))
    assert read == record
    # the types too (a date stays a date, a Decimal a Decimal, the units an int)
    assert {k: type(v) for k, v in read.to_values().items()} == {
        k: type(v) for k, v in record.to_values().items()
    }


def test_values_that_are_not_fields_are_ignored_and_text_is_converted() -> None:
    values = {
        "tenant": "grafton-sewer",
        "account_id": "GR-1",
        "name": "Ann",
        "service_address": "1 Main St",
        "mailing_address": "1 Main St",
        "zip": "53024",
        "opened_on": "2026-01-01",
        "account_class": "residential",
        "rec_units": 1.5,
        "dwelling_units": "3",
        "extra": {"kept": "no"},
        "not_a_field": 1,
    }
    record = AccountRecord.from_values(values)
    assert record.opened_on == date(2026, 1, 1) and record.closed_on is None
    assert record.rec_units == Decimal("1.5") and record.dwelling_units == 3
    assert record.extra == {}
