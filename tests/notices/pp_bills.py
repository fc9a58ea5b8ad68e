"""Pleasant Prairie bills for the combined-bill tests, as billing issues them (BillIssued).

Hand-worked (tariffs pleasant-prairie-sewer@2019-10-01, pleasant-prairie-stormwater@2023-01-01):
- sewer, zone PP, 5/8" meter, 4,000 gal in September 2026: PP-SEW-SVC 14.10 + PP-SEW-VOL
  4 kgal x 4.49 = 17.96 -> 32.06, all to the operation and maintenance fund;
- stormwater, 1.00 ERU: PP-CWU-BASE 2.00 + PP-CWU-ERU 1.00 ERU x 6.00 = 6.00 -> 8.00.
Both billed 2026-10-01, due 20 days later, 2026-10-21 (X-DUE).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from billing.events import BillIssued, IssuedLine, Party

SEWER = "pleasant-prairie-sewer"
STORMWATER = "pleasant-prairie-stormwater"


def line(rule_id: str, description: str, quantity: str, unit: str, rate: str, amount: str) -> IssuedLine:
    return IssuedLine(
        rule_id=rule_id,
        description=description,
        quantity=quantity,
        unit=unit,
        rate=rate,
        amount=Decimal(amount),
        funds={"om": Decimal(amount)},
    )


LINES = {
    SEWER: (
        line("PP-SEW-SVC", 'Monthly service charge, 5/8" meter', "1", "month", "14.10", "14.10"),
        line("PP-SEW-VOL", "Volume charge", "4", "kgal", "4.49", "17.96"),
    ),
    STORMWATER: (
        line("PP-CWU-BASE", "Base charge", "1", "month", "2.00", "2.00"),
        line("PP-CWU-ERU", "Stormwater charge", "1.00", "ERU", "6.00", "6.00"),
    ),
}


def pp_bill(
    tenant: str,
    account: str,
    *,
    name: str = "Ada Lovelace",
    address: str = "12 Oak St; Pleasant Prairie, WI 53158",
    parcel: str | None = "PP-91-4-122-0100",
    opted_in: bool = False,
    email: str | None = "ada@example.org",
    previous_balance: str = "0.00",
    period_start: date = date(2026, 9, 1),
    bill_date: date = date(2026, 10, 1),
) -> BillIssued:
    lines = LINES[tenant]
    total = sum((ln.amount for ln in lines), Decimal("0.00"))
    end = date(period_start.year + period_start.month // 12, period_start.month % 12 + 1, 1)
    prefix = "PPS" if tenant == SEWER else "PPW"
    return BillIssued(
        occurred_at=datetime(bill_date.year, bill_date.month, bill_date.day, 11, 5, tzinfo=UTC),
        tenant=tenant,
        account_id=account,
        bill_id=f"{account}-{period_start.isoformat()}",
        bill_number=f"{prefix}-{period_start:%Y%m}-{account}",
        period_start=period_start,
        period_end=end,
        bill_date=bill_date,
        due_date=date.fromordinal(bill_date.toordinal() + 20),
        lines=lines,
        total=total,
        previous_balance=Decimal(previous_balance),
        payments_since=Decimal("0.00"),
        amount_due=Decimal(previous_balance) + total,
        recipient=Party(name=name, address=address, email=email, email_opt_in=opted_in),
        owner=Party(name=name, address=address),
        parcel_id=parcel,
        service_address="8600 Green Bay Rd, Pleasant Prairie" if tenant == SEWER else None,
    )
