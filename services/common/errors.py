"""The two kinds of failure every handler distinguishes (STYLE 11, 12).

A handler retries only what can succeed later: a :class:`TransientError` is raised so the
message goes back to its queue (and after ``maxReceiveCount`` attempts to the DLQ). A
:class:`PermanentError` can never succeed: the use case records it and publishes a
rejection naming the reason instead of raising. A fault of the deploy (configuration,
permissions: :class:`Misconfigured`, :func:`misconfiguration`) is transient, never bad
data. Services subclass these; code never matches on message text.
"""

from __future__ import annotations


class SewerbillError(Exception):
    """Base of every error raised on purpose by sewerbill code."""


class TransientError(SewerbillError):
    """Worth retrying: throttling, a lost race on a conditional write, a dependency down."""


class Misconfigured(TransientError):
    """The deploy is at fault (a missing variable, a permission the role lacks), not the
    message: retried, then dead-lettered, so the message can be redriven once it is fixed."""


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


# Error codes of AWS answers that mean the function may not do what it asked (its role, a
# key policy, its credentials): the deploy is at fault, not the message (issue 30).
PERMISSION_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "AuthorizationError",
        "ExpiredToken",
        "ExpiredTokenException",
        "Forbidden",
        "InvalidAccessKeyId",
        "InvalidClientTokenId",
        "KMS.AccessDeniedException",
        "KMSAccessDeniedException",
        "MissingAuthenticationToken",
        "SignatureDoesNotMatch",
        "UnauthorizedOperation",
        "UnrecognizedClientException",
        "403",
    }
)


def misconfiguration(exc: BaseException) -> BaseException | None:
    """The configuration or permission fault behind ``exc``, if any: ``exc`` itself or one of
    its causes is :class:`Misconfigured` (``common.config.ConfigError``) or a botocore ``ClientError`` whose code is a permission code. A handler that wrapped such a
    fault in a :class:`PermanentError` must not have the message rejected as bad data for it:
    once the deploy is fixed, the same message succeeds."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, Misconfigured):
            return current
        response = getattr(current, "response", None)
        if isinstance(response, dict):
            code = str((response.get("Error") or {}).get("Code", ""))
            if code in PERMISSION_CODES:
                return current
        current = current.__cause__ or current.__context__
    return None
