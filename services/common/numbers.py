"""Numbers from JSON or tariff documents as exact Decimals (X-MONEY).

One policy for every service: a JSON number (parsed with ``parse_float=Decimal``), an int
or a decimal string is accepted; a Python float is refused (it has already lost its
exactness), as are booleans, NaN and infinities. Callers wrap :class:`NotADecimal` in their
own service's error with the field path.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


class NotADecimal(ValueError):
    """The value is not an exact, finite decimal number; the message says why."""


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
