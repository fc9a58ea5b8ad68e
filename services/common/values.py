"""Values from JSON documents: exact, bounded Decimals (X-MONEY) and calendar dates.

One policy for every service, applied at the edge so no caller meets a number or a date
that later arithmetic, DynamoDB or EventBridge cannot hold.

Numbers
    Accepted: a JSON number (an ``int``, or a ``Decimal`` from ``parse_float=Decimal``) or a
    plain ASCII decimal string ``-?[0-9]+(.[0-9]+)?`` (no sign ``+``, no spaces, no thousands
    separators ``,`` or ``_``, no exponent, no full-width or other Unicode digits, no hex, no
    NaN or Infinity). Refused: a Python float (it has already lost its exactness), a bool,
    anything else. ``"2,5"`` is not 25 and ``"1_000"`` is not 1000: both are refused.

    Bounded: ``|x| < 10**12`` (:data:`MAX_INTEGER_DIGITS` = 12) and at most
    :data:`MAX_PLACES` = 12 decimal places (trailing zeros beyond them are dropped, so
    ``1.000000000000000`` is 1). Why these bounds:

    - no utility quantity comes near them: a whole city's yearly water is ~10**10 gallons,
      a parcel of 10**10 sq ft is 359 square miles, a concentration cannot exceed 10**6 mg/l
      (pure substance), a rate needs no more than 6 places;
    - any accepted value has at most 24 significant digits, so it is exact in Python's
      default 28-digit Decimal context, and the products the rating engine forms from two of
      them (gallons x mg/l x 8.34e-6 x a rate, ~10**25) still quantize to the cent without
      ``InvalidOperation``; an exponent like ``1e999999999`` never reaches arithmetic;
    - every stored figure fits DynamoDB's 38-digit numbers with room to spare.

    A caller with a tighter physical bound passes ``maximum=`` (inclusive, on the magnitude),
    e.g. :data:`CONCENTRATION_MG_L` or :data:`AREA_SQFT`.

Dates
    ``YYYY-MM-DD`` in ASCII digits (or a ``date``), never a date-time, within
    :data:`FIRST_DATE` .. :data:`LAST_DATE` (1900-01-01 .. 2199-12-31). No utility bills
    before 1900 or after 2199, and the bound leaves centuries of room for the date arithmetic
    done on them (periods, 24-month exits) before Python's year 9999 limit.

Callers wrap :class:`BadValue` in their own service's error with the field path.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

MAX_INTEGER_DIGITS = 12
MAX_PLACES = 12
LIMIT = Decimal(10) ** MAX_INTEGER_DIGITS
# Tighter bounds a field may pass as ``maximum=``; each is far beyond what is real.
AREA_SQFT = Decimal(10) ** 10  # 359 square miles
CONCENTRATION_MG_L = Decimal(10) ** 6  # a pure substance
FIRST_DATE = date(1900, 1, 1)
LAST_DATE = date(2199, 12, 31)

# A plain decimal string: at most 12 + 1 + 40 characters (trailing zeros allowed) before
# the regex runs, so a megabyte string costs nothing.
_MAX_STRING = 64
_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


class BadValue(ValueError):
    """The value is not of the kind asked for; the message says why."""


class NotADecimal(BadValue):
    """The value is not an exact, finite, bounded decimal number."""


class NotADate(BadValue):
    """The value is not a calendar date written YYYY-MM-DD within the supported years."""


def _shown(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = str(value) if isinstance(value, Decimal) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_decimal(value: object, *, maximum: Decimal | None = None) -> Decimal:
    """``value`` as a finite Decimal, ``|value| < 10**12`` (and ``<= maximum`` if given), at
    most 12 decimal places; or :class:`NotADecimal`."""
    if isinstance(value, bool):
        raise NotADecimal(f"must be a number, got {_shown(value)}")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        if abs(value) >= LIMIT:  # before Decimal(): a 4,000-digit int costs nothing to refuse
            raise NotADecimal(f"must be less than 10^{MAX_INTEGER_DIGITS} in magnitude, got {_shown(value)}")
        number = Decimal(value)
    elif isinstance(value, float):
        raise NotADecimal(f"must be a decimal number, not a float ({value!r}); X-MONEY")
    elif isinstance(value, str):
        if len(value) > _MAX_STRING or not _PLAIN_DECIMAL.fullmatch(value):
            raise NotADecimal(f"must be a plain decimal number like 12 or 12.50, got {_shown(value)}")
        number = Decimal(value)
    else:
        raise NotADecimal(f"must be a number, got {_shown(value)}")
    number = _bounded(number, value)
    if maximum is not None and number.copy_abs() > maximum:
        raise NotADecimal(f"must be at most {maximum} in magnitude, got {_shown(value)}")
    return number


def _bounded(number: Decimal, value: object) -> Decimal:
    if not number.is_finite():
        raise NotADecimal(f"must be a finite number, got {_shown(value)}")
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # finite
    kept = "".join(map(str, digits)).rstrip("0")
    if not kept:  # zero: -0 and 0E+5 are 0; 0.00 keeps its places
        return number.copy_abs() if -MAX_PLACES <= exponent <= 0 else Decimal(0)
    # By exponent and copy_abs only: 1e999999999 must not reach a rounding operation.
    if number.adjusted() >= MAX_INTEGER_DIGITS:
        raise NotADecimal(f"must be less than 10^{MAX_INTEGER_DIGITS} in magnitude, got {_shown(value)}")
    significant_exponent = exponent + len(digits) - len(kept)
    if significant_exponent < -MAX_PLACES:
        raise NotADecimal(f"has more than {MAX_PLACES} decimal places: {_shown(value)}")
    if exponent < -MAX_PLACES:  # 1.0000000000000000 -> 1 (only zeros dropped: exact)
        number = Decimal((sign, tuple(int(d) for d in kept), significant_exponent))
    if int(number.as_tuple().exponent) > 0:  # 1E+3 -> 1000: plain, as every output shows numbers
        return number.quantize(Decimal(1))
    return number


def to_date(value: object) -> date:
    """``value`` as a calendar date in 1900..2199, or :class:`NotADate`."""
    if isinstance(value, datetime):
        raise NotADate(f"{_shown(value)} is a date-time, expected a date (YYYY-MM-DD)")
    if isinstance(value, date):
        day = value
    elif not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
        raise NotADate(f"must be a date YYYY-MM-DD, got {_shown(value)}")
    else:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise NotADate(f"{value!r} is not a calendar date") from None
    if not FIRST_DATE <= day <= LAST_DATE:
        raise NotADate(
            f"{day.isoformat()} is outside the supported dates {FIRST_DATE.isoformat()}..{LAST_DATE.isoformat()}"
        )
    return day
