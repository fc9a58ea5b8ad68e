"""Errors of the rating domain (STYLE.md 12: a small hierarchy; never match on message text).

Every error names the offending input as a dotted path (``account.meter_size``,
``period.end``) so the staff CLI and the HTTP API can report it as CONTRACTS.md requires:
one clear message naming the field. ``str(error)`` is ``"<field>: <message>"``.
"""

from __future__ import annotations

from common.errors import FieldError


class RatingError(FieldError):
    """Base of every rating error. ``field`` is the dotted input path at fault."""


class InvalidScenario(RatingError):
    """An input breaks a rule of CONTRACTS.md (exit 2 in the CLI, 4xx in the API)."""


class UnknownTenant(RatingError):
    """The tenant has no tariff. ``field`` is ``tenant``."""


class RateNotPublished(RatingError):
    """The tariff publishes no rate for the input (e.g. a meter size missing from a zone's table).

    Never billed as zero (TARIFFS.md "—"). The message names tenant, zone, meter size and
    tariff version; ``field`` is the account field the clerk has to look at.
    """
