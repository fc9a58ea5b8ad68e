"""Notices benchmark (issue 13): bill PDFs and emails rendered per second, the service end to
end on the local runtime, and the print batch.

Prints figures, asserts nothing (timed assertions are not tests). Run on one core:
``make bench`` pins it with taskset. Each section runs in its own process, so its peak RSS
is its own (``python bench_notices.py render|runtime|batch`` runs one section).

- render (``BENCH_NOTICES`` bills, 10,000): for each bill, the email's subject/text/HTML
  (Jinja2) and the bill PDF (reportlab); beside it, the raw cost of an empty page per bill,
  measured in the same run, as the ratio the renderer costs over it;
- runtime (``BENCH_NOTICES_RUNTIME`` bills, 1,000): bills put on the local runtime's bus
  (moto server) as billing publishes them (``BillsIssued``, 200 bills an event), half for
  customers who opted in to email, until every
  notice is sent (emails through SES, letters into the day's mail) and logged; then the
  next morning's print batch of the letters, as the schedule runs it;
- batch (``BENCH_NOTICES_BATCH`` letters, 10,000): the print batch assembled from that many
  one-page letters, each read as the mail room hands it over, into one PDF written to a
  file (time, file size, peak RSS).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from reportlab.lib.pagesizes import LETTER
from reportlab.pdfgen.canvas import Canvas

from notices.adapters.aws import manifest_csv
from notices.domain.documents import BillDocument, BillLine, UsagePoint
from notices.domain.model import Recipient
from notices.domain.requests import bill_notice
from notices.rendering import bill_pdf, merge_pdfs, render, write_batch

ROOT = Path(__file__).resolve().parents[2]
BILLS_PER_EVENT = 200  # bills in one BillsIssued put on the bus (the runtime drains after each)


def bills(n: int) -> list[BillDocument]:
    out = []
    for i in range(n):
        gallons = Decimal(8000 + (i * 37) % 30000)
        kgal = gallons / 1000
        volume = (kgal * Decimal("6.50")).quantize(Decimal("0.01"))
        out.append(
            BillDocument(
                tenant="grafton-sewer",
                account_id=f"GR-{i:06d}",
                bill_id=f"GR-2026Q3-{i:06d}",
                period_start=date(2026, 7, 1),
                period_end=date(2026, 10, 1),
                bill_date=date(2026, 10, 1),
                due_date=date(2026, 11, 1),
                customer_name=f"Customer {i}",
                service_address=f"{i} Main St, Grafton WI",
                mailing_lines=(f"{i} Main St", "Grafton, WI 53024"),
                zip=f"530{i % 100:02d}",
                lines=(
                    BillLine(
                        rule_id="GR-SVC",
                        description="Quarterly service charge",
                        quantity=Decimal(1),
                        unit="quarter",
                        rate=Decimal("45.00"),
                        amount=Decimal("45.00"),
                    ),
                    BillLine(
                        rule_id="GR-VOL",
                        description="Volume charge",
                        quantity=kgal,
                        unit="kgal",
                        rate=Decimal("6.50"),
                        amount=volume,
                    ),
                ),
                total=Decimal("45.00") + volume,
                amount_due=Decimal("45.00") + volume,
                usage=tuple(
                    UsagePoint(period_start=date(2023 + m // 4, 3 * (m % 4) + 1, 1), volume_gal=gallons)
                    for m in range(13)
                ),
            )
        )
    return out


def blank_pdf() -> bytes:
    import io

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=LETTER, pageCompression=1, invariant=1)
    canvas.drawString(72, 720, "x")
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def render_section() -> None:
    n = int(os.environ.get("BENCH_NOTICES", "10000"))
    documents = bills(n)
    recipient = Recipient(
        name="Customer",
        address_lines=("1 Main St", "Grafton, WI 53024"),
        zip="53024",
        email="c@example.org",
        email_opt_in=True,
    )

    started = time.perf_counter()
    blanks = [blank_pdf() for _ in documents]
    raw_s = time.perf_counter() - started

    started = time.perf_counter()
    cpu_started = time.process_time()
    pdfs = []
    for doc in documents:
        render(bill_notice(doc, recipient, f"BillIssued#{doc.bill_id}"))
        pdfs.append(bill_pdf(doc))
    render_s = time.perf_counter() - started
    render_cpu = time.process_time() - cpu_started

    letters = [
        {
            "zip": d.zip,
            "name": d.customer_name,
            "address_lines": list(d.mailing_lines),
            "account_id": d.account_id,
            "rule": "N-BILL",
            "notice_id": d.bill_id,
            "pages_key": d.bill_id,
        }
        for d in documents
    ]
    started = time.perf_counter()
    letters.sort(key=lambda letter: (letter["zip"], letter["notice_id"]))
    by_id = {d.bill_id: pdf for d, pdf in zip(documents, pdfs, strict=True)}
    batch = merge_pdfs(by_id[letter["notice_id"]] for letter in letters)
    manifest = manifest_csv(letters)
    batch_s = time.perf_counter() - started
    del blanks

    print(f"notices benchmark, {n} bills, one process")
    print(
        f"  render (email text+HTML and bill PDF): {render_s:7.2f} s  {n / render_s:8.1f} notices/s  (target >= 100/s)"
    )
    print(
        f"  raw one-page PDF, same count:          {raw_s:7.2f} s  {n / raw_s:8.1f} pages/s   ratio {render_s / raw_s:.1f}x"
    )
    print(f"  render CPU {render_cpu:7.2f} s: {n / render_cpu:8.1f} notices per CPU second")
    print(f"  mean bill PDF size: {sum(map(len, pdfs)) / n / 1024:.1f} KiB")
    print(
        f"  print batch of {n} letters in memory: {batch_s:7.2f} s, batch PDF {len(batch) / 2**20:.1f} MiB, manifest {len(manifest) / 1024:.0f} KiB"
    )
    print(f"  peak RSS {peak_rss_mib():.0f} MiB")


def bill_issued_detail(i: int) -> dict[str, Any]:
    """A Grafton bill as billing publishes it (schema 2: with its meter read)."""
    account = f"GR-{i:06d}"
    gallons = 8000 + (i * 37) % 30000
    volume = (Decimal(gallons) / 1000 * Decimal("6.50")).quantize(Decimal("0.01"))
    total = Decimal("45.00") + volume
    return {
        "schema_version": 2,
        "event_id": f"bench-{account}",
        "occurred_at": "2026-10-01T12:00:00+00:00",
        "tenant": "grafton-sewer",
        "account_id": account,
        "bill_id": f"{account}-2026-07-01",
        "bill_number": f"GR-202607-{account}",
        "period_start": "2026-07-01",
        "period_end": "2026-10-01",
        "bill_date": "2026-10-01",
        "due_date": "2026-11-01",
        "lines": [
            {
                "rule_id": "GR-SVC",
                "description": 'Quarterly service charge, 5/8" meter',
                "quantity": "1",
                "unit": "quarter",
                "rate": "45.00",
                "amount": "45.00",
            },
            {
                "rule_id": "GR-VOL",
                "description": "Volume charge",
                "quantity": str(Decimal(gallons) / 1000),
                "unit": "kgal",
                "rate": "6.50",
                "amount": str(volume),
            },
        ],
        "total": str(total),
        "previous_balance": "0.00",
        "payments_since": "0.00",
        "amount_due": str(total),
        "estimated": False,
        "recipient": {
            "name": f"Customer {i}",
            "address": f"{i} Main St; Grafton, WI 530{i % 100:02d}",
            "email": f"c{i}@example.org",
            "email_opt_in": i % 2 == 0,
        },
        "owner": None,
        "parcel_id": f"GP-{i:06d}",
        "reads": [
            {
                "meter_id": f"M-{i:06d}",
                "previous_read_on": "2026-07-01",
                "previous_reading": "100000",
                "present_read_on": "2026-10-01",
                "present_reading": str(100000 + gallons),
                "quality": "actual",
                "estimated": False,
                "consumption_gal": str(gallons),
            }
        ],
    }


def runtime_section() -> None:
    from sewerbill.local import LocalRuntime

    n = int(os.environ.get("BENCH_NOTICES_RUNTIME", "1000"))
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2026, 10, 1, 13, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
    ) as rt:
        # Only notices works on what this benchmark sends (the other consumers of the bus
        # would otherwise share the one core).
        for source in (*rt.stack.queue_sources, *rt.stack.stream_sources):
            if not source.function.startswith("Notices"):
                source.enabled = False
        events = rt.client("events")
        bus = rt.resource("EventBus")
        rss_before = peak_rss_mib()
        began = time.perf_counter()
        cpu_began = time.process_time()
        # As billing publishes them: packed, a BillsIssued of BILLS_PER_EVENT bills an entry
        # (billing.adapters.bill_outbox packs a cycle's bills about 200 to an entry), the
        # runtime draining after each (the local runtime's SQS poller counts a queue's
        # messages on every poll, so a queue thousands deep would measure that instead).
        for start in range(0, n, BILLS_PER_EVENT):
            bills = [bill_issued_detail(i) for i in range(start, min(start + BILLS_PER_EVENT, n))]
            chunk = {
                "schema_version": 1,
                "event_id": f"bench-chunk-{start}",
                "occurred_at": "2026-10-01T12:00:00+00:00",
                "tenant": "grafton-sewer",
                "first_bill_id": bills[0]["bill_id"],
                "last_bill_id": bills[-1]["bill_id"],
                "bills": bills,
            }
            entry = {"Source": "sewerbill.billing", "DetailType": "BillsIssued", "EventBusName": bus}
            events.put_events(Entries=[{**entry, "Detail": json.dumps(chunk)}])
            rt.drain(max_seconds=3600)
        rt.drain(max_seconds=3600)
        sent_s = time.perf_counter() - began
        sent_cpu = time.process_time() - cpu_began
        table = rt.resource("NoticesTable")
        logged = sum(
            page["Count"]
            for page in rt.client("dynamodb")
            .get_paginator("scan")
            .paginate(
                TableName=table,
                FilterExpression="begins_with(pk, :p) AND #s = :sent",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":p": {"S": "NOTICE#"}, ":sent": {"S": "sent"}},
                Select="COUNT",
            )
        )
        began = time.perf_counter()
        cpu_began = time.process_time()
        rt.clock.advance(to=datetime(2026, 10, 2, 12, 0, tzinfo=UTC))
        batch_s = time.perf_counter() - began
        batch_cpu = time.process_time() - cpu_began
        s3 = rt.client("s3")
        head = s3.head_object(Bucket=rt.resource("MailBucket"), Key="batches/2026-10-01/batch.pdf")
        dead = rt.dead_letters
    print(f"notices on the local runtime (moto server), {n} bills in BillsIssued events, one process")
    print(
        f"  put on the bus {BILLS_PER_EVENT} bills an event; all sent and logged after {sent_s:7.2f} s: "
        f"{n / sent_s:6.1f} notices/s  (target >= 100/s)  [{logged} sent in the log, {len(dead)} dead letters]"
    )
    # CPU seconds of the whole process (moto server, the runtime and the handlers alike):
    # on a shared machine the wall clock measures the neighbours too.
    print(f"  CPU {sent_cpu:7.2f} s: {n / sent_cpu:6.1f} notices per CPU second")
    print(
        f"  next morning's print batch of {n - n // 2} letters: {batch_s:6.2f} s, "
        f"batch PDF {head['ContentLength'] / 2**20:.1f} MiB, CPU {batch_cpu:6.2f} s"
    )
    print(f"  peak RSS {peak_rss_mib():.0f} MiB (before the events: {rss_before:.0f} MiB)")


def batch_section() -> None:
    n = int(os.environ.get("BENCH_NOTICES_BATCH", "10000"))
    # A few distinct letters, handed over again and again (the mail room's get_object).
    letters = [bill_pdf(doc) for doc in bills(50)]
    rss_before = peak_rss_mib()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "batch.pdf"
        began = time.perf_counter()
        cpu_began = time.process_time()
        with target.open("wb") as out:
            pages = write_batch((letters[i % len(letters)] for i in range(n)), out)
        batch_s = time.perf_counter() - began
        batch_cpu = time.process_time() - cpu_began
        size = target.stat().st_size
    print(f"print batch of {n} one-page letters, streamed to a file")
    print(
        f"  {batch_s:7.2f} s ({n / batch_s:6.0f} letters/s; CPU {batch_cpu:6.2f} s), {pages} pages, batch PDF {size / 2**20:.1f} MiB; "
        f"peak RSS {peak_rss_mib():.0f} MiB (before: {rss_before:.0f} MiB)"
    )


SECTIONS = {"render": render_section, "runtime": runtime_section, "batch": batch_section}


def main() -> None:
    chosen = sys.argv[1:] or list(SECTIONS)
    if len(chosen) == 1:
        SECTIONS[chosen[0]]()
        return
    for name in chosen:  # each in its own process: its own peak RSS
        subprocess.run([sys.executable, __file__, name], check=True)


if __name__ == "__main__":
    main()
