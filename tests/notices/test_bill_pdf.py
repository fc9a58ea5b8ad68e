"""The bill PDF holds what the bill says: every line, the totals and the due date, read back
from the PDF's text; a page is rendered to PNG as a test artifact for a person to look at."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from notices.domain.documents import BillDocument
from notices.domain.model import money
from notices.rendering import bill_pdf, merge_pdfs

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def test_the_bill_pdf_holds_every_line_total_and_due_date(grafton_bill: BillDocument) -> None:
    text = pdf_text(bill_pdf(grafton_bill))
    for line in grafton_bill.lines:
        assert line.rule_id in text
        assert money(line.amount) in text
    assert "Total of this bill" in text and "$194.50" in text
    assert "Total amount due" in text
    assert "Due date 2026-11-01" in text
    assert "Bill GR-2026Q3-000001" in text
    assert "1200 Wisconsin Ave, Grafton WI" in text  # service address
    assert "PO Box 12" in text  # mailing address
    assert "ESTIMATED" in text  # the estimated read is marked
    assert "REMITTANCE STUB" in text
    assert "Usage, last 13 periods" in text


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


def test_the_print_batch_keeps_the_order_it_is_given(grafton_bill: BillDocument) -> None:
    first = bill_pdf(grafton_bill)
    second = bill_pdf(grafton_bill.model_copy(update={"bill_id": "GR-2026Q3-000002"}))
    merged = PdfReader(io.BytesIO(merge_pdfs([first, second])))
    assert len(merged.pages) == 2
    assert "GR-2026Q3-000001" in merged.pages[0].extract_text()
    assert "GR-2026Q3-000002" in merged.pages[1].extract_text()
