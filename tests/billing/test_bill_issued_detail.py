"""The outbox publisher writes a bill's ``BillIssued`` straight from the bill item's JSON
(``items.bill_issued_detail``): the text must be, byte for byte, what the model gives
(``bill_issued_event(bill_of(item), notice, issued_at).detail_json()``) for any bill the
cycle can write, with anything unusual (another type, a bound exceeded, a time not in UTC)
going through the model itself."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.adapters import items
from billing.adapters.items import bill_issued_detail, bill_issued_event, bill_item, bill_of
from billing.domain.bills import Bill, BilledRead, Line
from billing.events import BillIssued

texts = st.text(max_size=12)  # any character: quotes, backslashes, controls, non-ASCII
amounts = st.decimals(min_value=-10_000, max_value=10_000, places=2, allow_nan=False)
days = st.dates(min_value=date(2000, 1, 1), max_value=date(2099, 12, 31))
funds = st.dictionaries(st.sampled_from(["om", "replacement", "debt", "stormwater"]), amounts, max_size=3)


@st.composite
def lines(draw: st.DrawFn) -> Line:
    amount = draw(amounts)
    details: dict[str, Any] = {"derivation": draw(texts)}
    split = draw(st.one_of(st.none(), funds))
    if split is not None:  # a split that sums to the amount is kept, any other is om's
        if split and draw(st.booleans()):
            *rest, last = split
            split[last] = amount - sum((split[k] for k in rest), Decimal("0"))
        details["funds"] = {k: str(v) for k, v in split.items()}
    return Line(draw(texts), draw(texts), draw(texts), draw(texts), draw(texts), amount, details)


reads = st.builds(
    BilledRead,
    consumption_gal=st.decimals(min_value=0, max_value=10**9, places=0, allow_nan=False),
    quality=st.sampled_from(["actual", "estimated", "prorated"]),
    estimated=st.booleans(),
    meter_id=st.one_of(st.none(), texts),
    previous_read_on=st.one_of(st.none(), days),
    previous_reading=st.one_of(st.none(), texts),
    present_read_on=st.one_of(st.none(), days),
    present_reading=st.one_of(st.none(), texts),
)
parties = st.fixed_dictionaries(
    {"name": texts, "address": texts},
    optional={"email": st.one_of(st.none(), texts), "email_opt_in": st.booleans()},
)
times = st.one_of(
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1)).map(
        lambda t: t.replace(microsecond=0, tzinfo=UTC)
    ),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1)).map(
        lambda t: t.replace(tzinfo=timezone(timedelta(hours=-6)))
    ),
)


@st.composite
def bills(draw: st.DrawFn) -> tuple[Bill, dict[str, Any], str]:
    bill_lines = tuple(draw(st.lists(lines(), max_size=4)))
    bill = Bill(
        tenant=draw(st.sampled_from(["grafton-sewer", "sullivan-sewer", "pleasant-prairie-stormwater"])),
        account_id=draw(texts),
        bill_id=draw(texts),
        bill_number=draw(texts),
        period_start=draw(days),
        period_end=draw(days),
        bill_date=draw(days),
        due_date=draw(days),
        lines=bill_lines,
        total=sum((ln.amount for ln in bill_lines), Decimal("0.00")),
        previous_balance=draw(amounts),
        payments_since=draw(amounts),
        estimated=draw(st.booleans()),
        parcel_id=draw(st.one_of(st.none(), texts)),
        reads=tuple(draw(st.lists(reads, max_size=3))),
    )
    notice: dict[str, Any] = {"recipient": draw(parties), "owner": draw(parties)}
    address = draw(st.one_of(st.none(), texts))
    if address is not None:
        notice["service_address"] = address
    return bill, notice, draw(times).isoformat()


def through_the_model(item: dict[str, Any]) -> str:
    return bill_issued_event(
        bill_of(item), json.loads(item["notice"]), datetime.fromisoformat(item["issued_at"])
    ).detail_json()


@settings(max_examples=400, deadline=None)
@given(bills())
def test_the_direct_detail_is_the_models_text_for_any_bill(case: tuple[Bill, dict[str, Any], str]) -> None:
    bill, notice, issued_at = case
    item = bill_item(bill, issued_at, notice)

    assert bill_issued_detail(item["bill"], item["notice"], item["issued_at"]) == through_the_model(item)


def a_cycles_bill() -> dict[str, Any]:
    """A Grafton bill as the cycle writes it: a volume line split between two funds."""
    bill = Bill(
        tenant="grafton-sewer",
        account_id="GR-000042",
        bill_id="GR-000042-2026-07-01",
        bill_number="GR-202607-GR-000042",
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 10, 21),
        lines=(
            Line(
                "GR-VOLUME",
                "Volume charge",
                "9.554",
                "1000 gal",
                "6.12",
                Decimal("58.47"),
                {"funds": {"om": "50.00", "replacement": "8.47"}},
            ),
            Line("GR-FIXED", "Fixed charge", "1", "quarter", "21.00", Decimal("21.00"), {}),
        ),
        total=Decimal("79.47"),
        previous_balance=Decimal("10.00"),
        payments_since=Decimal("10.00"),
        parcel_id="GP-000042",
        reads=(BilledRead(consumption_gal=Decimal("9554")),),
    )
    notice = {
        "recipient": {"name": "Ann Émile", "address": "42 Main St", "email": "a@x.org", "email_opt_in": True},
        "owner": {"name": "Ann Émile", "address": "42 Main St"},
        "service_address": "42 Main St",
    }
    return bill_item(bill, "2026-09-30T12:00:00+00:00", notice)


def test_a_cycles_bill_is_written_directly_not_through_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    item = a_cycles_bill()
    expected = through_the_model(item)
    monkeypatch.setattr(items, "bill_issued_event", lambda *a: pytest.fail("went through the model"))

    detail = bill_issued_detail(item["bill"], item["notice"], item["issued_at"])

    assert detail == expected
    parsed = BillIssued.model_validate_json(detail)
    # 10.00 + 79.47 - 10.00 = 79.47 due; the volume line's funds as split, the fixed line all om
    assert parsed.amount_due == Decimal("79.47")
    assert [dict(ln.funds) for ln in parsed.lines] == [
        {"om": Decimal("50.00"), "replacement": Decimal("8.47")},
        {"om": Decimal("21.00")},
    ]
    assert parsed.occurred_at == datetime(2026, 9, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        pytest.param(
            lambda doc, notice: notice.update(service_address="x" * 501), True, id="address-over-500"
        ),
        pytest.param(
            lambda doc, notice: doc.update(reads=[{"consumption_gal": "1"}] * 17), True, id="17-reads"
        ),
        pytest.param(
            lambda doc, notice: doc["lines"][0].update(quantity=9.554), True, id="quantity-a-number"
        ),
        pytest.param(
            lambda doc, notice: notice["recipient"].update(email_opt_in="yes"), False, id="opt-in-as-text"
        ),
        pytest.param(lambda doc, notice: notice["owner"].update(phone="555"), False, id="a-field-unknown"),
    ],
)
def test_what_the_direct_writing_does_not_vouch_for_is_the_models_answer(change: Any, refused: bool) -> None:
    item = a_cycles_bill()
    doc, notice = json.loads(item["bill"]), json.loads(item["notice"])
    change(doc, notice)
    item = {**item, "bill": json.dumps(doc), "notice": json.dumps(notice)}
    if refused:
        with pytest.raises(ValueError):
            through_the_model(item)
        with pytest.raises(ValueError):
            bill_issued_detail(item["bill"], item["notice"], item["issued_at"])
    else:
        assert bill_issued_detail(item["bill"], item["notice"], item["issued_at"]) == through_the_model(item)


def test_the_outbox_publisher_starts_without_the_rating_engine_or_the_tariff_models() -> None:
    """Its cold start imports what reads a bill item, not what rates one (every tenant's
    engine and the tariff models were a third of its first invocation's imports)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    probe = (
        "import sys; sys.path[:0] = ['services', 'infra']\n"
        "import billing.handlers.publish_outbox, billing.adapters.bill_outbox\n"
        "print(sorted(m for m in sys.modules if m.startswith(('billing.domain.rating', 'common.tariffs'))))\n"
    )
    env = {"POWERTOOLS_SERVICE_NAME": "billing", "AWS_DEFAULT_REGION": "us-east-1"}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_an_event_id_is_the_uuid5_of_its_business_key(parts: list[str]) -> None:
    import uuid

    expected = str(uuid.uuid5(uuid.NAMESPACE_URL, "sewerbill:billing:" + ":".join(parts)))
    assert items.event_id_for(*parts) == expected
