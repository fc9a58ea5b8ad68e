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
from pathlib import Path
from typing import Any, BinaryIO

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from reportlab.lib.pagesizes import LETTER
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from notices.domain.documents import BillDocument, CombinedBillDocument
from notices.domain.model import NoticeRequest, Rule, money
from notices.domain.requests import funds_text

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
    object per call, the largest part of drawing a bill of some sixty strings.)"""

    def __init__(self, canvas: Canvas) -> None:
        self._canvas = canvas
        self._text = canvas.beginText()
        self._font: tuple[str, float] = ("Helvetica", 10)

    def setFont(self, name: str, size: float) -> None:  # noqa: N802 - reportlab's name
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

    _addresses(canvas, top, doc.customer_name, doc.mailing_lines, doc.service_address)

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


# --- the combined Pleasant Prairie bill (PP-CWU-BILLING) ---------------------------------------

STUB_TOP = 130  # the remittance stub's zone at the foot of the last page


def draw_combined_bill(canvas: Canvas, doc: CombinedBillDocument) -> None:
    """One document, a section per utility's bill, then one remittance stub for the total.

    Each section is that bill as issued: its utility, account, number, dates, reads, lines
    (rule ID, quantity x rate, amount and its funds), totals and amount due; the first page
    sums up what each utility is owed and the total to remit."""
    names = [utility(s.tenant)["name"] for s in doc.sections]
    info = utility(doc.tenant)
    top = HEIGHT - MARGIN
    canvas.setFont("Helvetica-Bold", 12)
    canvas.drawString(MARGIN, top, "Village of Pleasant Prairie: combined utility bill")
    canvas.setFont("Helvetica", 8.5)
    canvas.drawString(MARGIN, top - 12, " and ".join(dict.fromkeys(names)))
    canvas.drawString(MARGIN, top - 23, f"{', '.join(info['address'])}   Telephone {info['phone']}")
    canvas.setFont("Helvetica", 9)
    right = [
        f"Service period {doc.period_start.isoformat()} to {doc.period_end.isoformat()} (end exclusive)",
        f"Total amount due {money(doc.amount_due)}",
        f"Due date {doc.due_date.isoformat()}",
    ]
    for i, text in enumerate(right):
        canvas.drawRightString(WIDTH - MARGIN, top - 38 - 11 * i, text)

    _addresses(canvas, top, doc.customer_name, doc.mailing_lines, doc.service_address)

    # Summary: what each utility's bill asks, then the total to remit.
    y = top - 150
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, y, "Summary")
    for x, title in ((0, "Utility"), (230, "Account"), (320, "Bill")):
        canvas.drawString(MARGIN + x, y - 12, title)
    canvas.drawRightString(WIDTH - MARGIN, y - 12, "Amount due")
    canvas.setFont("Helvetica", 8.5)
    y -= 24
    for name, section in zip(names, doc.sections, strict=True):
        canvas.drawString(MARGIN, y, name[:48])
        canvas.drawString(MARGIN + 230, y, section.account_id)
        canvas.drawString(MARGIN + 320, y, section.printed_number)
        canvas.drawRightString(WIDTH - MARGIN, y, _section_due(section))
        y -= 11
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawRightString(WIDTH - MARGIN - 90, y - 2, "Total amount due")
    canvas.drawRightString(WIDTH - MARGIN, y - 2, money(doc.amount_due))
    y -= 24

    for name, section in zip(names, doc.sections, strict=True):
        y = _combined_section(canvas, name, section, y)
    if y < STUB_TOP + 20:
        canvas.showPage()
    _combined_stub(canvas, doc, names)
    canvas.showPage()


def _section_due(section: BillDocument) -> str:
    if section.credit:
        return f"credit {money(-section.amount_due)}"
    return f"{money(section.amount_due)} due {section.due_date.isoformat()}"


def _room(canvas: Canvas, y: float, needed: float) -> float:
    """A new page when fewer than ``needed`` points are left above the stub zone."""
    if y - needed < STUB_TOP + 20:
        canvas.showPage()
        return HEIGHT - MARGIN
    return y


def _combined_section(canvas: Canvas, name: str, section: BillDocument, y: float) -> float:
    y = _room(canvas, y, 90)
    canvas.line(MARGIN, y + 8, WIDTH - MARGIN, y + 8)
    canvas.setFont("Helvetica-Bold", 10)
    canvas.drawString(MARGIN, y - 4, name)
    canvas.drawRightString(WIDTH - MARGIN, y - 4, f"Bill {section.printed_number}")
    canvas.setFont("Helvetica", 8.5)
    canvas.drawString(
        MARGIN,
        y - 16,
        f"Account {section.account_id}   Bill date {section.bill_date.isoformat()}   "
        f"Due date {section.due_date.isoformat()}",
    )
    y -= 30
    for read in section.reads:
        y = _room(canvas, y, 11)
        canvas.drawString(
            MARGIN,
            y,
            f"Meter {read.meter_id or '(not on file)'}: {_read_text(read.previous_read_on, read.previous_reading)}"
            f" to {_read_text(read.present_read_on, read.present_reading)}, {read.consumption_gal:,f} gal"
            f" {'ESTIMATED' if read.estimated else read.quality}",
        )
        y -= 11
    canvas.setFont("Helvetica-Bold", 8)
    canvas.drawString(MARGIN, y, "Rule")
    canvas.drawString(MARGIN + 95, y, "Charge")
    canvas.drawRightString(WIDTH - MARGIN - 230, y, "Quantity")
    canvas.drawRightString(WIDTH - MARGIN - 165, y, "Rate")
    canvas.drawRightString(WIDTH - MARGIN - 110, y, "Amount")
    canvas.drawString(WIDTH - MARGIN - 100, y, "Fund")
    canvas.setFont("Helvetica", 8)
    y -= 11
    for line in section.lines:
        y = _room(canvas, y, 11)
        canvas.drawString(MARGIN, y, line.rule_id)
        canvas.drawString(MARGIN + 95, y, line.description[:44])
        if line.quantity is not None:
            canvas.drawRightString(WIDTH - MARGIN - 230, y, f"{line.quantity} {line.unit}".strip())
        if line.rate is not None:
            canvas.drawRightString(WIDTH - MARGIN - 165, y, str(line.rate))
        canvas.drawRightString(WIDTH - MARGIN - 110, y, money(line.amount))
        canvas.drawString(WIDTH - MARGIN - 100, y, ", ".join(sorted(line.funds))[:24])
        y -= 11
    y = _room(canvas, y, 60)
    totals = [
        ("Total of this bill", money(section.total)),
        ("Previous balance", money(section.previous_balance)),
        ("Payments since last bill", money(-section.payments_since)),
        ("Amount due", _section_due(section)),
    ]
    for label, text in totals:
        canvas.setFont("Helvetica-Bold" if label == "Amount due" else "Helvetica", 8.5)
        canvas.drawRightString(WIDTH - MARGIN - 110, y, label)
        canvas.drawRightString(WIDTH - MARGIN, y, text)
        y -= 11
    funds = section.funds()
    if funds:
        canvas.setFont("Helvetica", 8)
        canvas.drawString(MARGIN, y, f"Funds of {name}: {funds_text(funds)}"[:110])
        y -= 11
    return y - 14


def _combined_stub(canvas: Canvas, doc: CombinedBillDocument, names: list[str]) -> None:
    info = utility(doc.tenant)
    canvas.setDash(3, 3)
    canvas.line(MARGIN, 118, WIDTH - MARGIN, 118)
    canvas.setDash()
    canvas.setFont("Helvetica", 7)
    canvas.drawString(MARGIN, 121, "Detach and return this stub with your payment")
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, 104, "REMITTANCE STUB (combined bill)")
    canvas.setFont("Helvetica", 8.5)
    y = 92
    for name, section in zip(names, doc.sections, strict=True):
        short = name.removeprefix("Village of Pleasant Prairie ")
        canvas.drawString(MARGIN, y, f"{short[:24]}, account {section.account_id}: {_section_due(section)}")
        y -= 11
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(MARGIN, y, f"Total amount due {money(doc.amount_due)}   Due {doc.due_date.isoformat()}")
    canvas.setFont("Helvetica", 9)
    canvas.drawString(MARGIN, y - 12, "Amount enclosed  $____________")
    canvas.drawString(WIDTH / 2 + 70, 92, "Pay to Village of Pleasant Prairie")
    for i, line in enumerate(info["address"]):
        canvas.drawString(WIDTH / 2 + 70, 80 - 12 * i, line)


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
) -> None:
    """The mailing address (in the envelope's window) and the service address, beside it."""
    y = top - 80
    canvas.setFont("Helvetica", 10)
    for address_line in (customer_name, *mailing_lines):
        canvas.drawString(MARGIN + 18, y, address_line)
        y -= 12
    canvas.setFont("Helvetica", 9)
    canvas.drawString(WIDTH / 2 + 20, top - 80, "Service address")
    canvas.drawString(WIDTH / 2 + 20, top - 92, service_address)
