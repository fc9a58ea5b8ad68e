"""Errors of the sampling domain (STYLE 12: a small hierarchy; never match on message text).

Every error names the offending input as a dotted path (``results[2].bod``, ``as_of``,
``tenant``) so the CLI and API can report it without parsing the message.
"""

from __future__ import annotations

from common.errors import FieldError


class SamplingError(FieldError):
    """Base of every sampling-domain error.

    Permanent (retrying cannot help: bad input, unknown tenant) and a ``ValueError``.

    ``field`` is the dotted path of the offending input, ``message`` says what is wrong
    with it; ``str(error)`` is ``"<field>: <message>"``.
    """


class InvalidInput(SamplingError):
    """A value that can never be valid (bad date, negative concentration, unknown field)."""


class UnknownTenant(SamplingError):
    """A tenant without a strength classification rule; ``field`` is ``tenant``."""

    def __init__(self, tenant: object, known: tuple[str, ...]) -> None:
        super().__init__(
            "tenant",
            f"{tenant!r} has no strength classification (expected one of {', '.join(known)})",
        )
        self.tenant = tenant
