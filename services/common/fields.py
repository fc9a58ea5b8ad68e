"""Field rules shared by every import reader and API model: one answer to "is this value
one the world it lives in can hold?" (issue 27).

A value that passes :mod:`common.values` is well formed (a number, a calendar date); the
rules here say whether it makes sense for its field:

- **Identifiers** (account, meter, parcel, sample, reference ids): 1 to
  :data:`MAX_ID_LENGTH` characters of :data:`ID_CHARACTERS`, starting with a letter or
  digit. No control characters (a NUL record can be reached by no route), no slash or
  backslash (ids become URL path segments and S3 key parts: ``../../etc/passwd`` is not an
  id), no ``#`` (the DynamoDB key separator, :func:`common.ids.key`), no spaces at either end.
- **Dates by the kind of fact they date** (:class:`DateWindow`): a fact that happened
  (``read_on``, ``paid_on``, ``collected_on``, ``analysed_on``, ``interval_start``) lies
  between the tenant's first tariff version and ``today``; a record's start
  (``opened_on``, ``installed_on``) may be decades old but not in the future beyond
  :data:`SCHEDULED_AHEAD_DAYS`; an end (``closed_on``, ``removed_on``) is not before its
  start and not beyond the same horizon. ``today`` is an argument, never the clock.
- **ZIP codes:** US format, ``12345`` or ``12345-6789``.
- **Text cells** (names, addresses): no control characters but tab-free printable text,
  at most :data:`MAX_TEXT_LENGTH` characters.

Each check raises :class:`BadField` naming the field and the real cause, so a reader
reports ``line 7, column paid_on: 1900-01-01 is before the first tariff of grafton-sewer
(2024-01-01)`` rather than a traceback or a silent acceptance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MAX_ID_LENGTH = 64
ID_CHARACTERS = "letters, digits and . _ - : ( ) +"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:()+\-]{0,63}", re.ASCII)
_ZIP = re.compile(r"[0-9]{5}(?:-[0-9]{4})?", re.ASCII)
MAX_TEXT_LENGTH = 200
# A start or end recorded ahead of the day it happens (a move-in booked for next month).
SCHEDULED_AHEAD_DAYS = 366


class BadField(ValueError):
    """A value its field cannot hold; ``field`` names the column, the message the cause."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _shown(value: str) -> str:
    text = value.encode("unicode_escape").decode("ascii")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def identifier(field: str, value: str) -> str:
    """``value`` when it is a safe identifier, else :class:`BadField` saying what is wrong."""
    if not value:
        raise BadField(field, "is required")
    if len(value) > MAX_ID_LENGTH:
        raise BadField(field, f"is {len(value)} characters long; an id has at most {MAX_ID_LENGTH}")
    if _ID.fullmatch(value):
        return value
    bad = next((ch for ch in value if not re.fullmatch(r"[A-Za-z0-9._:()+\-]", ch, re.ASCII)), value[0])
    if ord(bad) < 0x20 or ord(bad) == 0x7F:
        cause = f"holds a control character (U+{ord(bad):04X})"
    elif bad in "/\\":
        cause = "holds a slash; an id is one path segment"
    elif bad == "#":
        cause = "holds '#', which no id may hold"
    elif bad == " ":
        cause = "holds a space"
    elif not value[0].isascii() or not value[0].isalnum():
        cause = "must start with a letter or a digit"
    else:
        cause = f"holds {bad!r}"
    raise BadField(field, f"{_shown(value)} {cause}; ids are {ID_CHARACTERS}")


def zip_code(field: str, value: str) -> str:
    """A US ZIP code, ``12345`` or ``12345-6789``."""
    if not _ZIP.fullmatch(value):
        raise BadField(field, f"{_shown(value)} is not a US ZIP code (12345 or 12345-6789)")
    return value


def text(field: str, value: str, *, maximum: int = MAX_TEXT_LENGTH) -> str:
    """Printable text (a name, an address): no control characters, at most ``maximum``."""
    if len(value) > maximum:
        raise BadField(field, f"is {len(value)} characters long; at most {maximum}")
    for ch in value:
        if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            raise BadField(field, f"holds a control character (U+{ord(ch):04X})")
    return value


@dataclass(frozen=True)
class DateWindow:
    """The dates a tenant's facts and records can carry, as of ``today``.

    ``first`` is the tenant's first tariff version's effective date: nothing is billed
    before it, so no fact dated before it can be billed either.
    """

    first: date
    today: date

    @property
    def horizon(self) -> date:
        return self.today + timedelta(days=SCHEDULED_AHEAD_DAYS)

    def happened(self, field: str, day: date, *, tenant: str = "the tenant") -> date:
        """A fact (a read, a payment, a sample): on or after ``first``, not after ``today``."""
        if day < self.first:
            raise BadField(
                field, f"{day.isoformat()} is before the first tariff of {tenant} ({self.first.isoformat()})"
            )
        if day > self.today:
            raise BadField(field, f"{day.isoformat()} is in the future (today is {self.today.isoformat()})")
        return day

    def started(self, field: str, day: date) -> date:
        """A record's start (``opened_on``): any past date, or at most a year ahead."""
        if day > self.horizon:
            raise BadField(
                field,
                f"{day.isoformat()} is more than {SCHEDULED_AHEAD_DAYS} days after today ({self.today.isoformat()})",
            )
        return day

    def ended(self, field: str, day: date, *, start: date, start_field: str) -> date:
        """A record's end: not before its start, at most a year ahead."""
        if day < start:
            raise BadField(field, f"{day.isoformat()} is before {start_field} {start.isoformat()}")
        return self.started(field, day)


# Cells a spreadsheet would run (OWASP CSV injection): an import refuses them, as metering's
# readers do (``metering.domain.csvinput.FORMULA_STARTS``), so no system CSV ever re-exports one.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def not_formula(field: str, value: str, *, number: bool = False) -> str:
    """``value`` unless it starts like a spreadsheet formula; :class:`BadField` if it does.

    For a number cell (``number=True``) a leading ``-`` is left to the number's own check
    (it reports "negative"), as metering does; every other start is refused the same way.
    """
    if value.startswith(FORMULA_STARTS) and not (number and value[0] == "-"):
        raise BadField(field, f"starts with {value[0]!r}: a spreadsheet formula is refused (CSV injection)")
    return value
