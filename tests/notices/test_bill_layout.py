"""Issue 34: bills that read like a utility's. Four bills (residential, stormwater, the
combined Pleasant Prairie bill and a bill with a 120-character name and a 200-character
charge description) are rendered, each page written as a PNG to tests/artifacts for a person
to look at, and their text read back with its position: nothing runs past the right margin,
and no two strings overprint (each column's text stays in its box)."""

from __future__ import annotations

import io
import shutil
import subprocess
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from pp_bills import SEWER, STORMWATER, pp_bill
from pypdf import PdfReader
from reportlab.pdfbase.pdfmetrics import stringWidth

from notices.app.planning import plan_bill, trigger
from notices.domain import bill_terms, combined
from notices.domain.combined import HeldBill
from notices.domain.documents import BillDocument, BillLine, CombinedBillDocument, MeterRead, UsagePoint
from notices.rendering import HEIGHT, MARGIN, WIDTH, bill_pdf, utilities

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
ROOT = Path(__file__).resolve().parents[2]
NAME_120 = (
    "Bartholomew Fitzgerald-Montgomery III and Wilhelmina Esperanza Castellanos-Ruiz, Trustees of the Hi"
    + "x" * 20
)[:120]
DESCRIPTION_200 = (
    "High strength surcharge for biochemical oxygen demand above the normal domestic strength "
    "limit, pounds computed per X-POUNDS from the composite sample results of the quarter and "
    "the metered flow volume"
)[:200]


@dataclass(frozen=True)
class Run:
    """One string as printed: where it starts and ends on the page, its baseline and size."""

    page: int
    text: str
    x0: float
    x1: float
    y: float
    size: float

    def overlaps(self, other: Run) -> bool:
        if self.page != other.page:
            return False
        dx = min(self.x1, other.x1) - max(self.x0, other.x0)
        below, above = 0.2, 0.7  # descent and cap height, as parts of the size
        dy = min(self.y + above * self.size, other.y + above * other.size) - max(
            self.y - below * self.size, other.y - below * other.size
        )
        return dx > 0.5 and dy > 0.5


FONTS = {"Helvetica": "Helvetica", "Helvetica-Bold": "Helvetica-Bold", "Courier": "Courier"}


def _product(a: list[float], b: list[float]) -> list[float]:
    """The PDF matrix product a x b of [a b c d e f] matrices."""
    return [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]


class _Text:
    """The text state of one page while its content stream is read."""

    def __init__(self, page: int, fonts: dict[str, str], found: list[Run]) -> None:
        self.page, self.fonts, self.found = page, fonts, found
        self.ctm: list[float] = [1.0, 0, 0, 1, 0, 0]
        self.stack: list[list[float]] = []
        self.tm: list[float] = [1.0, 0, 0, 1, 0, 0]
        self.line: list[float] = self.tm
        self.font, self.size, self.leading = "Helvetica", 10.0, 0.0

    def show(self, text: str) -> None:
        font = FONTS[self.font]
        at = _product(self.tm, self.ctm)
        stripped = text.strip(" ")
        if stripped:
            x0 = at[4] + stringWidth(text[: len(text) - len(text.lstrip(" "))], font, self.size) * at[0]
            x1 = x0 + stringWidth(stripped, font, self.size) * at[0]
            self.found.append(Run(self.page, stripped, x0, x1, at[5], self.size * at[3]))
        width = stringWidth(text, font, self.size)
        self.tm = [*self.tm[:4], self.tm[4] + width * self.tm[0], self.tm[5] + width * self.tm[1]]

    def move(self, dx: float, dy: float) -> None:
        self.line = self.tm = _product([1, 0, 0, 1, dx, dy], self.line)

    def operate(self, operands: list[Any], op: bytes) -> None:
        values = [float(v) for v in operands if isinstance(v, int | float)]
        if op == b"q":
            self.stack.append(self.ctm)
        elif op == b"Q":
            self.ctm = self.stack.pop()
        elif op == b"cm":
            self.ctm = _product(values, self.ctm)
        elif op == b"BT":
            self.line = self.tm = [1.0, 0, 0, 1, 0, 0]
        elif op == b"Tf":
            self.font, self.size = self.fonts[str(operands[0])], float(operands[1])
        elif op == b"TL":
            self.leading = values[0]
        elif op == b"Tm":
            self.line = self.tm = values
        elif op in (b"Td", b"TD"):
            self.move(values[0], values[1])
            if op == b"TD":
                self.leading = -values[1]
        elif op in (b"T*", b"'"):
            self.move(0, -self.leading)
            if op == b"'":
                self.show(str(operands[0]))
        elif op == b"Tj":
            self.show(str(operands[0]))
        elif op == b"TJ":
            self.show("".join(str(part) for part in operands[0] if isinstance(part, str)))


def runs(data: bytes) -> list[Run]:
    """Every string shown on each page, placed by reading the page's content stream
    (q/Q/cm, BT/Tf/TL/Tm/Td/TD/T*, Tj/'/TJ: what reportlab writes) and measured with the
    font's metrics."""
    from pypdf.generic import ContentStream

    found: list[Run] = []
    reader = PdfReader(io.BytesIO(data))
    for number, page in enumerate(reader.pages):
        fonts = {str(k): str(v.get_object()["/BaseFont"])[1:] for k, v in page["/Resources"]["/Font"].items()}
        state = _Text(number, fonts, found)
        for operands, op in ContentStream(page.get_contents(), reader).operations:
            state.operate(operands, op)
    return found


def assert_laid_out(data: bytes) -> list[Run]:
    printed = runs(data)
    assert printed
    for run in printed:
        assert run.x1 <= WIDTH - MARGIN + 0.5, f"past the right margin: {run}"
        assert run.x0 >= MARGIN - 0.5, f"before the left margin: {run}"
        assert 0 < run.y < HEIGHT - MARGIN + 1, f"off the page: {run}"
    clashes = [(a, b) for i, a in enumerate(printed) for b in printed[i + 1 :] if a.overlaps(b)]
    assert not clashes, f"overprinted: {clashes[:3]}"
    return printed


def write_pngs(data: bytes, name: str, tmp_path: Path) -> list[Path]:
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (Debian poppler-utils) is not installed; `make test` installs it")
    source = tmp_path / f"{name}.pdf"
    source.write_bytes(data)
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob(f"{name}-*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "70", str(source), str(ARTIFACTS / name)], check=True)
    pngs = sorted(ARTIFACTS.glob(f"{name}-*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    return pngs


class NoHistory:
    def remember_bill(self, *args: Any) -> list[UsagePoint]:
        return []

    def remember_owner(self, *args: Any) -> None: ...

    def remember_bill_number(self, *args: Any) -> None: ...

    def annual_notice_due(self, *args: Any) -> bool:
        return False


def pp_document(tenant: str, account: str, **kwargs: Any) -> BillDocument:
    planned = plan_bill(pp_bill(tenant, account, **kwargs), NoHistory(), None)  # type: ignore[arg-type]
    assert planned.bill is not None
    return planned.bill


def monthly_usage(last: date, months: int = 13) -> tuple[UsagePoint, ...]:
    points = []
    for back in range(months):
        month = last.year * 12 + last.month - 1 - back
        points.append(
            UsagePoint(
                period_start=date(month // 12, month % 12 + 1, 1), volume_gal=Decimal(3000 + 150 * back)
            )
        )
    return tuple(reversed(points))


def combined_document() -> CombinedBillDocument:
    sewer = pp_bill(SEWER, "S-1")
    storm = pp_bill(STORMWATER, "W-1")
    bills = []
    for event in (sewer, storm):
        planned = plan_bill(event, NoHistory(), None)  # type: ignore[arg-type]
        assert planned.bill is not None
        document = planned.bill
        if event.tenant == SEWER:
            # 4,000 gal: 125,400 - 121,400 on the sewer meter.
            read = MeterRead(
                meter_id="PP-M-77",
                previous_read_on=date(2026, 9, 1),
                previous_reading="121400",
                present_read_on=date(2026, 10, 1),
                present_reading="125400",
                consumption_gal=Decimal("4000"),
            )
            document = document.model_copy(
                update={"usage": monthly_usage(document.period_start), "reads": (read,)}
            )
        bills.append(
            HeldBill(document=document, recipient=planned.requests[0].recipient, trigger=trigger(event))
        )
    return combined.combined_document(bills)


def long_bill(grafton_bill: BillDocument) -> BillDocument:
    return grafton_bill.model_copy(
        update={
            "customer_name": NAME_120,
            "mailing_lines": (
                "Attn: Accounts Payable Department, Building C, Suite 4100, 12345 North Port Washington Road",
                "Grafton, WI 53024-0000",
            ),
            "service_address": "N12345 County Highway W at the corner of Falls Road and Lakefield Road, Unit 17B, Grafton WI",
            "lines": (
                *grafton_bill.lines,
                BillLine(
                    rule_id="GR-HIGH",
                    description=DESCRIPTION_200,
                    quantity=Decimal("9.59675"),
                    unit="lb",
                    rate=Decimal("0.45"),
                    amount=Decimal("4.32"),
                ),
            ),
            "total": grafton_bill.total + Decimal("4.32"),
            "amount_due": grafton_bill.amount_due + Decimal("4.32"),
        }
    )


def test_a_residential_bill_reads_like_a_utilitys(grafton_bill: BillDocument, tmp_path: Path) -> None:
    past_due = grafton_bill.model_copy(
        update={"previous_balance": Decimal("60.00"), "amount_due": Decimal("244.50")}
    )
    data = bill_pdf(past_due)
    text = " ".join(r.text for r in assert_laid_out(data))
    assert "Service period July 1, 2026 through September 30, 2026" in text
    assert "end exclusive" not in text and "2026-" not in text
    assert "Due date November 1, 2026" in text
    # GR-LATE: 3% of this bill's 194.50 = 5.84, from 20 days after issue but never before the due date.
    assert "A late charge of $5.84 applies if paid after November 1, 2026." in text
    assert "PAST DUE $50.00" in text
    assert "Message from Village of Grafton Sewer Utility" in text
    assert "GR-1001 0000024450" in text  # the scan line under its barcode
    assert "446 gal a day this period" in text  # 41,000 gal over 92 days
    write_pngs(data, "bill-residential", tmp_path)


def test_a_stormwater_bill_shows_its_parcel_and_eru_basis_not_meter_reads(tmp_path: Path) -> None:
    document = pp_document(STORMWATER, "W-1")
    data = bill_pdf(document)
    text = " ".join(r.text for r in assert_laid_out(data))
    assert "Parcel" in text and "PP-91-4-122-0100" in text
    assert "Impervious area" in text and "1.00 ERU" in text
    assert "Meter reads" not in text and "Usage, last 13 periods" not in text
    assert "Service period September 1, 2026 through September 30, 2026" in text
    # PP-CWU-PENALTY: 1% a month of the 8.00 due, delinquent 30 days after the bill date.
    assert (
        "A late charge of $0.08 (and each month it stays unpaid) applies if paid after October 31, 2026."
        in text
    )
    write_pngs(data, "bill-stormwater", tmp_path)


def test_the_combined_bill_has_each_utilitys_section_complete_and_no_fund_codes(tmp_path: Path) -> None:
    data = bill_pdf(combined_document())
    printed = assert_laid_out(data)
    text = " ".join(r.text for r in printed)
    assert "Meter reads" in text and "Usage, last 13 periods" in text  # the sewer section
    assert "09/01/2026 121400" in text and "4,000 gal" in text
    assert "Your parcel and its stormwater charge" in text  # the stormwater section
    assert "Fund" not in [r.text for r in printed] and " om" not in text
    assert "Funds of Village of Pleasant Prairie Sewer Utility: operation and maintenance $32.06" in text
    assert "S-1 0000003206" in text and "W-1 0000000800" in text
    write_pngs(data, "bill-combined", tmp_path)


def test_a_long_name_address_and_description_wrap_within_their_columns(
    grafton_bill: BillDocument, tmp_path: Path
) -> None:
    data = bill_pdf(long_bill(grafton_bill))
    printed = assert_laid_out(data)
    text = " ".join(r.text for r in printed)
    assert " ".join(NAME_120.split()) in text  # the whole name, wrapped, nothing cut
    assert " ".join(DESCRIPTION_200.split()) in text
    assert "9.60 lb" in text  # 9.59675 lb printed to the hundredth
    write_pngs(data, "bill-long-name", tmp_path)


def test_quantities_print_as_the_tariff_bills_them_while_the_document_keeps_them_whole() -> None:
    assert bill_terms.display_quantity(Decimal("588.331"), "kgal") == "588.33 kgal"
    assert bill_terms.display_quantity(Decimal("4"), "kgal") == "4 kgal"
    assert bill_terms.display_quantity(Decimal("9.59675"), "lb") == "9.60 lb"
    assert bill_terms.display_quantity(Decimal("1.00"), "ERU") == "1.00 ERU"
    assert bill_terms.display_quantity(Decimal("23000"), "gal") == "23,000 gal"
    line = BillLine(
        rule_id="GR-VOL", description="Volume", quantity=Decimal("588.331"), unit="kgal", amount=Decimal("1")
    )
    assert line.quantity == Decimal("588.331")


@pytest.mark.parametrize("tenant", ["grafton-sewer", "sullivan-sewer", "pleasant-prairie-stormwater"])
def test_the_late_charge_line_states_the_tenants_tariff(tenant: str) -> None:
    """utilities.json restates each tariff's late charge for the bill's line: they agree."""
    stated = bill_terms.LateChargeRule.of(utilities()[tenant]["late_charge"])
    assert stated is not None
    tariff = yaml.safe_load(next((ROOT / "infra" / "tariffs" / tenant).glob("*.yaml")).read_text())
    if "late_charge" in tariff:
        late = tariff["late_charge"]
        assert (stated.rule, stated.percent, stated.after_days) == (
            late["rule"],
            Decimal(late["percent"]),
            late["after_days"],
        )
        assert stated.minimum == Decimal(late.get("minimum", "0"))
        assert stated.per_month == bool(late.get("per_month", False))
    else:  # PP-CWU: the delinquency penalty
        assert stated.rule == "PP-CWU-PENALTY"
        assert stated.percent == Decimal(tariff["penalty_percent_per_month"]["value"])
        assert stated.after_days == tariff["delinquent_after_days"]["value"]


def test_a_bill_of_many_lines_goes_on_over_pages_each_headed_and_laid_out(
    grafton_bill: BillDocument, tmp_path: Path
) -> None:
    lines = tuple(
        BillLine(
            rule_id=f"SU-USE-{i}",
            description=f"Sewer use charge, meter {i}" + " and its long description" * (i % 4),
            quantity=Decimal("12.3456"),
            unit="kgal",
            rate=Decimal("7.25"),
            amount=Decimal("89.51"),
        )
        for i in range(40)
    )
    many = grafton_bill.model_copy(
        update={
            "tenant": "sullivan-sewer",
            "lines": lines,
            "annual_notice": "Sewer use 7.25 per 1,000 gallons; 62% of it is for wastewater treatment.",
        }
    )
    data = bill_pdf(many)
    printed = assert_laid_out(data)
    assert max(r.page for r in printed) >= 1  # more than one page
    text = " ".join(r.text for r in printed)
    assert "Village of Sullivan Sewer Utility, bill GR-2026Q3-000001, continued: page 2" in text
    assert text.count("12.35 kgal") == 40
    assert (
        "Annual rate notice (SU-ANNUAL-NOTICE)" in text
        and "Message from Village of Sullivan Sewer Utility" in text
    )
    write_pngs(data, "bill-many-lines", tmp_path)
