"""Notices benchmark (issue 13): bill PDFs and emails rendered per second, and the print batch.

Prints figures, asserts nothing (timed assertions are not tests). Run on one core:
``make bench`` pins it with taskset. ``BENCH_NOTICES`` sets the number of bills (10,000).

- render: for each bill, the email's subject/text/HTML (Jinja2) and the bill PDF (reportlab);
- print batch: the same bills' PDFs merged into one batch PDF (pypdf) with its ZIP-sorted
  manifest, as the daily batch does; time and file size;
- beside them, the raw cost of the same PDF work without content (an empty page per bill),
  measured in the same run, as the ratio the renderer costs over it.
"""

from __future__ import annotations

import os
import time
from datetime import date
from decimal import Decimal

from reportlab.lib.pagesizes import LETTER
from reportlab.pdfgen.canvas import Canvas

from notices.adapters.aws import manifest_csv
from notices.domain.documents import BillDocument, BillLine, UsagePoint
from notices.domain.model import Recipient
from notices.domain.requests import bill_notice
from notices.rendering import bill_pdf, merge_pdfs, render


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


def main() -> None:
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
    pdfs = []
    for doc in documents:
        render(bill_notice(doc, recipient, f"BillIssued#{doc.bill_id}"))
        pdfs.append(bill_pdf(doc))
    render_s = time.perf_counter() - started

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
    print(f"  mean bill PDF size: {sum(map(len, pdfs)) / n / 1024:.1f} KiB")
    print(
        f"  print batch of {n} letters: {batch_s:7.2f} s, batch PDF {len(batch) / 2**20:.1f} MiB, manifest {len(manifest) / 1024:.0f} KiB"
    )


if __name__ == "__main__":
    main()
