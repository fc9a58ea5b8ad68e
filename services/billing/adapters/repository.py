"""Billing's repository: domain records in and out of the table (``items`` has the layout)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from billing.adapters.items import (
    account_history_item,
    account_item,
    account_key,
    account_of,
    bill_item,
    bill_of,
    entry_item,
    entry_of,
    parcel_link_item,
)
from billing.adapters.search_index import index_changes, index_items
from billing.adapters.store import Store
from billing.domain.accounts import AccountRecord, TakenAccount
from billing.domain.assessment_due import DueMark
from billing.domain.bills import Bill, BilledRead, reads_behind
from billing.domain.cycles import UTILITY_TZ
from billing.domain.issuing import Charge, Eru, Held, Strength, Usage
from billing.domain.ledger import Entry
from billing.domain.projections import eru_in_force, eru_over, strength_in_force
from common.clock import RuntimeClock
from common.due_marks import put_unless_written
from common.dynamo import get, key_of
from common.events import Event
from common.outbox import outbox_item

ASSESSMENT_INPUTS = ("BILLS#", "LEDGER#", "MARKS#", "TAXROLL#", "ARRANGEMENTS#")
"""The partitions the daily assessment reads (``<prefix><tenant>...``): a write to one of
them outside the assessment marks its tenant pending (``billing.domain.assessment_due``)."""
DUE_KEY = ("ASSESSMENT", "DUE")
DUE_ACCOUNTS = "ASSESSDUE#"
"""``ASSESSDUE#<tenant>#<day>`` / ``<account_id>``: the account may have assessment work on
that day (issue 31): written with every write of its assessment inputs (the writer's local
day, before the items) and by the assessment for each account's next day with work, so a
run reads the accounts of its days only (``billing.domain.assessment_due``)."""
DUE_ACCOUNTS_KEPT = timedelta(days=400)  # then DynamoDB's TTL drops the day's entries


def due_account_item(tenant: str, day: date, account_id: str) -> dict[str, Any]:
    expires = datetime.combine(day + DUE_ACCOUNTS_KEPT, time(), UTC)
    return {
        "pk": f"{DUE_ACCOUNTS}{tenant}#{day.isoformat()}",
        "sk": account_id,
        "expires_at": int(expires.timestamp()),
    }


def _account_of(pk: str, sk: str) -> tuple[str, str] | None:
    """(tenant, account) of an item of an assessment input (its sort key starts with the
    account id), else None."""
    tenant = _tenant_of(pk)
    if tenant is None:
        return None
    return tenant, sk.split("#", 1)[0]


def _tenant_of(pk: str) -> str | None:
    for prefix in ASSESSMENT_INPUTS:
        if pk.startswith(prefix):
            return pk[len(prefix) :].split("#", 1)[0]
    return None


class BillingRepo(Store):
    def __init__(self, client: Any, table: str, today: Callable[[], date] | None = None) -> None:
        super().__init__(client, table)
        self._today = today or (lambda: RuntimeClock().now().astimezone(UTILITY_TZ).date())

    # --- when the daily assessment has work (billing.domain.assessment_due) ---------------
    def _due_items(self, keys: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
        """Today's ``ASSESSDUE#`` entries of the accounts of these keys' items."""
        day = self._today()
        accounts = sorted({a for pk, sk in keys if (a := _account_of(pk, sk)) is not None})
        return [due_account_item(t, day, a) for t, a in accounts]

    def write(
        self,
        items: Iterable[dict[str, Any]],
        deletes: Iterable[tuple[str, str]] = (),
        *,
        assessing: bool = False,
    ) -> int:
        """``Store.write``; then, unless the assessment itself writes (``assessing``), the
        tenants of any assessment input written are marked pending (items first, then the
        mark: see ``assessment_due``)."""
        listed, removed = list(items), list(deletes)
        keys = [(i["pk"], i["sk"]) for i in listed] + removed
        due = [] if assessing else self._due_items(keys)
        written = super().write(due + listed, removed) - len(due)
        if not assessing:
            self._mark([pk for pk, _ in keys], full=False)
        return written

    def put_new(self, item: dict[str, Any]) -> bool:
        due = self._due_items([(item["pk"], item["sk"])])
        if due:
            Store.write(self, due)
        put = super().put_new(item)
        if put:
            self._mark([item["pk"]], full=False)
        return put

    def assessment_inputs_changed(
        self, pks: Iterable[str], accounts: Collection[tuple[str, str]] | None = None
    ) -> None:
        """Mark the tenants of these partition keys pending (one UpdateItem, creating the
        mark); nothing when none is an assessment input. Call it after the items' write.
        With ``accounts`` (tenant, account id), their entries for today are written first and
        the next run reads those accounts only; without, the tenants' next run is a full one."""
        if accounts is not None:
            day = self._today()
            Store.write(self, [due_account_item(t, day, a) for t, a in sorted(set(accounts))])
        self._mark(pks, full=accounts is None)

    def _mark(self, pks: Iterable[str], *, full: bool) -> None:
        tenants = sorted({t for t in map(_tenant_of, pks) if t})
        if not tenants:
            return
        self._count("UpdateItem")
        values: dict[str, Any] = {":one": {"N": "1"}, ":pending": {"SS": tenants}}
        expression = "ADD writes :one, pending :pending"
        if full:
            expression += ", full_run :pending"
        self.client.update_item(
            TableName=self.table,
            Key=key_of(*DUE_KEY),
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
        )

    def accounts_due(self, tenant: str, days: Iterable[date]) -> set[str]:
        """The accounts with an ``ASSESSDUE#`` entry on any of these days (a Query a day)."""
        return {i["sk"] for d in days for i in self.query(f"{DUE_ACCOUNTS}{tenant}#{d.isoformat()}")}

    @staticmethod
    def due_items(tenant: str, next_days: Mapping[str, date]) -> list[dict[str, Any]]:
        """The assessment's own entries: each account on its next day with work."""
        return [due_account_item(tenant, d, a) for a, d in sorted(next_days.items())]

    def assessment_due(self) -> DueMark | None:
        self._count("GetItem")
        item = get(self.client, self.table, *DUE_KEY)
        if item is None:
            return None
        return DueMark(
            next_on={t: date.fromisoformat(d) for t, d in (item.get("next_on") or {}).items()},
            pending=frozenset(item.get("pending", ())),
            writes=int(item.get("writes", 0)),
            full=frozenset(item.get("full_run", ())),
            assessed_on={t: date.fromisoformat(d) for t, d in (item.get("assessed_on") or {}).items()},
            days={
                t: tuple(date.fromisoformat(d) for d in ds.split(",") if d)
                for t, ds in (item.get("days") or {}).items()
            },
        )

    def set_assessment_due(
        self,
        next_on: Mapping[str, date],
        seen: DueMark | None,
        *,
        assessed_on: Mapping[str, date] | None = None,
        days: Mapping[str, Collection[date]] | None = None,
    ) -> bool:
        """Record the tenants' next run days (and, for each tenant assessed, the day it was
        assessed and the later days with work its accounts have), unless a write marked a
        tenant since ``seen`` was read (then the mark stays as that write left it: the next
        run reads again from the days this run would have recorded past)."""
        self._count("PutItem")
        item: dict[str, Any] = {
            "pk": DUE_KEY[0],
            "sk": DUE_KEY[1],
            "next_on": {t: d.isoformat() for t, d in sorted(next_on.items())},
            "writes": seen.writes if seen else 0,
        }
        if assessed_on:
            item["assessed_on"] = {t: d.isoformat() for t, d in sorted(assessed_on.items())}
        if days:
            item["days"] = {t: ",".join(d.isoformat() for d in sorted(ds)) for t, ds in sorted(days.items())}
        return put_unless_written(
            self.client, self.table, item, seen.writes if seen else None, "the assessment's mark"
        )

    # --- accounts ----------------------------------------------------------------------
    def store_accounts(self, records: Sequence[AccountRecord], *, source: str, now: datetime) -> int:
        """Current version (overwritten) and history: one item per change, keyed by the
        time it was recorded, so the version in force at any moment is the last recorded by
        then (``account_as_of``). An account whose record is unchanged writes nothing (the
        same file twice changes nothing and its version keeps its time): one BatchGetItem
        per 100 accounts tells which changed."""
        at = now.isoformat()
        current = self.get_many([account_key(r.tenant, r.account_id) for r in records])
        items: list[dict[str, Any]] = []
        stale: list[tuple[str, str]] = []
        for r in records:
            item = account_item(r, at)
            kept = current.get((item["pk"], item["sk"]))
            if kept is not None and kept.get("record") == item["record"]:
                continue
            items.append(account_history_item(r, at, source))
            if r.parcel_id:
                items.append(parcel_link_item(r, at))
            # the search index follows the version (issue 33, billing.adapters.search_index),
            # written before the current version, as the history is: a crash before the
            # current version leaves it unchanged, so the redelivery writes them all again
            puts, deletes = index_changes(account_of(kept) if kept is not None else None, r)
            items.extend(puts)
            stale.extend(deletes)
            items.append(item)
        return self.write(items, stale)

    def reindex_accounts(self, tenant: str) -> int:
        """Write the search index of every current account of ``tenant`` (issue 33): once,
        for accounts stored before the index existed; a repeat rewrites the same items.
        Reads the accounts partition whole: a one-off, never a search's path."""
        return self.write([i for r in self.accounts(tenant) for i in index_items(r).values()])

    def store_account_lines(self, taken: Sequence[TakenAccount], *, source: str) -> int:
        """The versions an import's lines made (issue 26): each history item and current item
        names the run (one delivery of one upload, kept across its redeliveries), the file's
        line and how the line was counted, so a redelivery after a crash counts each line as
        the run without the crash did. A line's ``recorded_at`` is the one its first write
        used, so rewriting it (a redelivery) writes the same items. Order: every history
        item, then every current item, then parcel links: a current item implies its
        version's history item, and a history item of a line implies the lines before it."""
        history: list[dict[str, Any]] = []
        current: dict[tuple[str, str], dict[str, Any]] = {}
        records: dict[tuple[str, str], AccountRecord] = {}
        links: dict[tuple[str, str], dict[str, Any]] = {}
        for t in taken:
            mark = {"run": t.run, "line": t.line, "kind": t.kind}
            history.append({**account_history_item(t.record, t.recorded_at, source), **mark})
            item = {**account_item(t.record, t.recorded_at), **mark, "source": source}
            current[(item["pk"], item["sk"])] = item  # the last version of an account in force
            records[(item["pk"], item["sk"])] = t.record
            if t.record.parcel_id:
                link = parcel_link_item(t.record, t.recorded_at)
                links[(link["pk"], link["sk"])] = link
        # The search index follows the version in force (issue 33): from the version stored
        # now to the last one of these lines, written before the current items, so a crash
        # before them leaves the stored version and a redelivery computes the same changes.
        stored = self.get_many(list(current)) if current else {}
        index: list[dict[str, Any]] = []
        stale: list[tuple[str, str]] = []
        for key, record in records.items():
            kept = stored.get(key)
            puts, deletes = index_changes(account_of(kept) if kept is not None else None, record)
            index.extend(puts)
            stale.extend(deletes)
        return self.write(history + index + list(current.values()) + list(links.values()), stale)

    def current_accounts(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The current items of (tenant, account_id) pairs, as stored (record and marks)."""
        found = self.get_many([account_key(t, a) for t, a in dict.fromkeys(keys)])
        return {(pk.split("#", 1)[1], sk): item for (pk, sk), item in found.items()}

    def history_line(self, tenant: str, account_id: str, run: str, line: int) -> dict[str, Any] | None:
        """The version a line of ``run`` recorded, if it recorded one."""
        for h in self.query(f"ACCOUNT-HISTORY#{tenant}#{account_id}"):
            if h.get("run") == run and h.get("line") == line:
                return h
        return None

    def accounts_ever_on(self, tenant: str, parcel_id: str) -> set[str]:
        """The accounts recorded on the parcel in any version (``PARCEL-ACCOUNTS#``; versions
        recorded before those items existed are not there: callers add the accounts on it now)."""
        links = self.query(f"PARCEL-ACCOUNTS#{tenant}", prefix=f"{parcel_id}#")
        return {str(i["account_id"]) for i in links if i.get("parcel_id") == parcel_id}

    def accounts(self, tenant: str) -> list[AccountRecord]:
        return [account_of(i) for i in self.query(f"ACCOUNTS#{tenant}")]

    def accounts_between(self, tenant: str, first: str, last: str) -> list[AccountRecord]:
        return [account_of(i) for i in self.query(f"ACCOUNTS#{tenant}", between=(first, last))]

    def accounts_of(self, tenant: str, ids: Iterable[str]) -> dict[str, AccountRecord]:
        """The current records of these accounts of the tenant (one BatchGetItem per 100),
        by account id; an id with no account is left out."""
        found = self.get_many([(f"ACCOUNTS#{tenant}", i) for i in dict.fromkeys(ids)])
        return {sk: account_of(item) for (_, sk), item in found.items()}

    def account(self, tenant: str, account_id: str) -> AccountRecord | None:
        item = self.get(f"ACCOUNTS#{tenant}", account_id)
        return account_of(item) if item else None

    def account_history(self, tenant: str, account_id: str) -> list[dict[str, Any]]:
        return sorted(self.query(f"ACCOUNT-HISTORY#{tenant}#{account_id}"), key=lambda i: i["recorded_at"])

    def account_as_of(self, tenant: str, account_id: str, at: datetime) -> AccountRecord | None:
        """The version of the account in force at ``at`` (the last recorded by then), or
        None when none was recorded by then."""
        times = [
            (datetime.fromisoformat(h["recorded_at"]), h) for h in self.account_history(tenant, account_id)
        ]
        kept = [(t, h) for t, h in times if t <= at]
        return account_of(max(kept, key=lambda th: th[0])[1]) if kept else None

    def existing_accounts(self, tenant: str, ids: Iterable[str]) -> set[str]:
        found = self.get_many([(f"ACCOUNTS#{tenant}", i) for i in dict.fromkeys(ids)])
        return {sk for _, sk in found}

    # --- bills and ledger ----------------------------------------------------------------
    def bills_between(self, tenant: str, first: str, last: str) -> list[Bill]:
        return [bill_of(i) for i in self.accounts_range(f"BILLS#{tenant}", first, last)]

    def bills_of(self, tenant: str, account_id: str) -> list[Bill]:
        return [bill_of(i) for i in self.query(f"BILLS#{tenant}", prefix=f"{account_id}#")]

    def all_bills(self, tenant: str) -> list[Bill]:
        return [bill_of(i) for i in self.query(f"BILLS#{tenant}")]

    # A ledger is the bills' entries (derived from their lines) and the entry items.
    def entries_between(
        self, tenant: str, first: str, last: str, bills: Sequence[Bill] | None = None
    ) -> list[Entry]:
        bills = self.bills_between(tenant, first, last) if bills is None else bills
        stored = [entry_of(i) for i in self.accounts_range(f"LEDGER#{tenant}", first, last)]
        return [e for b in bills for e in b.entries()] + stored

    def entries_of(self, tenant: str, account_id: str, bills: Sequence[Bill] | None = None) -> list[Entry]:
        """The account's ledger; ``bills``, the account's bills when the caller has read them
        already (their entries derive from them: the bills are not read twice)."""
        stored = [entry_of(i) for i in self.query(f"LEDGER#{tenant}", prefix=f"{account_id}#")]
        bills = self.bills_of(tenant, account_id) if bills is None else bills
        return [e for b in bills for e in b.entries()] + stored

    def all_entries(self, tenant: str, bills: Sequence[Bill] | None = None) -> list[Entry]:
        bills = self.all_bills(tenant) if bills is None else bills
        return [e for b in bills for e in b.entries()] + [entry_of(i) for i in self.query(f"LEDGER#{tenant}")]

    def marks(self, tenant: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for i in self.query(f"MARKS#{tenant}"):
            account, mark = i["sk"].split("#", 1)
            out.setdefault(account, set()).add(mark)
        return out

    def marks_of(self, tenant: str, account_id: str) -> set[str]:
        return {i["sk"].split("#", 1)[1] for i in self.query(f"MARKS#{tenant}", prefix=f"{account_id}#")}

    @staticmethod
    def mark_item(tenant: str, account_id: str, mark: str, now: datetime) -> dict[str, Any]:
        return {"pk": f"MARKS#{tenant}", "sk": f"{account_id}#{mark}", "recorded_at": now.isoformat()}

    def write_issued(
        self, bills: Sequence[Bill], notices: Sequence[dict[str, Any]], *, now: datetime, mark: bool = True
    ) -> int:
        """One item per bill: its entries derive from it and its stream INSERT publishes its
        BillIssued (packed in a BillsIssued chunk), so a bill, its entries and its event are
        never apart (crash-safe).

        ``mark=False``: the tenant is not marked pending for the assessment here; the caller
        marks it once after all its parts (``assessment_inputs_changed`` with the accounts),
        as a cycle's chunk does after its last part (one mark a chunk, not one per part). The
        bills' accounts' ``ASSESSDUE#`` entries are written first either way (issue 31)."""
        at = now.isoformat()
        items = [bill_item(b, at, n) for b, n in zip(bills, notices, strict=True)]
        if mark:
            return self.write(items)
        due = self._due_items((i["pk"], i["sk"]) for i in items)
        return Store.write(self, due + items) - len(due)

    def write_entries(
        self,
        entries: Sequence[Entry],
        *,
        extra: Sequence[dict[str, Any]] = (),
        events: Sequence[Event] = (),
        now: datetime,
        assessing: bool = False,
    ) -> int:
        at = now.isoformat()
        return self.write(
            [entry_item(e, at) for e in entries] + list(extra) + [outbox_item(ev, now=now) for ev in events],
            assessing=assessing,
        )

    # --- projections ---------------------------------------------------------------------
    def usage_between(self, tenant: str, start: date, end: date, first: str, last: str) -> dict[str, Usage]:
        pk = f"USAGE#{tenant}#{start.isoformat()}#{end.isoformat()}"
        return {i["sk"]: usage_of(i) for i in self.query(pk, between=(first, last))}

    def erus(
        self, tenant: str, parcels: Iterable[str], end: date, start: date | None = None
    ) -> dict[str, Eru]:
        """Each parcel's ERU in force at ``end``; with ``start``, with the parts of
        ``[start, end)`` when it changed inside (X-PERIOD, ``eru_over``)."""
        found = self.get_many([(f"ERU#{tenant}", p) for p in dict.fromkeys(parcels)])
        out: dict[str, Eru] = {}
        for (_, parcel), item in found.items():
            dets = [
                {**d, "breakdown": json.loads(d.get("breakdown") or "{}")}
                for d in (item.get("determinations") or {}).values()
            ]
            credits = (item.get("credits") or {}).values()
            eru = eru_in_force(dets, credits, end) if start is None else eru_over(dets, credits, start, end)
            if eru is not None:
                out[parcel] = eru
        return out

    def strength_between(
        self, tenant: str, first: str, last: str, start: date, end: date
    ) -> dict[str, Strength]:
        out: dict[str, Strength] = {}
        for item in self.query(f"STRENGTH#{tenant}", between=(first, last)):
            classified = [
                {
                    **c,
                    "basis": json.loads(c.get("basis") or "null"),
                    "violation_days": json.loads(c.get("violation_days") or "[]"),
                }
                for c in (item.get("classified") or {}).values()
            ]
            out[item["sk"]] = strength_in_force(classified, start, end)
        return out

    def charges_between(self, tenant: str, first: str, last: str) -> dict[str, list[Charge]]:
        out: dict[str, list[Charge]] = {}
        for i in self.accounts_range(f"CHARGES#{tenant}", first, last):
            out.setdefault(i["account_id"], []).append(
                Charge(
                    i["charge_id"],
                    i["rule_id"],
                    i["description"],
                    Decimal(i["amount"]),
                    date.fromisoformat(i["charged_on"]),
                    i.get("source_event_id", ""),
                    json.loads(i["derivation"]) if i.get("derivation") else {},
                )
            )
        return out

    def held_between(self, tenant: str, first: str, last: str) -> list[Held]:
        return [h for h in self.held(tenant, between=(first, last + "#\uffff"))]

    def held(self, tenant: str, between: tuple[str, str] | None = None) -> list[Held]:
        return [
            Held(
                i["sk"].split("#", 1)[0],
                date.fromisoformat(i["period_start"]),
                date.fromisoformat(i["period_end"]),
                i["reason"],
                str(i.get("who") or ""),
            )
            for i in self.query(f"HELD#{tenant}", between=between)
        ]

    @staticmethod
    def held_item(tenant: str, h: Held, now: datetime) -> dict[str, Any]:
        return {
            "pk": f"HELD#{tenant}",
            "sk": f"{h.account_id}#{h.period_start.isoformat()}",
            "period_start": h.period_start.isoformat(),
            "period_end": h.period_end.isoformat(),
            "reason": h.reason,
            "who": h.who,
            "recorded_at": now.isoformat(),
        }


def usage_of(i: dict[str, Any]) -> Usage:
    """A kept consumption item (``USAGE#...``) as the domain's ``Usage``."""
    return Usage(
        Decimal(str(i["volume_gal"])),
        bool(i.get("estimated", False)),
        i.get("source_event_id", ""),
        Decimal(str(i["winter_average_gal"])) if i.get("winter_average_gal") is not None else None,
        str(i.get("quality") or "actual"),
        _kept_reads(i),
    )


def _kept_reads(item: dict[str, Any]) -> tuple[BilledRead, ...]:
    """The meter reads behind a kept consumption: metering's ``reads_used`` and ``meters``
    when the consumption item holds them (a list, or its JSON text); none otherwise (the
    bill then shows the consumption and its quality alone)."""

    def listed(name: str) -> list[dict[str, Any]]:
        raw = item.get(name)
        value = json.loads(raw) if isinstance(raw, str) else raw
        return list(value) if isinstance(value, list) else []

    reads = listed("reads_used")
    if not reads:
        return ()
    return reads_behind(
        Decimal(str(item["volume_gal"])),
        str(item.get("quality") or "actual"),
        bool(item.get("estimated", False)),
        reads,
        listed("meters"),
    )
