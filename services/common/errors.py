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
