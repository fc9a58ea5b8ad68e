"""Who may call a portal route: the JWT claims of CONTRACTS.md, checked in one place.

Tokens carry ``sub``, ``role`` (``customer``/``owner``/``staff``), ``tenants`` and, for a
customer, ``accounts`` (for an owner, ``parcels``). API Gateway's JWT authorizer has
already checked the signature, issuer, audience and expiry; the function sees the claims
in ``requestContext.authorizer.jwt.claims``, list claims flattened to ``"[a b]"`` strings.
A caller outside its scope gets 403 with the error shape of ``common.http``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.http import ApiError
from common.observability import act_as


@dataclass(frozen=True)
class Caller:
    sub: str
    role: str
    tenants: tuple[str, ...]
    accounts: tuple[str, ...]
    parcels: tuple[str, ...]


def listed(value: Any) -> tuple[str, ...]:
    """A list claim as API Gateway hands it over ("[a b]") or as a JSON list."""
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    text = str(value or "").strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return tuple(p for p in text.replace(",", " ").split() if p)


def caller(raw_event: dict[str, Any]) -> Caller:
    authorizer = (raw_event.get("requestContext") or {}).get("authorizer") or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    return Caller(
        sub=str(claims.get("sub", "")),
        role=str(claims.get("role", "")),
        tenants=listed(claims.get("tenants")),
        accounts=listed(claims.get("accounts")),
        parcels=listed(claims.get("parcels")),
    )


def require(
    raw_event: dict[str, Any],
    tenant: str,
    *,
    roles: tuple[str, ...] = ("staff",),
    account_id: str | None = None,
    parcel_id: str | None = None,
) -> Caller:
    """The caller, if its token is of one of ``roles`` for ``tenant`` and, for a customer,
    names ``account_id`` (for an owner, ``parcel_id``); else 403 (never another's data).
    The caller's ``sub`` is the actor of what the request does (X-AUDIT: its events name it)."""
    who = caller(raw_event)
    if who.role not in roles or tenant not in who.tenants:
        raise ApiError(403, "forbidden", f"tenant: a {'/'.join(roles)} token of {tenant} is required")
    if who.role == "customer" and (account_id is None or account_id not in who.accounts):
        raise ApiError(403, "forbidden", f"account_id: {account_id} is not an account of this token")
    if who.role == "owner" and (parcel_id is None or parcel_id not in who.parcels):
        raise ApiError(403, "forbidden", f"parcel_id: {parcel_id} is not a parcel of this token")
    act_as(who.sub)
    return who
