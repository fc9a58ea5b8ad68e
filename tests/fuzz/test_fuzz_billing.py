"""Billing's import kinds under hostile files (issue 27): the ``accounts/`` file and the
``payments/`` (lockbox) file, through billing's own use cases (``take_in_account_file``,
``take_in_lockbox_file``, payments released from suspense) on ``BillingRepo`` over
:class:`MemoryDynamo`, an in-memory stand-in for DynamoDB's low-level client.

The only exception a reader may raise is :class:`FileRejected` (the whole file refused,
nothing of it taken in: the handler reports it); anything else would retry the upload to
the DLQ. Every stored account and payment is checked against the README's column rules
(``fuzz_cells``), a file of refused lines writes nothing, and the same file read again
takes nothing new in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import fuzz_cells as fc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.adapters.items import account_of
from billing.adapters.repository import BillingRepo
from billing.app.accounts import bills_from_rules, take_in_account_file
from billing.app.common import FileResult
from billing.app.payments import release_waiting, take_in_lockbox_file
from billing.domain.accounts import OPTIONAL, REQUIRED
from billing.domain.csvfiles import FileRejected
from common.dynamo import from_item
from common.tariff_files import default_tariffs_dir, load_tariff_book

BOOK = load_tariff_book(default_tariffs_dir())
NOW = datetime(2026, 10, 6, 15, 0, tzinfo=UTC)  # 10:00 in Wisconsin
TODAY = date(2026, 10, 6)
TENANTS = frozenset(BOOK.tenants)
RULES = bills_from_rules(BOOK, TODAY)
FIRST = {t: BOOK.first_effective(t) for t in TENANTS}
EXAMPLES = fc.examples(60)


class MemoryDynamo:
    """The DynamoDB calls ``BillingRepo`` makes, on a dict; it refuses what DynamoDB would
    (an empty key, a partition key over 2,048 bytes, a sort key over 1,024, an item over
    400 KB) with the error DynamoDB answers, so a reader that lets such a value through fails
    here as it would in Lambda."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.marks = 0  # UpdateItems of the assessment's due mark

    @staticmethod
    def _key(raw: dict[str, Any]) -> tuple[str, str]:
        pk, sk = raw["pk"]["S"], raw["sk"]["S"]
        if not pk or not sk or len(pk.encode()) > 2048 or len(sk.encode()) > 1024:
            raise ValueError(f"ValidationException: key ({len(pk.encode())}, {len(sk.encode())} bytes)")
        return pk, sk

    def _put(self, item: dict[str, Any]) -> None:
        if len(repr(item).encode()) > 400_000:
            raise ValueError("ValidationException: Item size has exceeded the maximum allowed size")
        self.items[self._key(item)] = copy.deepcopy(item)

    def batch_write_item(self, RequestItems: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:  # noqa: N803
        (requests,) = RequestItems.values()
        assert len(requests) <= 25
        for r in requests:
            if "PutRequest" in r:
                self._put(r["PutRequest"]["Item"])
            else:
                self.items.pop(self._key(r["DeleteRequest"]["Key"]), None)
        return {"UnprocessedItems": {}}

    def batch_get_item(self, RequestItems: dict[str, dict[str, Any]]) -> dict[str, Any]:  # noqa: N803
        ((table, spec),) = RequestItems.items()
        assert len(spec["Keys"]) <= 100
        found = [self.items[k] for k in map(self._key, spec["Keys"]) if k in self.items]
        return {"Responses": {table: copy.deepcopy(found)}, "UnprocessedKeys": {}}

    def get_item(self, TableName: str, Key: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N803
        item = self.items.get(self._key(Key))
        return {"Item": copy.deepcopy(item)} if item else {}

    def query(self, **kwargs: Any) -> dict[str, Any]:
        values = {k: v["S"] for k, v in kwargs["ExpressionAttributeValues"].items()}
        condition = kwargs["KeyConditionExpression"]
        out = []
        for (pk, sk), item in sorted(self.items.items()):
            if pk != values[":pk"]:
                continue
            if "begins_with" in condition and not sk.startswith(values[":p"]):
                continue
            if "BETWEEN" in condition and not values[":a"] <= sk <= values[":b"]:
                continue
            out.append(copy.deepcopy(item))
        return {"Items": out}

    def put_item(self, TableName: str, Item: dict[str, Any], ConditionExpression: str = "", **_: Any) -> None:  # noqa: N803
        from botocore.exceptions import ClientError

        if ConditionExpression == "attribute_not_exists(pk)" and self._key(Item) in self.items:
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException"}}, "PutItem")
        assert ConditionExpression in ("", "attribute_not_exists(pk)"), ConditionExpression
        self._put(Item)

    def update_item(self, **kwargs: Any) -> None:
        self.marks += 1

    def state(self) -> dict[tuple[str, str], dict[str, Any]]:
        return copy.deepcopy(self.items)

    def of(self, prefix: str) -> Iterator[dict[str, Any]]:
        return (from_item(i) for (pk, _), i in sorted(self.items.items()) if pk.startswith(prefix))


@contextmanager
def refused_whole_or_read() -> Iterator[None]:
    """A reader's one documented way out: the whole file refused."""
    try:
        yield
    except FileRejected:
        pass


def counted(result: FileResult, drawn: fc.Drawn, kind: str) -> None:
    counts = result.counts.check()
    fc.TAKEN[kind] += counts.accepted + counts.changed + counts.waiting
    if drawn.plain:
        assert counts.lines == len(drawn.rows), (counts, drawn.rows)


# --- accounts --------------------------------------------------------------------------------
HEADER = (*REQUIRED, "closed_on", "zone", "meter_size", "parcel_id", "bills_from", "email", "dwelling_units")
assert set(HEADER) <= set(REQUIRED) | set(OPTIONAL)


@st.composite
def account_row(draw: st.DrawFn) -> tuple[str, ...]:
    tenant = draw(st.sampled_from(sorted(TENANTS)))
    opened = draw(st.dates(date(1980, 1, 1), date(2027, 6, 1)))
    closed = draw(st.none() | st.dates(opened, date(2028, 1, 1)))
    zones = sorted((RULES.zones or {}).get(tenant, frozenset()))
    sizes = sorted(RULES.meter_sizes.get(tenant, frozenset({"5/8", "1"})))
    months = RULES.months.get(tenant, 1)
    start = draw(st.dates(date(2014, 1, 1), date(2026, 12, 1)))
    bills_from = date(start.year, (start.month - 1) // months * months + 1, 1)
    return (
        tenant,
        draw(fc.ids("AC-")),
        draw(st.sampled_from(("Ann Lee", "Smith, John", "O'Neil", "Zoë Ærø"))),
        "1 Main St",
        draw(st.sampled_from(("1 Main St", "PO Box 7"))),
        draw(st.sampled_from(("53024", "53158-1234"))),
        opened.isoformat(),
        draw(st.sampled_from(("residential", "nonresidential"))),
        "" if closed is None else closed.isoformat(),
        draw(st.sampled_from(["", *zones])),
        draw(st.sampled_from(["", *sizes])),
        draw(st.sampled_from(("", "P-1", "P-2"))) if tenant != "pleasant-prairie-stormwater" else "P-1",
        draw(st.sampled_from(("", bills_from.isoformat()))),
        draw(st.sampled_from(("", "ann@example.com"))),
        draw(st.sampled_from(("", "1", "3"))),
    )


REFUSE_ACCOUNT = fc.refuse_with(
    {
        0: ("=grafton-sewer", "nowhere-sewer", ""),
        1: fc.UNSAFE_IDS,
        2: ("=HYPERLINK(1)", "@x", "+x", "A\x00", "A\x1b", "x" * 201, ""),
        3: ("-1 Main", "\t1 Main", "1 Main\x7f", ""),
        5: ("5302", "530241", "5302A", "=53024", "53024-12"),
        6: ("2029-01-01", "2026-02-30", "", "1e5"),
        7: ("Residential", "=residential", "other"),
        10: ("7/8", "=1", "5/8\x00"),
        14: ("0", "1.5", "-2", "1e400", "NaN"),
    }
)


def accounts_keep_the_rules(db: MemoryDynamo) -> None:
    for item in db.of("ACCOUNTS#"):
        a = account_of(item)
        assert a.tenant in TENANTS and fc.safe_id(a.account_id), a
        for text in (a.name, a.service_address, a.mailing_address, a.owner_name, a.sic, a.email):
            assert text is None or fc.printable(text), a
        assert fc.ZIP.fullmatch(a.zip), a
        assert a.account_class in ("residential", "nonresidential")
        assert fc.started(a.opened_on, TODAY), a
        assert a.closed_on is None or fc.ended(a.closed_on, a.opened_on, TODAY), a
        sizes = RULES.meter_sizes.get(a.tenant)
        assert a.meter_size is None or sizes is None or a.meter_size in sizes, a
        assert a.zone is None or a.zone in (RULES.zones or {}).get(a.tenant, frozenset()), a
        assert a.parcel_id is None or fc.safe_id(a.parcel_id), a
        if a.bills_from is not None:
            assert FIRST[a.tenant] <= a.bills_from <= TODAY and a.bills_from.day == 1, a
        assert a.dwelling_units >= 1


def accounts_file(db: MemoryDynamo, data: bytes, run: str) -> FileResult | None:
    repo = BillingRepo(db, "billing")
    with refused_whole_or_read():
        return take_in_account_file(
            [data[i : i + 97] for i in range(0, len(data), 97)],
            source=f"accounts/{run}.csv",
            run=run,
            repo=repo,
            tenants=TENANTS,
            now=NOW,
            rules=RULES,
            release=lambda t, ids: release_waiting(t, ids, repo=repo, now=NOW, book=BOOK),
        )
    return None


def current(db: MemoryDynamo) -> dict[tuple[str, str], Any]:
    return {(i["pk"], i["sk"]): i["record"] for i in db.of("ACCOUNTS#")}


@EXAMPLES
@given(fc.csv_file(HEADER, account_row()))
def test_an_accounts_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["billing accounts/"] += 1
    db = MemoryDynamo()
    first = accounts_file(db, drawn.data, "run-1")
    if first is None:
        assert not drawn.plain and db.items == {}  # refused whole: nothing of it taken in
        return
    counted(first, drawn, "billing accounts/")
    accounts_keep_the_rules(db)
    held = current(db)
    again = accounts_file(db, drawn.data, "run-2")
    assert again is not None
    counted(again, drawn, "billing accounts/")
    assert again.counts.accepted == 0, again.counts
    assert current(db) == held  # each account's version in force is the same


@EXAMPLES
@given(fc.csv_file(HEADER, account_row(), all_mutated=True, refusing=REFUSE_ACCOUNT))
def test_an_accounts_file_of_refused_lines_writes_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["billing accounts/ refused"] += 1
    db = MemoryDynamo()
    accounts_file(
        db,
        (
            ",".join(HEADER)
            + "\n"
            + "grafton-sewer,AC-1,Ann,1 Main,1 Main,53024,2026-01-01,residential,,,,,,,\n"
        ).encode(),
        "run-0",
    )
    before, marks = db.state(), db.marks
    result = accounts_file(db, drawn.data, "run-1")
    assert result is not None
    counted(result, drawn, "billing accounts/ refused")
    assert result.counts.rejected == len(drawn.rows), (result.counts, result.rejected)
    assert (db.state(), db.marks) == (before, marks)


# --- payments (lockbox) ----------------------------------------------------------------------
PAY_HEADER = ("tenant", "account_id", "reference", "paid_on", "amount")
KNOWN = "grafton-sewer,AC-1,Ann,1 Main,1 Main,53024,2025-01-01,residential,,,,,,,\n"


@st.composite
def payment_row(draw: st.DrawFn) -> tuple[str, ...]:
    return (
        draw(st.sampled_from(("grafton-sewer", "sullivan-sewer"))),
        draw(fc.ids("AC-", 3)),
        draw(fc.ids("LB-", 5)),
        draw(fc.days(date(2024, 12, 1), date(2026, 10, 8))),
        draw(st.sampled_from(("10.00", "125.5", "-10.00", "0.01", "9999999.99"))),
    )


REFUSE_PAYMENT = fc.refuse_with(
    {
        0: ("=grafton-sewer", "nowhere", ""),
        1: fc.UNSAFE_IDS,
        2: fc.UNSAFE_IDS,
        3: ("1900-01-01", "2026-10-07", "2026-02-30", "", "2026/10/01"),
        4: ("0", "0.001", "1e400", "NaN", "10000000.01", "=10", "+10", "1,000.00", "", "-0"),
    }
)


def lockbox_file(db: MemoryDynamo, data: bytes, run: str) -> FileResult | None:
    with refused_whole_or_read():
        return take_in_lockbox_file(
            [data[i : i + 97] for i in range(0, len(data), 97)],
            run=run,
            source=f"payments/{run}.csv",
            repo=BillingRepo(db, "billing"),
            tenants=TENANTS,
            now=NOW,
            book=BOOK,
        )
    return None


def payments_keep_the_rules(db: MemoryDynamo) -> None:
    for item in db.of("PAYMENT#"):
        tenant = item["pk"].split("#", 1)[1]
        assert tenant in TENANTS and fc.safe_id(item["sk"]) and fc.safe_id(item["account_id"]), item
        assert fc.happened(date.fromisoformat(item["paid_on"]), FIRST[tenant], TODAY), item
        amount = Decimal(item["amount"])
        assert amount != 0 and abs(amount) <= 10_000_000 and amount == amount.quantize(Decimal("0.01")), item


def payments(db: MemoryDynamo) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (i["pk"], i["sk"]): (i["account_id"], i["paid_on"], i["amount"], i.get("suspense"))
        for i in db.of("PAYMENT#")
    }


@EXAMPLES
@given(fc.csv_file(PAY_HEADER, payment_row(), max_rows=10))
def test_a_lockbox_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["billing payments/"] += 1
    db = MemoryDynamo()
    accounts_file(db, (",".join(HEADER) + "\n" + KNOWN).encode(), "run-0")
    first = lockbox_file(db, drawn.data, "run-1")
    if first is None:
        assert not drawn.plain and not payments(db)
        return
    counted(first, drawn, "billing payments/")
    payments_keep_the_rules(db)
    held = payments(db)
    again = lockbox_file(db, drawn.data, "run-2")
    assert again is not None
    counted(again, drawn, "billing payments/")
    assert (again.counts.accepted, again.counts.changed) == (0, 0), again.counts
    assert payments(db) == held
    # the accounts the waiting payments name arrive: each is posted once, as the rules allow
    waiting = sorted({i["account_id"] for i in db.of("SUSPENSE#grafton-sewer")})
    arriving = "".join(KNOWN.replace("AC-1", a) for a in waiting)
    accounts_file(db, (",".join(HEADER) + "\n" + arriving).encode(), "run-3")
    payments_keep_the_rules(db)
    assert not any(p[3] for k, p in payments(db).items() if k[0] == "PAYMENT#grafton-sewer")
    assert not list(db.of("SUSPENSE#grafton-sewer"))


@EXAMPLES
@given(fc.csv_file(PAY_HEADER, payment_row(), all_mutated=True, refusing=REFUSE_PAYMENT))
def test_a_lockbox_file_of_refused_lines_writes_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["billing payments/ refused"] += 1
    db = MemoryDynamo()
    accounts_file(db, (",".join(HEADER) + "\n" + KNOWN).encode(), "run-0")
    before, marks = db.state(), db.marks
    result = lockbox_file(db, drawn.data, "run-1")
    assert result is not None
    counted(result, drawn, "billing payments/ refused")
    assert result.counts.rejected == len(drawn.rows), (result.counts, result.rejected)
    assert (db.state(), db.marks) == (before, marks)


# --- every column given a control character or a formula start ------------------------------
COLUMN = fc.examples(5)


@pytest.mark.parametrize("column", range(len(HEADER)), ids=HEADER)
@COLUMN
@given(data=st.data())
def test_no_accounts_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["billing accounts/ spoiled column"] += 1
    drawn = data.draw(fc.csv_file(HEADER, account_row(), all_mutated=True, refusing=fc.spoil(column)))
    db = MemoryDynamo()
    result = accounts_file(db, drawn.data, "run-1")
    assert result is not None
    counted(result, drawn, "billing accounts/ spoiled column")
    accounts_keep_the_rules(db)


@pytest.mark.parametrize("column", range(len(PAY_HEADER)), ids=PAY_HEADER)
@COLUMN
@given(data=st.data())
def test_no_lockbox_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["billing payments/ spoiled column"] += 1
    drawn = data.draw(fc.csv_file(PAY_HEADER, payment_row(), all_mutated=True, refusing=fc.spoil(column)))
    db = MemoryDynamo()
    accounts_file(db, (",".join(HEADER) + "\n" + KNOWN).encode(), "run-0")
    result = lockbox_file(db, drawn.data, "run-1")
    assert result is not None
    counted(result, drawn, "billing payments/ spoiled column")
    payments_keep_the_rules(db)
