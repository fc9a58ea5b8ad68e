"""Bills kept from billing's events (issued, paid), for reconsiderations and appeals."""

from __future__ import annotations

from dataclasses import replace

from common.ids import key
from stormwater.adapters.dynamodb import (
    fact_item,
)
from stormwater.app.billing_inputs import BillIssuedInput, PaymentAppliedInput
from stormwater.app.common import _BILL, UseCaseBase, _dump
from stormwater.domain import reconsiderations as rc


class BillUseCases(UseCaseBase):
    # --- bills kept from billing's events -------------------------------------------------------
    def keep_bill(self, issued: BillIssuedInput) -> bool:
        """Keep a stormwater bill (one with a parcel); a repeat keeps the payment date known."""
        if not issued.parcel_id:
            return False
        bill = rc.BillView(
            tenant=issued.tenant,
            bill_id=issued.bill_id,
            account_id=issued.account_id,
            parcel_id=issued.parcel_id,
            bill_date=issued.bill_date,
            due_date=issued.due_date,
            total=issued.total,
            period_start=issued.period_start,
            period_end=issued.period_end,
        )
        pk, sk = key("BILL", bill.tenant, bill.bill_id), "BILL"
        existing = self._records.get(pk, sk)
        if existing is not None:
            bill = replace(bill, paid_on=_BILL.validate_json(existing["body"]).paid_on)
        self._records.put(fact_item(pk, sk, "bill", _dump(_BILL, bill), account_id=bill.account_id))
        self._records.put(
            {
                "pk": key("ACCOUNT", bill.tenant, bill.account_id),
                "sk": key("BILL", bill.bill_date.isoformat(), bill.bill_id),
                "kind": "bill_ref",
                "bill_id": bill.bill_id,
            }
        )
        return True

    def keep_payment(self, payment: PaymentAppliedInput) -> int:
        """Record the payment date on the bill paid (or, without a bill id, on the account's
        unpaid bills issued by then); returns how many bills it marked."""
        if payment.amount is not None and payment.amount <= 0:
            return 0  # a reversal (returned check) pays nothing
        if payment.bill_id:
            bill_ids = [payment.bill_id]
        else:
            refs = self._records.query(key("ACCOUNT", payment.tenant, payment.account_id), "BILL#")
            bill_ids = [r["bill_id"] for r in refs if r["sk"].split("#")[1] <= payment.paid_on.isoformat()]
        marked = 0
        for bill_id in bill_ids:
            pk, sk = key("BILL", payment.tenant, bill_id), "BILL"
            existing = self._records.get(pk, sk)
            if existing is None:
                continue
            bill = _BILL.validate_json(existing["body"])
            if bill.paid_on is not None and (payment.bill_id is None or bill.paid_on >= payment.paid_on):
                continue
            paid = replace(bill, paid_on=payment.paid_on)
            self._records.put(fact_item(pk, sk, "bill", _dump(_BILL, paid), account_id=bill.account_id))
            marked += 1
        return marked

    def bill(self, tenant: str, bill_id: str) -> rc.BillView | None:
        if "#" in bill_id or not bill_id.strip():  # no such bill: ids never hold the key separator
            return None
        item = self._records.get(key("BILL", tenant, bill_id), "BILL")
        return None if item is None else _BILL.validate_json(item["body"])
