"""Values from JSON documents: exact Decimals (X-MONEY) and calendar dates.

One policy for every service. Numbers: a JSON number (parsed with ``parse_float=Decimal``),
an int or a decimal string is accepted; a Python float is refused (it has already lost its
exactness), as are booleans, NaN and infinities. Dates: ``YYYY-MM-DD`` strings (or a
``date``), never a date-time. Callers wrap :class:`BadValue` in their own service's error
with the field path.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class BadValue(ValueError):
    """The value is not of the kind asked for; the message says why."""


class NotADecimal(BadValue):
    """The value is not an exact, finite decimal number."""


class NotADate(BadValue):
    """The value is not a calendar date written YYYY-MM-DD."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_decimal(value: object) -> Decimal:
    """``value`` as a finite Decimal, or :class:`NotADecimal`."""
    if isinstance(value, bool):
        raise NotADecimal(f"must be a number, got {_shown(value)}")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        raise NotADecimal(f"must be a decimal number, not a float ({value!r}); X-MONEY")
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip().replace(",", ""))
        except InvalidOperation:
            raise NotADecimal(f"must be a number, got {_shown(value)}") from None
    else:
        raise NotADecimal(f"must be a number, got {_shown(value)}")
    if not number.is_finite():
        raise NotADecimal(f"must be a finite number, got {_shown(value)}")
    return number


def to_date(value: object) -> date:
    """``value`` as a calendar date, or :class:`NotADate`."""
    if isinstance(value, datetime):
        raise NotADate(f"{_shown(value)} is a date-time, expected a date (YYYY-MM-DD)")
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
        raise NotADate(f"must be a date YYYY-MM-DD, got {_shown(value)}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise NotADate(f"{value!r} is not a calendar date") from None
