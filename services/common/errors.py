"""The two kinds of failure every handler distinguishes (STYLE 11, 12).

A handler retries only what can succeed later: a :class:`TransientError` is raised so the
message goes back to its queue (and after ``maxReceiveCount`` attempts to the DLQ). A
:class:`PermanentError` can never succeed: the use case records it and publishes a
rejection naming the reason instead of raising. Services subclass these; code never
matches on message text.
"""

from __future__ import annotations


class SewerbillError(Exception):
    """Base of every error raised on purpose by sewerbill code."""


class TransientError(SewerbillError):
    """Worth retrying: throttling, a lost race on a conditional write, a dependency down."""


class PermanentError(SewerbillError):
    """Retrying cannot help: bad input, unknown tenant, an object that no longer exists."""


class FieldError(PermanentError, ValueError):
    """Bad input that names the offending field as a dotted path (``account.meter_size``,
    ``results[2].bod``), so the CLI and the HTTP API report it without parsing messages
    (CONTRACTS.md: one clear message naming the field). ``str(error)`` is ``"<field>: <message>"``.

    Each service's own error base subclasses it; code matches on the class, never the text.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
