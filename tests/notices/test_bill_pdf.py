"""The bill PDF holds what the bill says: every line, the totals and the due date, read back
from the PDF's text; a page is rendered to PNG as a test artifact for a person to look at."""

from __future__ import annotations

import io
import shutil
import subprocess
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from notices.domain.documents import BillDocument, MeterRead
from notices.domain.model import Recipient, money
from notices.domain.requests import bill_notice
from notices.rendering import bill_pdf, merge_pdfs, render, write_batch

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def pdf_rows(data: bytes) -> list[str]:
    """The PDF's text as laid out on the page, one printed row a line, spaces squeezed."""
    pages = PdfReader(io.BytesIO(data)).pages
    return [
        " ".join(line.split())
        for page in pages
        for line in page.extract_text(extraction_mode="layout").splitlines()
    ]


def test_the_bill_pdf_holds_every_line_total_and_due_date(grafton_bill: BillDocument) -> None:
    text = pdf_text(bill_pdf(grafton_bill))
    for line in grafton_bill.lines:
        assert line.rule_id in text
        assert money(line.amount) in text
    assert "Total of this bill" in text and "$194.50" in text
    assert "Total amount due" in text
    assert "Due date November 1, 2026" in text  # issue 34: US dates on the bill
    assert "Bill GR-2026Q3-000001" in text
    assert "1200 Wisconsin Ave, Grafton WI" in text  # service address
    assert "PO Box 12" in text  # mailing address
    assert "ESTIMATED" in text  # the estimated read is marked
    assert "REMITTANCE STUB" in text
    assert "Usage, last 13 periods" in text


def test_the_bill_pdf_shows_each_meters_previous_and_present_read_with_the_estimate_marked(
    grafton_bill: BillDocument,
) -> None:
    two_meters = grafton_bill.model_copy(
        update={
            "reads": (
                *grafton_bill.reads,
                # An actual read on a second meter: 5,120 - 5,000 = 120 gal.
                MeterRead(
                    meter_id="M-2",
                    previous_read_on=date(2026, 7, 2),
                    previous_reading="5000",
                    present_read_on=date(2026, 9, 30),
                    present_reading="5120",
                    quality="actual",
                    consumption_gal=Decimal("120"),
                ),
            )
        }
    )
    rows = pdf_rows(bill_pdf(two_meters))
    assert "Meter Previous read Present read Consumption Quality" in rows
    assert [row for row in rows if row.startswith("M-")] == [
        "M-1 07/01/2026 1000 10/01/2026 24000 23,000 gal ESTIMATED",
        "M-2 07/02/2026 5000 09/30/2026 5120 120 gal actual",
    ]


def test_without_register_readings_the_bill_shows_the_consumption_and_says_so(
    grafton_bill: BillDocument,
) -> None:
    # Billing kept only metering's volume and quality for the period: no meter or readings.
    kept = grafton_bill.model_copy(
        update={"reads": (MeterRead(quality="prorated", consumption_gal=Decimal("23000")),)}
    )
    rows = pdf_rows(bill_pdf(kept))
    assert "(meter not on file) - - 23,000 gal prorated" in rows
    text = pdf_text(bill_pdf(kept))
    assert "Register readings are not on file with billing for this period." in text


def test_a_bill_that_leaves_a_credit_says_credit_balance_and_nothing_due(grafton_bill: BillDocument) -> None:
    # Previous balance 10.00 + this bill 194.50 - payments 238.19 = -33.69: a credit of 33.69.
    credit = grafton_bill.model_copy(
        update={"payments_since": Decimal("238.19"), "amount_due": Decimal("-33.69")}
    )
    customer = Recipient(name="Ada", address_lines=("PO Box 12",), email="a@example.org", email_opt_in=True)
    email = render(bill_notice(credit, customer, "BillIssued#GR-1001#2026-07-01"))
    assert email.subject == "Your bill GR-2026Q3-000001: a credit balance of $33.69, nothing due"
    assert "A credit balance of $33.69, nothing due." in email.text
    assert "<strong>A credit balance of $33.69, nothing due</strong>." in email.html
    text = pdf_text(bill_pdf(credit))
    assert "Credit balance $33.69" in text and "Credit balance $33.69: nothing is due" in text
    for said in (email.subject, email.text, email.html, text):
        assert "-$33.69" not in said and "Total amount due" not in said


def test_the_sullivan_annual_rate_notice_is_printed_on_its_bill(grafton_bill: BillDocument) -> None:
    annual = grafton_bill.model_copy(
        update={
            "tenant": "sullivan-sewer",
            "annual_notice": "Sewer use 7.25 per 1,000 gallons; 62% of it is for wastewater treatment.",
        }
    )
    assert "62% of it is for wastewater treatment" in pdf_text(bill_pdf(annual)).replace("\n", " ")


def test_a_page_of_the_bill_renders_to_png_as_an_artifact(grafton_bill: BillDocument, tmp_path: Path) -> None:
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (Debian poppler-utils) is not installed; `make test` installs it")
    source = tmp_path / "bill.pdf"
    source.write_bytes(bill_pdf(grafton_bill))
    ARTIFACTS.mkdir(exist_ok=True)
    subprocess.run(
        ["pdftoppm", "-png", "-r", "60", "-singlefile", str(source), str(ARTIFACTS / "bill")], check=True
    )
    png = (ARTIFACTS / "bill.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000


def test_the_print_batch_keeps_the_order_it_is_given(grafton_bill: BillDocument, tmp_path: Path) -> None:
    first = bill_pdf(grafton_bill)
    second = bill_pdf(grafton_bill.model_copy(update={"bill_id": "GR-2026Q3-000002"}))
    batch = merge_pdfs([first, second, first])
    merged = PdfReader(io.BytesIO(batch), strict=True)  # a well-formed PDF, read strictly
    assert len(merged.pages) == 3
    assert "GR-2026Q3-000001" in merged.pages[0].extract_text()
    assert "GR-2026Q3-000002" in merged.pages[1].extract_text()
    assert "GR-2026Q3-000001" in merged.pages[2].extract_text()
    if shutil.which("pdfinfo") is not None:  # poppler reads it without a complaint too
        (tmp_path / "batch.pdf").write_bytes(batch)
        info = subprocess.run(
            ["pdfinfo", str(tmp_path / "batch.pdf")], capture_output=True, text=True, check=True
        )
        assert "Pages:           3" in info.stdout and info.stderr == ""


def test_the_print_batch_is_written_as_it_reads_each_letter(grafton_bill: BillDocument) -> None:
    # Streamed: the batch is on its way out before the last letter has been read.
    written_before_last: list[int] = []
    out = io.BytesIO()

    def letters() -> Iterator[bytes]:
        for number in range(1, 5):
            if number == 4:
                written_before_last.append(len(out.getvalue()))
            yield bill_pdf(grafton_bill.model_copy(update={"bill_id": f"GR-2026Q3-00000{number}"}))

    assert write_batch(letters(), out) == 4
    assert written_before_last[0] > 3 * 2000  # three letters' pages already written
    pages = PdfReader(io.BytesIO(out.getvalue()), strict=True).pages
    assert [f"GR-2026Q3-00000{n}" in pages[n - 1].extract_text() for n in range(1, 5)] == [True] * 4
