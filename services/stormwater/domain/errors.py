"""Errors of the stormwater domain (STYLE.md 12: a small hierarchy; never match on text).

Every error names the offending input as a dotted path (``parcel.area_sqft``,
``settings.pervious_cn``) so the CLI and the HTTP API can report it as CONTRACTS.md
requires ("one clear message that names the offending field") without parsing messages.
"""

from __future__ import annotations

from common.errors import FieldError


class StormwaterError(FieldError):
    """Base of every stormwater domain error.

    ``field`` is the dotted path of the offending input; ``message`` says what is wrong
    with it. ``str(error)`` is ``"<field>: <message>"``, the CONTRACTS.md stderr form.
    """


class InvalidParcel(StormwaterError):
    """A parcel's use or areas break the input rules of CONTRACTS.md (exit 2 / HTTP 4xx)."""


class InvalidSettings(StormwaterError):
    """The tariff's stormwater settings cannot produce an ERU (a configuration error)."""


class InvalidHydrology(StormwaterError):
    """Arguments outside the TR-55 method's domain (e.g. a curve number not in (0, 100])."""
