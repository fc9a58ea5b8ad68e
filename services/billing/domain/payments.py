"""Payments: the lockbox file under ``payments/`` (CONTRACTS.md) and the HTTP API.

Idempotent by the payment's ``reference`` (unique per tenant): the same reference with
the same values again changes nothing; with other values it is a rejected line naming
both. A negative amount with a new reference reverses an earlier payment (a returned
check). A payment for an unknown account goes to suspense, never lost.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.domain.csvfiles import BadCell, LineError, key_cell, stream_rows
from billing.domain.ledger import OM, Entry
from common import fields
from common.money import CENT
from common.values import BadValue, to_date, to_decimal

REQUIRED = ("tenant", "account_id", "reference", "paid_on", "amount")
MAX_AMOUNT = Decimal("10000000")


@dataclass(frozen=True, slots=True)
class Payment:
    tenant: str
    account_id: str
    reference: str
    paid_on: date
    amount: Decimal
    channel: str = "lockbox"

    def same_as(self, other: Payment) -> bool:
        return (self.account_id, self.paid_on, self.amount) == (other.account_id, other.paid_on, other.amount)

    def entry(self, *, suspense: bool = False) -> Entry:
        """The ledger entry (negative: it reduces what is owed)."""
        return Entry(
            entry_id=f"PAY-{self.reference}",
            tenant=self.tenant,
            account_id=self.account_id,
            posted_on=self.paid_on,
            kind="payment",
            amount=-self.amount,
            fund=OM,
            rule_id="X-DUE",
            reference=self.reference,
            description="suspense: unknown account" if suspense else f"payment ({self.channel})",
        )


def parse_amount(value: str, column: str = "amount") -> Decimal:
    """A payment's amount (the lockbox file and the API alike): non-zero, in cents, below
    :data:`MAX_AMOUNT`; negative reverses an earlier payment (a returned check)."""
    if not value:
        raise BadCell(column, "is required")
    try:
        amount = to_decimal(value)
    except BadValue as exc:
        raise BadCell(column, str(exc)) from None
    if amount == 0 or abs(amount) > MAX_AMOUNT or amount != amount.quantize(CENT):
        raise BadCell(column, f"must be a non-zero amount in cents below {MAX_AMOUNT}, got {value[:40]!r}")
    return amount.quantize(CENT)


def parse_payment_row(
    row: Mapping[str, str],
    tenants: Collection[str],
    today: date | None = None,
    first_tariff: Mapping[str, date] | None = None,
) -> Payment:
    """``today``: the utility's date the file is taken in; a payment dated after it (a bank
    lists payments already received) is refused: it would count only from that date (X-DUE).
    ``first_tariff``: each tenant's first tariff version; a payment dated before it pays
    nothing this system billed (a 1900-01-01 payment was posted to the ledger: issue 27)."""
    cells = dict(row)
    tenant = key_cell(cells, "tenant")
    if tenant not in tenants:
        raise BadCell("tenant", f"{tenant!r} is not a tenant")
    account_id = key_cell(cells, "account_id")
    reference = key_cell(cells, "reference")
    paid_on = paid_on_of(cells.get("paid_on", ""), tenant, today, first_tariff)
    return Payment(
        tenant=tenant,
        account_id=account_id,
        reference=reference,
        paid_on=paid_on,
        amount=parse_amount(cells.get("amount", "")),
    )


def paid_on_of(
    value: str, tenant: str, today: date | None, first_tariff: Mapping[str, date] | None = None
) -> date:
    """A payment's date (``paid_on``), the same rule for the lockbox file and the API: a
    calendar date between the tenant's first tariff version and ``today``
    (``common.fields.DateWindow.happened``)."""
    if not value:
        raise BadCell("paid_on", "is required")
    try:
        paid_on = to_date(value)
    except BadValue as exc:
        raise BadCell("paid_on", str(exc)) from None
    if today is not None and paid_on > today:
        raise BadCell("paid_on", f"{paid_on} is after the day the file is taken in ({today})")
    first = (first_tariff or {}).get(tenant)
    if first is not None and today is not None:
        try:
            fields.DateWindow(first, today).happened("paid_on", paid_on, tenant=tenant)
        except fields.BadField as exc:
            raise BadCell("paid_on", exc.reason) from None
    return paid_on


def read_lockbox_lines(
    chunks: Iterable[bytes],
    tenants: Collection[str],
    today: date | None = None,
    first_tariff: Mapping[str, date] | None = None,
) -> Iterator[tuple[int, Payment | LineError]]:
    """Each data line of a lockbox file, in file order, as its payment or its rejection;
    streamed (``csvfiles.stream_rows``). Repeats are judged by the use case, against what
    is stored (issue 26), not here."""
    for line, row in stream_rows(chunks, required=REQUIRED, optional=()):
        if isinstance(row, BadCell):  # not a row of the header's columns
            yield line, LineError(line, row.column, row.reason)
            continue
        try:
            yield line, parse_payment_row(row, tenants, today, first_tariff)
        except BadCell as exc:
            yield line, LineError(line, exc.column, exc.reason, readable_amount(row))


def readable_amount(row: Mapping[str, str]) -> Decimal | None:
    """A rejected line's amount, when it is a valid one (for the file's batch total)."""
    try:
        return parse_amount(row.get("amount", "") or "")
    except BadCell:
        return None


def parse_lockbox_file(
    data: bytes, tenants: Collection[str], today: date | None = None
) -> tuple[list[tuple[int, Payment]], list[LineError]]:
    accepted: list[tuple[int, Payment]] = []
    errors: list[LineError] = []
    seen: dict[tuple[str, str], Payment] = {}
    for line, payment in read_lockbox_lines((data,), tenants, today):
        if isinstance(payment, LineError):
            errors.append(payment)
            continue
        earlier = seen.get((payment.tenant, payment.reference))
        if earlier is not None:
            if not earlier.same_as(payment):
                errors.append(
                    LineError(
                        line, "reference", f"{payment.reference!r} repeats an earlier line with other values"
                    )
                )
            continue
        seen[(payment.tenant, payment.reference)] = payment
        accepted.append((line, payment))
    return accepted, errors
