"""PP-CWU-CREDIT, PP-CWU-PEF, PP-CWU-APPEAL on billing's handlers (moto, in-process): the
fees stormwater publishes reach the parcel's account. Stormwater knows parcels, not
accounts, so a fee naming no account is charged to the tenant's one account open on its
parcel that day (billing keeps each account's ``parcel_id``); none or several is a
rejection naming the parcel. A fee is a line of the account's next bill citing its rule,
with its derivation, charged once by its fee id however often the event comes.

Tariff (TARIFFS.md, pleasant-prairie-stormwater): base 2.00, 6.00 per ERU-month, credit
application review fee 100.00, project evaluation fee 150.00, appeal fee 50.00.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from handler_support import Stack, rejections
from test_billing_flow import HEADER, flow, ledger, of, upload  # noqa: F401
from test_billing_late_eru import deliver, eru
from test_billing_rerating_followups import _run_stormwater_cycle

from common import clock
from stormwater.domain import credits as cr
from stormwater.domain.determinations import ParcelData
from stormwater.domain.parcels import ParcelState
from stormwater.events import FeeCharged

SW = "pleasant-prairie-stormwater"
FILED = datetime(2026, 10, 5, 15, tzinfo=UTC)


@pytest.fixture
def at() -> Iterator[clock.FixedClock]:
    fixed = clock.FixedClock(datetime(2026, 9, 1, 17, tzinfo=UTC))
    clock.install(fixed)
    yield fixed
    clock.install(None)


def _accounts(stack: Stack, *rows: str) -> None:
    upload(stack, "accounts/sw.csv", HEADER + "".join(f"\n{SW},{r}" for r in rows) + "\n")


def _review_fee(parcel_id: str = "P-1") -> FeeCharged:
    """The fee stormwater's use case publishes when a credit application is filed, on the
    tariff in force (the application itself is stormwater's pure domain)."""
    from billing.composition import book
    from stormwater.tariffs import StormwaterTariffs

    tariff = StormwaterTariffs(book())(SW, FILED.date())
    state = ParcelState(
        tenant=SW,
        parcel_id=parcel_id,
        owner_name="Lakeview",
        gis=ParcelData(use="nonresidential", area_sqft=Decimal(43560), impervious_sqft=Decimal(30000)),
        gis_digest="d",
    )
    docs = cr.Documentation("Pat, P.E.", "WI-PE-1", "report 7", "wet pond")
    step = cr.apply_for_credit(
        state, docs, tenant=SW, parcel_id=parcel_id, tariff=tariff, open_credits=[], now=FILED
    )
    assert step.fee is not None and step.fee.account_id is None
    return step.fee


def _fee_lines(stack: Stack) -> list[dict[str, object]]:
    return [ln for b in of(stack, f"BILLS#{SW}") for ln in b["lines"] if ln["unit"] == "charge"]


def test_pp_cwu_credit_review_fee_is_charged_once_to_the_parcels_account(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    _accounts(
        flow,
        "PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2026-10-01,nonresidential,,P-1,Lakeview",
        "PPS-2,Shore,1 Shore Rd,1 Shore Rd,53158,2026-10-01,nonresidential,,P-2,Shore",
    )
    for parcel in ("P-1", "P-2"):
        deliver(
            eru(1, date(2025, 1, 1), "1.00", use="nonresidential").model_copy(update={"parcel_id": parcel})
        )
    fee = _review_fee()
    # The tariff's review fee, for the application filed on 2026-10-05.
    assert (fee.rule_id, fee.kind, fee.amount) == ("PP-CWU-CREDIT", "credit_review", Decimal("100.00"))
    at.set(FILED + timedelta(hours=1))
    deliver(fee)
    deliver(fee)  # a redelivery
    assert rejections(flow) == []
    at.set(datetime(2026, 11, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(flow, "2026-11-01T11:00:00Z")
    # PPS-1's October bill: 2.00 base + 1.00 x 6.00 + the 100.00 review fee = 108.00, one
    # fee line citing PP-CWU-CREDIT with its tariff version and application. PPS-2: 8.00.
    bills = {b["account_id"]: b for b in of(flow, f"BILLS#{SW}")}
    assert (bills["PPS-1"]["total"], bills["PPS-2"]["total"]) == ("108.00", "8.00")
    [line] = _fee_lines(flow)
    assert (line["rule_id"], line["amount"]) == ("PP-CWU-CREDIT", "100.00")
    details = line["details"]
    assert isinstance(details, dict)
    assert details["charge_id"] == fee.fee_id
    assert details["credit_id"] == fee.details["credit_id"]
    assert details["tariff_version"] == fee.tariff_version == f"{SW}@2023-01-01"
    assert details["fee_kind"] == "credit_review"
    # On the ledger: the bill's charge entries (derived from its lines) hold it once.
    charges = [
        e for e in ledger(flow, "PPS-1", tenant=SW) if e.kind == "charge" and e.rule_id == "PP-CWU-CREDIT"
    ]
    assert [(e.amount, e.bill_id) for e in charges] == [(Decimal("100.00"), bills["PPS-1"]["bill_id"])]
    # Delivered again after it was billed: the next bill charges it no more.
    deliver(fee)
    at.set(datetime(2026, 12, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(flow, "2026-12-01T11:00:00Z")
    assert [ln["details"]["charge_id"] for ln in _fee_lines(flow)] == [fee.fee_id]  # type: ignore[index]


def test_pp_cwu_pef_and_pp_cwu_appeal_fees_reach_the_account_too(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    _accounts(flow, "PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2026-10-01,nonresidential,,P-1,Lakeview")
    deliver(eru(1, date(2025, 1, 1), "1.00", use="nonresidential"))
    base = _review_fee()
    pef = base.model_copy(
        update={
            "event_id": "ev-pef",
            "fee_id": "PEF-P-1-developed",
            "kind": "project_evaluation",
            "rule_id": "PP-CWU-PEF",
            "amount": Decimal("150.00"),
            "details": {"reason": "developed"},
        }
    )
    appeal = base.model_copy(  # stormwater names the appealed bill's account on this one
        update={
            "event_id": "ev-apf",
            "fee_id": "APF-AP-1",
            "account_id": "PPS-1",
            "kind": "appeal",
            "rule_id": "PP-CWU-APPEAL",
            "amount": Decimal("50.00"),
            "details": {"appeal_id": "AP-1"},
        }
    )
    at.set(FILED + timedelta(hours=1))
    for fee in (pef, appeal):
        deliver(fee)
    assert rejections(flow) == []
    at.set(datetime(2026, 11, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(flow, "2026-11-01T11:00:00Z")
    assert sorted((ln["rule_id"], ln["amount"]) for ln in _fee_lines(flow)) == [  # type: ignore[type-var]
        ("PP-CWU-APPEAL", "50.00"),
        ("PP-CWU-PEF", "150.00"),
    ]
    # 2.00 + 6.00 + 150.00 + 50.00
    assert [b["total"] for b in of(flow, f"BILLS#{SW}")] == ["208.00"]


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ((), "parcel_id names no account of pleasant-prairie-stormwater open on 2026-10-05"),
        (
            (
                "PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2026-10-01,nonresidential,,P-1,Lakeview",
                "PPS-3,Lakeview East,9 Lake Rd,9 Lake Rd,53158,2026-10-01,nonresidential,,P-1,Lakeview",
            ),
            "parcel_id names 2 open accounts (PPS-1, PPS-3)",
        ),
    ],
)
def test_a_fee_no_single_account_is_open_for_is_rejected_naming_the_parcel(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
    rows: tuple[str, ...],
    reason: str,
) -> None:
    if rows:
        _accounts(flow, *rows)
    fee = _review_fee()
    at.set(FILED + timedelta(hours=1))
    deliver(fee)
    [rejected] = rejections(flow)
    text = str(rejected["detail"])
    assert fee.fee_id in text and "P-1" in text and reason in text
    assert of(flow, f"CHARGES#{SW}") == []
