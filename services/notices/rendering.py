"""Rendering notices: Jinja2 for email bodies (HTML escaped), reportlab for printed letters,
the bill PDF and the daily print batch.

Not domain code (it reads template files), but it does no I/O beyond that: every function
returns bytes or strings, and the adapters store or send them.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from reportlab.graphics.barcode.code128 import Code128
from reportlab.lib.pagesizes import LETTER
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from notices.domain import bill_terms
from notices.domain.documents import BillDocument, BillLine, CombinedBillDocument
from notices.domain.model import NoticeRequest, Rule, money
from notices.domain.requests import funds_text

TEMPLATES = Path(__file__).resolve().parent / "templates"
WIDTH, HEIGHT = LETTER
MARGIN = 54  # 3/4 inch
TEMPLATE_OF = {Rule.PP_LIEN: "TAXROLL", Rule.GR_TAXROLL: "TAXROLL"}
SPECIFIC = {
    "N-BILL",
    "N-BILL-COMBINED",
    "GR-OVERDUE",
    "GR-OVERDUE-WITHDRAWN",
    "PP-CWU-DELINQUENT",
    "TAXROLL",
    "PP-CWU-CREDIT-REVOKE",
}


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


@functools.cache
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=lambda name: name is not None and ".html" in name,
        undefined=StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
    )


@functools.cache
def utilities() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TEMPLATES / "utilities.json").read_text(encoding="utf-8"))
    return data


def utility(tenant: str) -> dict[str, Any]:
    found: dict[str, Any] = utilities()[tenant]
    return found


def render(request: NoticeRequest) -> Rendered:
    """Subject, plain text and HTML of a notice (HTML autoescaped: names are customer data)."""
    name = TEMPLATE_OF.get(request.rule, request.rule.value)
    if request.rule is Rule.BILL and request.content.get("combined"):
        name = "N-BILL-COMBINED"
    if request.rule is Rule.GR_OVERDUE and request.content.get("withdrawn"):
        name = "GR-OVERDUE-WITHDRAWN"
    if name not in SPECIFIC:
        name = "GENERIC"
    context = {
        "subject": request.subject,
        "rule": request.rule.value,
        "account_id": request.account_id,
        "recipient": request.recipient,
        "utility": utility(request.tenant),
        "all": utilities(),
        "c": request.content,
        "deadline": request.deadline.isoformat() if request.deadline else None,
        "dated": request.dated.isoformat() if request.dated else None,
    }
    env = _environment()
    text = env.get_template(f"{name}.txt.j2").render(context)
    html = env.get_template(f"{name}.html.j2").render(context)
    return Rendered(subject=request.subject, text=text, html=html)


# --- printed letters ------------------------------------------------------------------------


def _address_block(canvas: Canvas, request: NoticeRequest) -> None:
    """Sender top left, recipient where a #10 window envelope shows it."""
    info = utility(request.tenant)
    canvas.setFont("Helvetica-Bold", 11)
    canvas.drawString(MARGIN, HEIGHT - MARGIN, info["name"])
    canvas.setFont("Helvetica", 9)
    y = HEIGHT - MARGIN - 12
    for line in [*info["address"], f"Telephone {info['phone']}"]:
        canvas.drawString(MARGIN, y, line)
        y -= 11
    canvas.setFont("Helvetica", 10)
    y = HEIGHT - 2.1 * 72
    for line in (request.recipient.name, *request.recipient.address_lines):
        canvas.drawString(MARGIN + 18, y, line)
        y -= 12


def _wrap(text: str, width_chars: int = 95) -> Iterable[str]:
    for paragraph in text.splitlines():
        words = paragraph.split(" ")
        line = ""
        for word in words:
            if len(line) + len(word) + 1 > width_chars:
                yield line
                line = word
            else:
                line = f"{line} {word}" if line else word
        yield line


def letter_pdf(request: NoticeRequest, text: str) -> bytes:
    """A printable letter: address block for a window envelope, then the notice text."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=LETTER, pageCompression=1, invariant=1)
    canvas.setTitle(request.subject)
    _letter_pages(canvas, request, text)
    canvas.save()
    return out.getvalue()


def _letter_pages(canvas: Canvas, request: NoticeRequest, text: str) -> None:
    _address_block(canvas, request)
    y = HEIGHT - 3.3 * 72
    canvas.setFont("Helvetica", 10)
    for line in _wrap(text):
        if y < MARGIN:
            canvas.showPage()
            canvas.setFont("Helvetica", 10)
            y = HEIGHT - MARGIN
        canvas.drawString(MARGIN, y, line)
        y -= 13
    canvas.showPage()


# --- the bill ---------------------------------------------------------------------------------
#
# Every string whose length comes from data (names, addresses, descriptions, quantities) is
# drawn into a column box by ``_cell``: on one line when it fits (the common case), else
# wrapped to the box's width (reportlab's simpleSplit, a word too long for a line broken
# between characters), and the row grows to the tallest cell. Nothing is truncated and
# nothing runs into the next column.

CONTENT = WIDTH - 2 * MARGIN
FLOW_BOTTOM = 262  # the flow (reads, charges, totals) stays above the chart and the stub
CHART = (MARGIN, 150.0, 250.0, 76.0)  # x, y, width, height of the usage chart
MESSAGE_X = MARGIN + 280
STUB_LINE = 110
# The charge columns: (left offset, width, alignment); quantity, rate and amount right-aligned.
CHARGE_COLUMNS = (
    (0, 86, "left"),
    (90, 212, "left"),
    (306, 88, "right"),
    (398, 56, "right"),
    (458, 46, "right"),
)
READ_COLUMNS = (
    (0, 86, "Meter"),
    (90, 106, "Previous read"),
    (200, 106, "Present read"),
    (310, 96, "Consumption"),
    (410, 94, "Quality"),
)


def bill_pdf(doc: BillDocument | CombinedBillDocument) -> bytes:
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=LETTER, pageCompression=1, invariant=1)
    canvas.setTitle(f"Bill {doc.printed_number}")
    if isinstance(doc, CombinedBillDocument):
        draw_combined_bill(_BatchedText(canvas), doc)
    else:
        draw_bill(_BatchedText(canvas), doc)
    canvas.save()
    return out.getvalue()


class _BatchedText:
    """A canvas whose strings go into one PDF text object per page; lines, rectangles and
    the rest go to the canvas itself. (reportlab's ``drawString`` builds and closes a text
    object per call, the largest part of drawing a bill of some sixty strings.) Flowables
    (wrapped paragraphs, barcodes) draw on the canvas itself (``raw``)."""

    def __init__(self, canvas: Canvas) -> None:
        self._canvas = canvas
        self._text = canvas.beginText()
        self._font: tuple[str, float] = ("Helvetica", 10)
        self._text.setFont(*self._font)

    @property
    def raw(self) -> Canvas:
        return self._canvas

    def setFont(self, name: str, size: float) -> None:  # noqa: N802 - reportlab's name
        if (name, size) == self._font:
            return  # already in force: no second Tf
        self._font = (name, size)
        self._text.setFont(name, size)

    def drawString(self, x: float, y: float, text: str) -> None:  # noqa: N802
        self._text.setTextOrigin(x, y)
        self._text.textOut(text)

    def drawRightString(self, x: float, y: float, text: str) -> None:  # noqa: N802
        self.drawString(x - stringWidth(text, *self._font), y, text)

    def showPage(self) -> None:  # noqa: N802
        self._canvas.drawText(self._text)
        self._canvas.showPage()
        self._text = self._canvas.beginText()
        self._text.setFont(*self._font)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._canvas, name)


def _raw(canvas: Canvas) -> Canvas:
    raw: Canvas = getattr(canvas, "raw", canvas)
    return raw


@functools.lru_cache(maxsize=4096)
def _lines(text: str, font: str, size: float, width: float) -> tuple[str, ...]:
    """``text`` broken into lines no wider than ``width``: at spaces, and a word too long
    for a line of its own broken between characters (nothing is cut off)."""
    out: list[str] = []
    for line in simpleSplit(text, font, size, width) or [""]:
        while stringWidth(line, font, size) > width and len(line) > 1:
            cut = len(line) - 1
            while cut > 1 and stringWidth(line[:cut], font, size) > width:
                cut -= 1
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return tuple(out)


def _cell(
    canvas: Canvas,
    x: float,
    y: float,
    width: float,
    text: str,
    *,
    size: float = 8.5,
    bold: bool = False,
    align: str = "left",
) -> float:
    """``text`` in the box [x, x + width] with its first baseline at ``y``, wrapped within
    it; the height it takes (a line is ``size + 2`` points)."""
    font = "Helvetica-Bold" if bold else "Helvetica"
    lines = (text,) if stringWidth(text, font, size) <= width else _lines(text, font, size, width)
    canvas.setFont(font, size)
    for i, line in enumerate(lines):
        if align == "right":
            canvas.drawRightString(x + width, y - i * (size + 2), line)
        else:
            canvas.drawString(x, y - i * (size + 2), line)
    return len(lines) * (size + 2)


def _cell_height(width: float, text: str, size: float = 8.5, bold: bool = False) -> float:
    font = "Helvetica-Bold" if bold else "Helvetica"
    if stringWidth(text, font, size) <= width:
        return size + 2
    return len(_lines(text, font, size, width)) * (size + 2)


def _row(
    canvas: Canvas,
    y: float,
    cells: Sequence[tuple[float, float, str, str]],
    *,
    size: float = 8.5,
    bold: bool = False,
) -> float:
    """One table row of (left offset, width, text, alignment) cells; the y below it."""
    used = [
        _cell(canvas, MARGIN + x, y, width, text, size=size, bold=bold, align=align)
        for x, width, text, align in cells
        if text
    ]
    return y - max(used, default=size + 2) - 1


class _Flow:
    """The running y of a bill's body, with a new page when the next block does not fit."""

    def __init__(self, canvas: Canvas, y: float, continued: str, bottom: float = FLOW_BOTTOM) -> None:
        self.canvas = canvas
        self.y = y
        self.continued = continued  # heads each following page
        self.bottom = bottom
        self.page = 1

    def room(self, needed: float) -> None:
        if self.y - needed < self.bottom:
            self.canvas.showPage()
            self.page += 1
            top = HEIGHT - MARGIN
            text = f"{self.continued}, continued: page {self.page}"
            self.y = top - _cell(self.canvas, MARGIN, top, CONTENT, text, size=9, bold=True) - 10


def draw_bill(canvas: Canvas, doc: BillDocument) -> None:
    info = utility(doc.tenant)
    top = HEIGHT - MARGIN
    _cell(canvas, MARGIN, top, 300, info["name"], size=13, bold=True)
    y = top - 13
    for text in (", ".join(info["address"]), f"Telephone {info['phone']}"):
        y -= _cell(canvas, MARGIN, y, 240, text)
    _cell(
        canvas,
        WIDTH / 2,
        top,
        WIDTH / 2 - MARGIN,
        f"Bill {doc.printed_number}",
        size=11,
        bold=True,
        align="right",
    )
    right = [
        f"Account {doc.account_id}",
        f"Service period {bill_terms.period_text(doc.period_start, doc.period_end)}",
        f"Bill date {bill_terms.us_date(doc.bill_date)}",
        f"Due date {bill_terms.us_date(doc.due_date)}",
    ]
    y = top - 14
    for text in right:
        y -= _cell(canvas, MARGIN + 244, y, CONTENT - 244, text, size=9, align="right")

    below = _addresses(canvas, top, doc.customer_name, doc.mailing_lines, doc.service_address)
    flow = _Flow(canvas, min(top - 150, below - 8), f"{info['name']}, bill {doc.printed_number}")
    _past_due_box(flow, doc)
    if bill_terms.is_stormwater(doc):
        _stormwater_basis(flow, doc)
    else:
        _reads_table(flow, doc)
    _charges_table(flow, doc.lines)
    _totals(flow, doc)

    charted = not bill_terms.is_stormwater(doc)
    if charted:
        _usage_chart(canvas, doc, *CHART)
    _message_area(
        canvas, doc, x=MESSAGE_X if charted else MARGIN, width=CONTENT - 280 if charted else CONTENT
    )
    _remittance_stub(canvas, doc)
    canvas.showPage()


def _past_due_box(flow: _Flow, doc: BillDocument) -> None:
    unpaid = bill_terms.past_due(doc)
    if not unpaid:
        return
    text = (
        f"PAST DUE {money(unpaid)}: this part of your previous balance was not paid by its due date "
        "and is included in the amount due. Please pay it now."
    )
    height = _cell_height(CONTENT - 12, text, 9, True)
    flow.room(height + 14)
    canvas = flow.canvas
    canvas.saveState()
    canvas.setFillGray(0.9)
    canvas.rect(MARGIN, flow.y - height - 6, CONTENT, height + 12, stroke=1, fill=1)
    canvas.restoreState()
    _cell(canvas, MARGIN + 6, flow.y - 2, CONTENT - 12, text, size=9, bold=True)
    flow.y -= height + 20


def _reads_table(flow: _Flow, doc: BillDocument) -> None:
    """Meter reads, estimates marked."""
    canvas = flow.canvas
    flow.room(40)
    _cell(canvas, MARGIN, flow.y, CONTENT, "Meter reads", size=9, bold=True)
    flow.y -= 12
    if not doc.reads:
        flow.y = _row(
            canvas,
            flow.y,
            [(0, CONTENT, "No meter reads for this bill (flat or parcel-based charges).", "left")],
        )
    else:
        flow.y = _row(
            canvas, flow.y, [(x, w, title, "left") for x, w, title in READ_COLUMNS], size=8, bold=True
        )
    for read in doc.reads:
        cells = (
            read.meter_id or "(meter not on file)",
            _read_text(read.previous_read_on, read.previous_reading),
            _read_text(read.present_read_on, read.present_reading),
            bill_terms.display_quantity(read.consumption_gal, "gal"),
            "ESTIMATED" if read.estimated else read.quality,
        )
        flow.room(11)
        flow.y = _row(
            canvas,
            flow.y,
            [(x, w, cell, "left") for (x, w, _), cell in zip(READ_COLUMNS, cells, strict=True)],
        )
    if doc.reads and all(read.present_reading is None for read in doc.reads):
        flow.y = _row(
            canvas,
            flow.y,
            [(0, CONTENT, "Register readings are not on file with billing for this period.", "left")],
        )
    if doc.estimated:
        flow.y = _row(
            canvas,
            flow.y,
            [
                (
                    0,
                    CONTENT,
                    "E: this bill uses an estimated read; it is corrected when an actual read arrives.",
                    "left",
                )
            ],
        )
    flow.y -= 8


def _stormwater_basis(flow: _Flow, doc: BillDocument) -> None:
    """PP-CWU-ERU: what the charge is based on, where a metered bill shows its reads."""
    canvas = flow.canvas
    flow.room(50)
    _cell(canvas, MARGIN, flow.y, CONTENT, "Your parcel and its stormwater charge", size=9, bold=True)
    flow.y -= 12
    erus = bill_terms.eru(doc)
    impervious = (
        f"{doc.impervious_sqft:,.0f} sq ft"
        if doc.impervious_sqft is not None
        else "as determined by the Clean Water Utility"
    )
    rows = [
        ("Parcel", doc.parcel_id or "(not on file)"),
        ("Impervious area", impervious),
        (
            "Billed ERUs",
            f"{bill_terms.display_quantity(erus, 'ERU')}: 1 ERU is the runoff of the standard parcel "
            "(15,100 sq ft, 18.21% impervious)"
            if erus is not None
            else "no ERU charge on this bill",
        ),
    ]
    for label, value in rows:
        flow.room(11)
        flow.y = _row(canvas, flow.y, [(0, 86, label, "left"), (90, CONTENT - 90, value, "left")])
    flow.y -= 8


def _charges_table(flow: _Flow, lines: Sequence[BillLine]) -> None:
    """Rule, description, quantity x rate = amount."""
    canvas = flow.canvas
    titles = ("Rule", "Charge", "Quantity", "Rate", "Amount")
    flow.room(30)
    flow.y = _row(
        canvas,
        flow.y,
        [(x, w, t, a) for (x, w, a), t in zip(CHARGE_COLUMNS, titles, strict=True)],
        size=9,
        bold=True,
    )
    for line in lines:
        texts = (
            line.rule_id,
            line.description,
            bill_terms.display_quantity(line.quantity, line.unit) if line.quantity is not None else "",
            str(line.rate) if line.rate is not None else "",
            money(line.amount),
        )
        needed = max(_cell_height(w, t) for (_, w, _), t in zip(CHARGE_COLUMNS, texts, strict=True))
        if flow.y - needed < flow.bottom:
            flow.room(needed)
            flow.y = _row(
                canvas,
                flow.y,
                [(x, w, t, a) for (x, w, a), t in zip(CHARGE_COLUMNS, titles, strict=True)],
                size=9,
                bold=True,
            )
        flow.y = _row(
            canvas, flow.y, [(x, w, t, a) for (x, w, a), t in zip(CHARGE_COLUMNS, texts, strict=True)]
        )


def _totals(flow: _Flow, doc: BillDocument) -> None:
    canvas = flow.canvas
    late = bill_terms.late_charge(doc, bill_terms.LateChargeRule.of(utility(doc.tenant).get("late_charge")))
    flow.room(80 if late else 66)
    canvas.line(WIDTH - MARGIN - 200, flow.y + 7, WIDTH - MARGIN, flow.y + 7)
    closing = ("Credit balance", -doc.amount_due) if doc.credit else ("Total amount due", doc.amount_due)
    totals = [
        ("Total of this bill", doc.total),
        ("Previous balance", doc.previous_balance),
        ("Payments since last bill", -doc.payments_since),
        closing,
    ]
    for label, amount in totals:
        bold = label == closing[0]
        flow.y -= 2
        _cell(canvas, MARGIN + 200, flow.y, CONTENT - 300, label, size=9, bold=bold, align="right")
        _cell(canvas, WIDTH - MARGIN - 86, flow.y, 86, money(amount), size=9, bold=bold, align="right")
        flow.y -= 11
    flow.y -= 2
    flow.y -= _cell(canvas, MARGIN, flow.y, CONTENT, balance_text(doc), size=9, bold=True, align="right")
    if late is not None:
        flow.y -= _cell(canvas, MARGIN, flow.y, CONTENT, late.text(), size=8.5, align="right")


def balance_text(doc: BillDocument) -> str:
    """What the account owes after this bill: an amount due by the due date, or a credit."""
    if doc.credit:
        return f"Credit balance {money(-doc.amount_due)}: nothing is due"
    if doc.amount_due == 0:
        return "Nothing is due"
    return f"Amount due {money(doc.amount_due)}   Due {bill_terms.us_date(doc.due_date)}"


def _read_text(on: date | None, reading: str | None) -> str:
    if on is None and reading is None:
        return "-"
    return " ".join(part for part in (f"{on:%m/%d/%Y}" if on else "", reading or "") if part)


def _usage_chart(canvas: Canvas, doc: BillDocument, x: float, y: float, width: float, height: float) -> None:
    """Up to 13 periods of use: this period dark, the same period last year outlined, the
    rest grey; the average daily use of this period and of last year's above it."""
    points = doc.usage_last_13()
    _cell(canvas, x, y + height + 20, width, "Usage, last 13 periods (thousand gallons)", size=8, bold=True)
    current = bill_terms.current_use(doc)
    last_year = bill_terms.same_period_last_year(doc)
    days = bill_terms.period_days(doc)
    averages = []
    if current is not None:
        averages.append(f"{bill_terms.daily_use(current, days):,} gal a day this period")
    if last_year is not None:
        averages.append(f"{bill_terms.daily_use(last_year, days):,} same period last year")
    if averages:
        _cell(canvas, x, y + height + 10, width, "Average daily use: " + "; ".join(averages), size=7)
    canvas.line(x, y, x + width, y)
    if not points:
        _cell(canvas, x, y + 4, width, "No usage history yet.", size=7.5)
        return
    peak = max((p.volume_gal for p in points), default=0) or 1
    slot = width / 13
    canvas.setFont("Helvetica", 6)
    raw = _raw(canvas)
    raw.saveState()
    for i, point in enumerate(points):
        bar = float(point.volume_gal / peak) * height  # drawing only, never money
        left = x + i * slot + 2
        if point is current:
            raw.setFillGray(0)
            raw.rect(left, y, slot - 4, bar, stroke=0, fill=1)
        elif point is last_year:
            raw.setFillGray(0.85)
            raw.rect(left, y, slot - 4, bar, stroke=1, fill=1)
        else:
            raw.setFillGray(0.6)
            raw.rect(left, y, slot - 4, bar, stroke=0, fill=1)
        canvas.drawString(x + i * slot + 1, y - 8, point.period_start.strftime("%m/%y"))
        canvas.drawString(x + i * slot + 1, y + bar + 2, f"{point.volume_gal / 1000:.1f}")
    raw.restoreState()
    if current is not None or last_year is not None:
        legend = "Black: this period" + ("; outlined: same period last year" if last_year is not None else "")
        _cell(canvas, x, y - 17, width, legend, size=6.5)


def _message_area(canvas: Canvas, doc: BillDocument, *, x: float, width: float) -> None:
    """The utility's message (utilities.json ``message``) and, once a year on Sullivan's
    bills, the annual rate notice (SU-ANNUAL-NOTICE), in smaller type if they need it to
    fit their box."""
    info = utility(doc.tenant)
    blocks: list[tuple[str, str]] = []
    if doc.annual_notice:
        blocks.append(("Annual rate notice (SU-ANNUAL-NOTICE)", doc.annual_notice))
    if info.get("message"):
        blocks.append((f"Message from {info['name']}", info["message"]))
    if not blocks:
        return
    top, room = 236.0, 112.0  # the box: from y 236 down to the stub's line
    size = 7.5
    while (
        size > 5
        and sum(
            _cell_height(width, title, size + 0.5, True) + _cell_height(width, text, size)
            for title, text in blocks
        )
        > room
    ):
        size -= 0.5
    y = top
    for title, text in blocks:
        y -= _cell(canvas, x, y, width, title, size=size + 0.5, bold=True)
        y -= _cell(canvas, x, y, width, text, size=size) + 3


def _scan_line(canvas: Canvas, x: float, y: float, account_id: str, amount_due: Decimal) -> None:
    """A Code 128 barcode of the account and amount, the same characters printed under it."""
    value = bill_terms.scan_line(account_id, amount_due)
    barcode = Code128(value, barHeight=22, barWidth=0.8, humanReadable=False, quiet=False)
    barcode.drawOn(_raw(canvas), x, y + 9)
    canvas.setFont("Courier", 8)
    canvas.drawString(x, y, value)


def _remittance_stub(canvas: Canvas, doc: BillDocument) -> None:
    info = utility(doc.tenant)
    canvas.setDash(3, 3)
    canvas.line(MARGIN, STUB_LINE, WIDTH - MARGIN, STUB_LINE)
    canvas.setDash()
    canvas.setFont("Helvetica", 7)
    canvas.drawString(MARGIN, STUB_LINE + 3, "Detach and return this stub with your payment")
    left = WIDTH / 2 - MARGIN
    _cell(canvas, MARGIN, 96, left, "REMITTANCE STUB", size=9, bold=True)
    _cell(canvas, MARGIN, 84, left, f"Account {doc.account_id}   Bill {doc.printed_number}", size=9)
    _cell(canvas, MARGIN, 72, left, balance_text(doc), size=9)
    _cell(canvas, MARGIN, 60, left, "Amount enclosed  $____________", size=9)
    _scan_line(canvas, MARGIN, 20, doc.account_id, doc.amount_due)
    y = 84 - _cell(canvas, WIDTH / 2 + 20, 84, WIDTH / 2 - MARGIN - 20, f"Pay to {info['name']}", size=9)
    for line in info["address"]:
        y -= _cell(canvas, WIDTH / 2 + 20, y, WIDTH / 2 - MARGIN - 20, line, size=9)


# --- the combined Pleasant Prairie bill (PP-CWU-BILLING) ---------------------------------------

STUB_TOP = 130  # the remittance stub's zone at the foot of the last page
SUMMARY_COLUMNS = ((0, 226, "left"), (230, 60, "left"), (294, 90, "left"), (384, 120, "right"))


def draw_combined_bill(canvas: Canvas, doc: CombinedBillDocument) -> None:
    """One document, a section per utility's bill, then one remittance stub for the total.

    Each section is that bill as issued: its utility, account, number, dates, reads and
    usage chart (sewer) or parcel basis (stormwater), lines (rule ID, quantity x rate,
    amount), totals, amount due and funds in words; the first page sums up what each
    utility is owed and the total to remit."""
    names = [utility(s.tenant)["name"] for s in doc.sections]
    info = utility(doc.tenant)
    top = HEIGHT - MARGIN
    _cell(
        canvas, MARGIN, top, CONTENT, "Village of Pleasant Prairie: combined utility bill", size=12, bold=True
    )
    _cell(canvas, MARGIN, top - 12, CONTENT, " and ".join(dict.fromkeys(names)))
    _cell(canvas, MARGIN, top - 23, CONTENT, f"{', '.join(info['address'])}   Telephone {info['phone']}")
    right = [
        f"Service period {bill_terms.period_text(doc.period_start, doc.period_end)}",
        f"Total amount due {money(doc.amount_due)}",
        f"Due date {bill_terms.us_date(doc.due_date)}",
    ]
    y = top - 38
    for text in right:
        y -= _cell(canvas, MARGIN + 200, y, CONTENT - 200, text, size=9, align="right")

    below = _addresses(canvas, top, doc.customer_name, doc.mailing_lines, doc.service_address)
    flow = _Flow(
        canvas, min(top - 150, below - 8), "Village of Pleasant Prairie combined bill", bottom=STUB_TOP + 20
    )
    # Summary: what each utility's bill asks, then the total to remit.
    _cell(canvas, MARGIN, flow.y, CONTENT, "Summary", size=9, bold=True)
    titles = ("Utility", "Account", "Bill", "Amount due")
    flow.y = _row(
        canvas,
        flow.y - 12,
        [(x, w, t, a) for (x, w, a), t in zip(SUMMARY_COLUMNS, titles, strict=True)],
        size=9,
        bold=True,
    )
    for name, section in zip(names, doc.sections, strict=True):
        texts = (name, section.account_id, section.printed_number, _section_due(section))
        flow.y = _row(
            canvas, flow.y, [(x, w, t, a) for (x, w, a), t in zip(SUMMARY_COLUMNS, texts, strict=True)]
        )
    flow.y -= 2
    _cell(canvas, MARGIN + 200, flow.y, CONTENT - 290, "Total amount due", size=9, bold=True, align="right")
    _cell(canvas, WIDTH - MARGIN - 86, flow.y, 86, money(doc.amount_due), size=9, bold=True, align="right")
    flow.y -= 24

    for name, section in zip(names, doc.sections, strict=True):
        _combined_section(flow, name, section)
    if flow.y < STUB_TOP + 20:
        canvas.showPage()
    _combined_stub(canvas, doc, names)
    canvas.showPage()


def _section_due(section: BillDocument) -> str:
    if section.credit:
        return f"credit {money(-section.amount_due)}"
    return f"{money(section.amount_due)} due {bill_terms.us_date(section.due_date)}"


def _combined_section(flow: _Flow, name: str, section: BillDocument) -> None:
    canvas = flow.canvas
    flow.room(90)
    canvas.line(MARGIN, flow.y + 8, WIDTH - MARGIN, flow.y + 8)
    _cell(
        canvas,
        WIDTH / 2 + 60,
        flow.y - 4,
        CONTENT / 2 - 60,
        f"Bill {section.printed_number}",
        size=10,
        bold=True,
        align="right",
    )
    flow.y -= 4 + _cell(canvas, MARGIN, flow.y - 4, CONTENT / 2 + 2, name, size=10, bold=True)
    flow.y -= (
        _cell(
            canvas,
            MARGIN,
            flow.y - 2,
            CONTENT,
            f"Account {section.account_id}   Bill date {bill_terms.us_date(section.bill_date)}   "
            f"Due date {bill_terms.us_date(section.due_date)}",
        )
        + 8
    )
    _past_due_box(flow, section)
    if bill_terms.is_stormwater(section):
        _stormwater_basis(flow, section)
    else:
        _reads_table(flow, section)
        if section.usage:
            flow.room(112)
            _usage_chart(canvas, section, MARGIN, flow.y - 84, 250, 54)
            flow.y -= 120
    _charges_table(flow, section.lines)
    flow.room(60)
    canvas.line(WIDTH - MARGIN - 200, flow.y + 7, WIDTH - MARGIN, flow.y + 7)
    flow.y -= 4
    totals = [
        ("Total of this bill", money(section.total)),
        ("Previous balance", money(section.previous_balance)),
        ("Payments since last bill", money(-section.payments_since)),
        ("Amount due", _section_due(section)),
    ]
    for label, text in totals:
        bold = label == "Amount due"
        _cell(canvas, MARGIN + 150, flow.y, CONTENT - 300, label, size=8.5, bold=bold, align="right")
        _cell(canvas, WIDTH - MARGIN - 146, flow.y, 146, text, size=8.5, bold=bold, align="right")
        flow.y -= 11
    late = bill_terms.late_charge(
        section, bill_terms.LateChargeRule.of(utility(section.tenant).get("late_charge"))
    )
    if late is not None:
        flow.y -= _cell(canvas, MARGIN, flow.y, CONTENT, late.text(), align="right")
    funds = section.funds()
    if funds:
        flow.room(11)
        flow.y -= _cell(canvas, MARGIN, flow.y, CONTENT, f"Funds of {name}: {funds_text(funds)}", size=8)
    flow.y -= 14


def _combined_stub(canvas: Canvas, doc: CombinedBillDocument, names: list[str]) -> None:
    info = utility(doc.tenant)
    canvas.setDash(3, 3)
    canvas.line(MARGIN, 118, WIDTH - MARGIN, 118)
    canvas.setDash()
    canvas.setFont("Helvetica", 7)
    canvas.drawString(MARGIN, 121, "Detach and return this stub with your payment")
    left = WIDTH / 2 + 60 - MARGIN
    _cell(canvas, MARGIN, 106, left, "REMITTANCE STUB (combined bill)", size=9, bold=True)
    y = 95.0
    for name, section in zip(names, doc.sections, strict=True):
        short = name.removeprefix("Village of Pleasant Prairie ")
        y -= _cell(canvas, MARGIN, y, left, f"{short}, account {section.account_id}: {_section_due(section)}")
    y -= _cell(
        canvas,
        MARGIN,
        y,
        left,
        f"Total amount due {money(doc.amount_due)}   Due {bill_terms.us_date(doc.due_date)}",
        size=9,
        bold=True,
    )
    _cell(canvas, MARGIN, y, left, "Amount enclosed  $____________", size=9)
    yy = 95 - _cell(
        canvas, WIDTH / 2 + 70, 95, WIDTH / 2 - MARGIN - 70, "Pay to Village of Pleasant Prairie", size=9
    )
    for line in info["address"]:
        yy -= _cell(canvas, WIDTH / 2 + 70, yy, WIDTH / 2 - MARGIN - 70, line, size=9)
    for i, section in enumerate(doc.sections[:2]):  # one scan line per account, side by side
        _scan_line(canvas, MARGIN + i * (CONTENT / 2 + 8), 14, section.account_id, section.amount_due)


# --- the print batch --------------------------------------------------------------------------


def merge_pdfs(documents: Iterable[bytes]) -> bytes:
    """One PDF for the print vendor from the day's letters, in the order given (by ZIP)."""
    out = io.BytesIO()
    write_batch(documents, out)
    return out.getvalue()


def spooled_batch(documents: Iterable[bytes]) -> BinaryIO:
    """The batch PDF as a file to upload: in memory up to 8 MiB, on disk (Lambda's /tmp) beyond."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=8 * 2**20)  # noqa: SIM115 - the caller closes it
    write_batch(documents, spool)  # type: ignore[arg-type]
    spool.seek(0)
    return spool  # type: ignore[return-value]


def write_batch(documents: Iterable[bytes], out: BinaryIO) -> int:
    """Write the day's letters, in the order given, as one PDF to ``out``; returns the pages.

    Streamed: each letter is read as it comes (the iterable may fetch it from the mail
    bucket), its pages' objects are written at once under new object numbers, and only
    their offsets and page numbers are kept, so memory stays bounded however many letters
    the day has. The pages tree and the cross-reference table are written last.
    """
    batch = _StreamedPdf(out)
    for data in documents:
        batch.append(data)
    return batch.close()


class _StreamedPdf:
    """A PDF written object by object: 1 is the pages tree, 2 the catalog (both at the end)."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._position = 0
        self._offsets: dict[int, int] = {}
        self._pages: list[int] = []
        self._next = 3
        self._write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._position += len(data)

    def _object(self, number: int, body: bytes) -> None:
        self._offsets[number] = self._position
        self._write(b"%d 0 obj\n%s\nendobj\n" % (number, body))

    def append(self, data: bytes) -> None:
        from pypdf import PdfReader
        from pypdf.generic import IndirectObject, NameObject

        reader = PdfReader(io.BytesIO(data))
        numbers: dict[int, int] = {}
        queue: list[tuple[int, Any]] = []

        def copied(value: Any) -> Any:
            if isinstance(value, IndirectObject):
                if value.idnum not in numbers:
                    numbers[value.idnum] = self._next
                    self._next += 1
                    queue.append((numbers[value.idnum], value.get_object()))
                return IndirectObject(numbers[value.idnum], 0, None)
            return _copy_pdf_object(value, copied)

        root: Any = reader.trailer["/Root"]
        for page in _leaf_pages(root["/Pages"], {}):
            number = self._next
            self._next += 1
            body = {k: v for k, v in page.items() if k != "/Parent"}
            new_page = _copy_pdf_object(_dictionary(body), copied)
            new_page[NameObject("/Parent")] = IndirectObject(1, 0, None)
            self._object(number, _serialised(new_page))
            self._pages.append(number)
        while queue:  # the objects the pages refer to, and theirs in turn
            number, value = queue.pop()
            self._object(number, _serialised(_copy_pdf_object(value, copied)))

    def close(self) -> int:
        kids = b" ".join(b"%d 0 R" % n for n in self._pages)
        self._object(1, b"<< /Type /Pages /Count %d /Kids [ %s ] >>" % (len(self._pages), kids))
        self._object(2, b"<< /Type /Catalog /Pages 1 0 R >>")
        xref_at = self._position
        size = self._next
        lines = [b"xref\n0 %d\n" % size, b"0000000000 65535 f \n"]
        for number in range(1, size):
            offset = self._offsets.get(number)
            lines.append(b"%010d 00000 n \n" % offset if offset is not None else b"0000000000 65535 f \n")
        self._write(b"".join(lines))
        self._write(b"trailer\n<< /Size %d /Root 2 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at))
        return len(self._pages)


INHERITED = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")


def _leaf_pages(node: Any, inherited: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The pages under a pages-tree node, in order, each with what it inherits from the tree
    (PDF 32000 7.7.3.4) made its own: read straight from the tree, which is cheaper than
    pypdf's flattening of the whole document."""
    here = {**inherited, **{k: node.raw_get(k) for k in node if k in INHERITED}}
    if node.get("/Type") == "/Page" or "/Kids" not in node:
        yield {**here, **{k: node.raw_get(k) for k in node}}
        return
    for kid in node["/Kids"]:
        yield from _leaf_pages(kid.get_object(), here)


def _dictionary(values: dict[Any, Any]) -> Any:
    from pypdf.generic import DictionaryObject

    made = DictionaryObject()
    made.update(values)
    return made


def _copy_pdf_object(value: Any, copied: Any) -> Any:
    """``value`` with every indirect reference in it renumbered by ``copied``; a stream keeps
    its encoded data as it is (never decoded and re-encoded)."""
    from pypdf.generic import ArrayObject, DictionaryObject, EncodedStreamObject, StreamObject

    if isinstance(value, StreamObject):
        stream = EncodedStreamObject()
        stream._data = value._data
        for k, v in value.items():
            if k != "/Length":
                stream[k] = copied(v)
        return stream
    if isinstance(value, DictionaryObject):
        made = DictionaryObject()
        for k, v in value.items():
            made[k] = copied(v)
        return made
    if isinstance(value, ArrayObject):
        return ArrayObject(copied(v) for v in value)
    return value


def _serialised(value: Any) -> bytes:
    buffer = io.BytesIO()
    value.write_to_stream(buffer)
    return buffer.getvalue()


def _addresses(
    canvas: Canvas, top: float, customer_name: str, mailing_lines: Sequence[str], service_address: str
) -> float:
    """The mailing address (in the envelope's window) and the service address, beside it,
    each wrapped within its column; the lowest y either reaches."""
    y = top - 80
    width = WIDTH / 2 - MARGIN - 18 - 12
    for address_line in (customer_name, *mailing_lines):
        y -= _cell(canvas, MARGIN + 18, y, width, address_line, size=10)
    right = WIDTH / 2 + 20
    service_y = top - 80 - _cell(canvas, right, top - 80, WIDTH - MARGIN - right, "Service address", size=9)
    service_y -= _cell(canvas, right, service_y, WIDTH - MARGIN - right, service_address, size=9)
    return min(y, service_y)
