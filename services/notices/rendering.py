"""Rendering notices: Jinja2 for email bodies (HTML escaped), reportlab for printed letters,
the bill PDF and the daily print batch.

Not domain code (it reads template files), but it does no I/O beyond that: every function
returns bytes or strings, and the adapters store or send them.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from reportlab.lib.pagesizes import LETTER
from reportlab.pdfgen.canvas import Canvas

from notices.domain.documents import BillDocument
from notices.domain.model import NoticeRequest, Rule, money

TEMPLATES = Path(__file__).resolve().parent / "templates"
WIDTH, HEIGHT = LETTER
MARGIN = 54  # 3/4 inch
READ_COLUMNS = (
    (0, "Meter"),
    (90, "Previous read"),
    (200, "Present read"),
    (310, "Consumption"),
    (410, "Quality"),
)
TEMPLATE_OF = {Rule.PP_LIEN: "TAXROLL", Rule.GR_TAXROLL: "TAXROLL"}
SPECIFIC = {"N-BILL", "GR-OVERDUE", "PP-CWU-DELINQUENT", "TAXROLL", "PP-CWU-CREDIT-REVOKE"}


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
    if name not in SPECIFIC:
        name = "GENERIC"
    context = {
        "subject": request.subject,
        "rule": request.rule.value,
        "account_id": request.account_id,
        "recipient": request.recipient,
        "utility": utility(request.tenant),
        "c": request.content,
        "deadline": request.deadline.isoformat() if request.deadline else None,
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


def bill_pdf(doc: BillDocument) -> bytes:
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=LETTER, pageCompression=1, invariant=1)
    canvas.setTitle(f"Bill {doc.printed_number}")
    draw_bill(canvas, doc)
    canvas.save()
    return out.getvalue()


def draw_bill(canvas: Canvas, doc: BillDocument) -> None:
    info = utility(doc.tenant)
    top = HEIGHT - MARGIN
    canvas.setFont("Helvetica-Bold", 13)
    canvas.drawString(MARGIN, top, info["name"])
    canvas.setFont("Helvetica", 8.5)
    canvas.drawString(MARGIN, top - 12, f"{', '.join(info['address'])}   Telephone {info['phone']}")
    canvas.setFont("Helvetica-Bold", 11)
    canvas.drawRightString(WIDTH - MARGIN, top, f"Bill {doc.printed_number}")
    canvas.setFont("Helvetica", 9)
    right = [
        f"Account {doc.account_id}",
        f"Service period {doc.period_start.isoformat()} to {doc.period_end.isoformat()} (end exclusive)",
        f"Bill date {doc.bill_date.isoformat()}",
        f"Due date {doc.due_date.isoformat()}",
    ]
    for i, text in enumerate(right):
        canvas.drawRightString(WIDTH - MARGIN, top - 14 - 11 * i, text)

    # Mailing address (window) and service address.
    y = top - 80
    canvas.setFont("Helvetica", 10)
    for address_line in (doc.customer_name, *doc.mailing_lines):
        canvas.drawString(MARGIN + 18, y, address_line)
        y -= 12
    canvas.setFont("Helvetica", 9)
    canvas.drawString(WIDTH / 2 + 20, top - 80, "Service address")
    canvas.drawString(WIDTH / 2 + 20, top - 92, doc.service_address)

    # Meter reads, estimates marked.
    y = top - 160
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, y, "Meter reads")
    canvas.setFont("Helvetica", 8.5)
    y -= 12
    if not doc.reads:
        canvas.drawString(MARGIN, y, "No meter reads for this bill (flat or parcel-based charges).")
        y -= 11
    else:
        canvas.setFont("Helvetica-Bold", 8)
        for x, title in READ_COLUMNS:
            canvas.drawString(MARGIN + x, y, title)
        canvas.setFont("Helvetica", 8.5)
        y -= 11
    for read in doc.reads:
        cells = (
            read.meter_id or "(meter not on file)",
            _read_text(read.previous_read_on, read.previous_reading),
            _read_text(read.present_read_on, read.present_reading),
            f"{read.consumption_gal:,f} gal",
            "ESTIMATED" if read.estimated else read.quality,
        )
        for (x, _), cell in zip(READ_COLUMNS, cells, strict=True):
            canvas.drawString(MARGIN + x, y, cell)
        y -= 11
    if doc.reads and all(read.present_reading is None for read in doc.reads):
        canvas.drawString(MARGIN, y, "Register readings are not on file with billing for this period.")
        y -= 11
    if doc.estimated:
        canvas.drawString(
            MARGIN, y, "E: this bill uses an estimated read; it is corrected when an actual read arrives."
        )
        y -= 11

    # Lines: rule, description, quantity x rate = amount.
    y -= 10
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, y, "Rule")
    canvas.drawString(MARGIN + 95, y, "Charge")
    canvas.drawRightString(WIDTH - MARGIN - 170, y, "Quantity")
    canvas.drawRightString(WIDTH - MARGIN - 90, y, "Rate")
    canvas.drawRightString(WIDTH - MARGIN, y, "Amount")
    canvas.setFont("Helvetica", 8.5)
    y -= 12
    for line in doc.lines:
        if y < 260:
            canvas.showPage()
            canvas.setFont("Helvetica", 8.5)
            y = HEIGHT - MARGIN
        canvas.drawString(MARGIN, y, line.rule_id)
        canvas.drawString(MARGIN + 95, y, line.description[:62])
        if line.quantity is not None:
            canvas.drawRightString(WIDTH - MARGIN - 170, y, f"{line.quantity} {line.unit}".strip())
        if line.rate is not None:
            canvas.drawRightString(WIDTH - MARGIN - 90, y, str(line.rate))
        canvas.drawRightString(WIDTH - MARGIN, y, money(line.amount))
        y -= 11
    canvas.line(WIDTH - MARGIN - 200, y + 6, WIDTH - MARGIN, y + 6)
    closing = ("Credit balance", -doc.amount_due) if doc.credit else ("Total amount due", doc.amount_due)
    totals = [
        ("Total of this bill", doc.total),
        ("Previous balance", doc.previous_balance),
        ("Payments since last bill", -doc.payments_since),
        closing,
    ]
    for label, amount in totals:
        y -= 2
        canvas.setFont("Helvetica-Bold" if label == closing[0] else "Helvetica", 9)
        canvas.drawRightString(WIDTH - MARGIN - 90, y, label)
        canvas.drawRightString(WIDTH - MARGIN, y, money(amount))
        y -= 11
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawRightString(WIDTH - MARGIN, y - 2, balance_text(doc))

    _usage_chart(canvas, doc, x=MARGIN, y=150, width=250, height=80)
    if doc.annual_notice:
        canvas.setFont("Helvetica-Bold", 8)
        canvas.drawString(MARGIN + 280, 222, "Annual rate notice (SU-ANNUAL-NOTICE)")
        canvas.setFont("Helvetica", 7.5)
        yy = 211
        for text_line in _wrap(doc.annual_notice, 52):
            canvas.drawString(MARGIN + 280, yy, text_line)
            yy -= 9
    _remittance_stub(canvas, doc)
    canvas.showPage()


def balance_text(doc: BillDocument) -> str:
    """What the account owes after this bill: an amount due by the due date, or a credit."""
    if doc.credit:
        return f"Credit balance {money(-doc.amount_due)}: nothing is due"
    if doc.amount_due == 0:
        return "Nothing is due"
    return f"Amount due {money(doc.amount_due)}   Due {doc.due_date.isoformat()}"


def _read_text(on: date | None, reading: str | None) -> str:
    if on is None and reading is None:
        return "-"
    return " ".join(part for part in (on.isoformat() if on else "", reading or "") if part)


def _usage_chart(
    canvas: Canvas, doc: BillDocument, *, x: float, y: float, width: float, height: float
) -> None:
    points = doc.usage_last_13()
    canvas.setFont("Helvetica-Bold", 8)
    canvas.drawString(x, y + height + 8, "Usage, last 13 periods (thousand gallons)")
    canvas.line(x, y, x + width, y)
    if not points:
        canvas.setFont("Helvetica", 7.5)
        canvas.drawString(x, y + 4, "No usage history yet.")
        return
    peak = max((p.volume_gal for p in points), default=0) or 1
    slot = width / 13
    canvas.setFont("Helvetica", 6)
    for i, point in enumerate(points):
        bar = float(point.volume_gal / peak) * height  # drawing only, never money
        canvas.rect(x + i * slot + 2, y, slot - 4, bar, stroke=0, fill=1)
        canvas.drawString(x + i * slot + 1, y - 8, point.period_start.strftime("%m/%y"))
        canvas.drawString(x + i * slot + 1, y + bar + 2, f"{point.volume_gal / 1000:.1f}")


def _remittance_stub(canvas: Canvas, doc: BillDocument) -> None:
    info = utility(doc.tenant)
    canvas.setDash(3, 3)
    canvas.line(MARGIN, 110, WIDTH - MARGIN, 110)
    canvas.setDash()
    canvas.setFont("Helvetica", 7)
    canvas.drawString(MARGIN, 113, "Detach and return this stub with your payment")
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, 92, "REMITTANCE STUB")
    canvas.setFont("Helvetica", 9)
    canvas.drawString(MARGIN, 79, f"Account {doc.account_id}   Bill {doc.printed_number}")
    canvas.drawString(MARGIN, 67, balance_text(doc))
    canvas.drawString(MARGIN, 55, "Amount enclosed  $____________")
    canvas.drawString(WIDTH / 2 + 20, 79, f"Pay to {info['name']}")
    for i, line in enumerate(info["address"]):
        canvas.drawString(WIDTH / 2 + 20, 67 - 12 * i, line)


# --- the print batch --------------------------------------------------------------------------


def merge_pdfs(documents: Iterable[bytes]) -> bytes:
    """One PDF for the print vendor from the day's letters, in the order given (by ZIP)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for data in documents:
        writer.append(PdfReader(io.BytesIO(data)))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
