"""Every file of the demo utility goes through the project's own readers with zero rejected
lines (issue 32): billing's accounts and lockbox parsers, metering's meters, reads and interval
use cases over an in-memory repository (the whole year, in day order, with the daily
estimation run), sampling's lab-file parser, stormwater's GIS readers; and every account rates
under the tariff in force through billing's own rating input."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pytest
from support import Utility  # tests/metering/support.py (conftest puts it on the path)

from billing.domain.accounts import AccountRecord, parse_account_file
from billing.domain.issuing import ChunkInputs, Usage, rating_input
from billing.domain.payments import parse_lockbox_file
from billing.domain.rating import RatingEngine
from billing.domain.septage import Disposal, Permit, Unit, charge_disposal, check_permit
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import TariffBook
from metering.events import SlugDetected
from sampling.domain.lab_files import parse_lab_file
from sampling.domain.strength import CLASSIFIED_TENANTS
from sewerbill.cli.whatif import classify_document
from sewerbill.demo.generator import (
    DEFAULT_SIZE,
    GR,
    PP,
    PPW,
    SU,
    TENANTS,
    DemoFile,
    DemoUtility,
    generate,
    lockbox_row,
)
from stormwater.domain.gis import ParcelRecord, Rejection, plan_extract
from stormwater.domain.gis_files import read_extract

START = date(2026, 12, 1)


@pytest.fixture(scope="module")
def book() -> TariffBook:
    return load_tariff_book(default_tariffs_dir())


@pytest.fixture(scope="module")
def demo(book: TariffBook) -> DemoUtility:
    return generate(DEFAULT_SIZE, 11, START, 12, book)


def of_kind(demo: DemoUtility, kind: str) -> Iterator[DemoFile]:
    return (f for f in demo.files if f.kind == kind)


def test_accounts_files_parse_with_no_rejected_line_and_every_account_rates(
    demo: DemoUtility, book: TariffBook
) -> None:
    latest: dict[tuple[str, str], AccountRecord] = {}
    for f in of_kind(demo, "accounts"):
        accepted, errors = parse_account_file(f.data(), TENANTS)
        assert errors == [], (f.key, errors[:3])
        latest.update({(a.tenant, a.account_id): a for _, a in accepted})
    assert len(latest) == demo.size
    engine = RatingEngine(book)
    rated = 0
    for (tenant, _), account in sorted(latest.items()):
        if tenant == PPW:
            continue  # rated from the stormwater service's ERU (events), not from the file
        start, end = demo.expected["tenants"][tenant]["periods"][0]
        inputs = ChunkInputs(
            tenant=tenant,
            period_start=date.fromisoformat(start),
            period_end=date.fromisoformat(end),
            bill_date=date.fromisoformat(end),
            accounts=[account],
            billed=frozenset(),
            usage={account.account_id: Usage(Decimal(4000))},
            erus={},
            strength={},
            history={},
            last_bill_dates={},
            total_recs=Decimal(500) if tenant == SU else None,
        )
        built = rating_input(inputs, account)
        assert not isinstance(built, str), (account.account_id, built)
        bill = engine.rate(built)  # raises naming the field when a size, zone or REC is not in the tariff
        assert bill.lines, account.account_id
        rated += 1
    assert rated == demo.size - demo.expected["accounts"][PPW]


def test_payment_intents_become_lockbox_files_that_parse_with_no_rejected_line(demo: DemoUtility) -> None:
    lines: dict[str, list[tuple[str, ...]]] = {t: [] for t in TENANTS}
    for intent in demo.payment_intents():
        bill_date = intent.period_end
        row = lockbox_row(intent, Decimal("123.45"), bill_date, bill_date + timedelta(days=20))
        if row is not None:
            lines[intent.tenant].append(row)
    for tenant, found in lines.items():
        assert found, tenant
        data = (
            "tenant,account_id,reference,paid_on,amount\n" + "".join(",".join(r) + "\n" for r in found)
        ).encode()
        today = max(date.fromisoformat(r[3]) for r in found)
        accepted, errors = parse_lockbox_file(data, TENANTS, today)
        assert errors == [] and len(accepted) == len(found), errors[:3]
        assert {p.amount for _, p in accepted} <= {Decimal("123.45"), Decimal("61.73")}


def test_the_year_of_meters_reads_and_interval_files_is_taken_in_with_no_rejected_line(
    demo: DemoUtility,
) -> None:
    """Metering's own use cases over the in-memory repository of its tests, file by file in
    day order, with the daily estimation run on every day in between: nothing rejected, and
    the rollover, the exchange, the estimate and its replacement come out as expected."""
    utility = Utility(today=START)
    metering = [f for f in demo.files if f.kind in ("meters", "reads", "interval")]
    last = max(f.on for f in metering)
    by_day: dict[date, list[DemoFile]] = {}
    for f in metering:
        by_day.setdefault(f.on, []).append(f)
    day = START
    while day <= last:
        utility.today = day
        for f in by_day.get(day, ()):
            data = f.data()
            if f.kind == "interval":
                result = utility.interval(data.decode(), now=datetime.combine(day, time(12), UTC))
            else:
                result = utility.upload(f.kind, data, key=f.key, chunk=65536)
            assert result.rejected == 0, (f.key, result.first_rejections[:3])
            assert result.accepted + result.changed > 0, f.key  # a meter removed is a changed record
        utility.estimate()  # the daily run (X-PERIOD), after the day's files
        day += timedelta(days=1)

    consumptions = utility.repo.consumptions
    for roll in demo.expected["rollovers"]:
        found = [
            c
            for k, c in consumptions.items()
            if k[1] == roll["account_id"] and k[2].isoformat() == roll["period_start"]
        ]
        assert found and "rollover" in found[0].flags, roll
    exchange = demo.expected["exchange"]
    on = date.fromisoformat(exchange["on"])
    exchanged = [c for k, c in consumptions.items() if k[1] == exchange["account_id"] and k[2] <= on < k[3]]
    assert exchanged and "exchange" in exchanged[0].flags
    [missed] = demo.expected["estimated"]
    key = (
        PP,
        missed["account_id"],
        date.fromisoformat(missed["period_start"]),
        date.fromisoformat(missed["period_end"]),
    )
    assert "estimate_replaced" in consumptions[key].flags  # estimated by the daily run, then replaced
    for tenant, per_period in demo.expected["bills_per_period"].items():
        if tenant == PPW:
            continue
        metered = {k[1] for k in consumptions if k[0] == tenant}
        assert metered, tenant
        for start, count in per_period.items():
            determined = sum(1 for k in consumptions if k[0] == tenant and k[2].isoformat() == start)
            unmetered = demo.expected["unmetered"][tenant]
            assert count - unmetered <= determined <= count, (tenant, start)
    slugs = [e for e in utility.repo.events if isinstance(e, SlugDetected)]
    assert [(s.meter_id, s.interval_start) for s in slugs] == [
        (x["meter_id"], x["interval_start"]) for x in demo.expected["interval"]["slugs"]
    ]


def test_lab_files_parse_with_no_rejected_line(demo: DemoUtility) -> None:
    samples = set()
    for f in of_kind(demo, "lab"):
        parsed = parse_lab_file(f.data(), today=f.on, tenants=CLASSIFIED_TENANTS)
        assert parsed.rejected == [] and parsed.repeated == 0, (f.key, parsed.rejected[:3])
        samples |= {(r.tenant, r.sample_id) for r in parsed.rows}
    assert len(samples) == demo.expected["lab"]["samples"]
    bod900 = [s for s in samples if s[0] == SU]
    assert bod900


def test_gis_extracts_read_with_no_rejection_and_hold_every_stormwater_parcel(demo: DemoUtility) -> None:
    parcels: dict[str, ParcelRecord] = {}
    for f in of_kind(demo, "gis"):
        found = list(read_extract(io.BytesIO(f.data()), f.key, tenants=(PPW,)))
        rejected = [r for r in found if isinstance(r, Rejection)]
        assert rejected == [], (f.key, rejected[:3])
        plan = plan_extract(found)
        assert not plan.conflicts and not plan.rejections
        parcels.update({r.parcel_id: r for r in found if isinstance(r, ParcelRecord)})
    assert len(parcels) == demo.expected["parcels"]["total"]
    assert parcels["PP-P-0001"].owner_name == "Olive Owner"
    assert sum(1 for p in parcels.values() if p.farmstead) == demo.expected["parcels"]["farmstead"]
    assert any(p.geometry for p in parcels.values())  # the GeoJSON features keep their geometry


def test_septage_permits_and_disposals_pass_billings_checks(demo: DemoUtility, book: TariffBook) -> None:
    permits = {}
    for call in demo.api_calls:
        if call.path.endswith("/septage/permits"):
            body = call.body
            permit = Permit(
                body["permit_id"],
                body["name"],
                body["address"],
                tuple(Unit(u["make"], u["model"], u["licence_number"]) for u in body["units"]),
                Decimal(body["insurance_amount"]),
                body.get("account_id"),
            )
            permits[permit.permit_id] = check_permit(permit)
    disposals = [c for c in demo.api_calls if c.path.endswith("/septage/disposals")]
    assert permits and disposals
    for call in disposals:
        b = call.body
        disposal = Disposal(
            b["reference"],
            b["permit_id"],
            b["licence_number"],
            Decimal(b["gallons"]),
            date.fromisoformat(b["disposed_on"]),
        )
        assert disposal.disposed_on == call.on
        line = charge_disposal(disposal, permits[disposal.permit_id], book.in_force(GR, disposal.disposed_on))  # type: ignore[arg-type]
        assert line["rule_id"] == "GR-SEPTAGE-CHARGE"


def test_the_lab_results_classify_as_expected_by_the_sampling_domain(
    demo: DemoUtility, book: TariffBook
) -> None:
    """The expected categories (PP-0004 back in A after 24 compliant months, PP-0005 in B,
    GR-0004 high strength) are what sampling's own classification makes of the lab files."""
    results: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for f in of_kind(demo, "lab"):
        for row in parse_lab_file(f.data(), today=f.on, tenants=CLASSIFIED_TENANTS).rows:
            sample = results.setdefault((row.tenant, row.account_id), {}).setdefault(
                row.sample_id, {"sampled_on": row.collected_on.isoformat()}
            )
            sample[row.parameter] = str(row.value)
    as_of = date.fromisoformat(demo.expected["generator"]["end"]) - timedelta(days=1)
    for want in demo.expected["lab"]["category"]:
        document = {
            "tenant": want["tenant"],
            "as_of": as_of.isoformat(),
            "results": list(results[(want["tenant"], want["account_id"])].values()),
        }
        got = classify_document(document, book)
        assert got["category"] == want["category"], (want, got)
        if "from" in want:
            assert got["since"] == want["from"], (want, got)
