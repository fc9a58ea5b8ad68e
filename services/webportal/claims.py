"""Cognito users to the token claims every service reads (CONTRACTS.md, ``common.authz``).

A user's role is the Cognito group it is in (``staff``, ``owner`` or ``customer``); its
tenants, accounts and parcels are the custom attributes ``custom:tenants``,
``custom:accounts`` and ``custom:parcels`` (ids separated by spaces or commas, set by an
administrator: users cannot write them, see the app client's WriteAttributes). Pure: no
I/O, so the mapping is tested as rules.

Fail closed: a user in no role group, or in two, gets an empty ``role`` and so a 403 from
every route; a staff token carries no accounts or parcels, an owner's no accounts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ROLES = ("staff", "owner", "customer")
# Which id lists each role's token carries (a customer who owns the parcel they live on may
# act on it as its owner: stormwater's owner routes accept a customer naming the parcel).
LISTS_OF_ROLE = {"staff": (), "owner": ("parcels",), "customer": ("accounts", "parcels")}


def ids(value: str | None) -> list[str]:
    """``"a b,c"`` -> ``["a", "b", "c"]`` (order kept, duplicates dropped)."""
    seen: dict[str, None] = {}
    for part in (value or "").replace(",", " ").split():
        seen.setdefault(part, None)
    return list(seen)


def role_of(groups: Iterable[str]) -> str:
    roles = {g for g in groups if g in ROLES}
    return roles.pop() if len(roles) == 1 else ""


def contract_claims(groups: Iterable[str], attributes: Mapping[str, str]) -> dict[str, str]:
    """The claims to add to the token: ``role``, ``tenants`` and the role's id lists, each
    a space-separated string (Cognito's V1 trigger adds string claims; ``common.authz``
    reads a list claim as "a b" or "[a b]")."""
    role = role_of(groups)
    claims = {"role": role, "tenants": " ".join(ids(attributes.get("custom:tenants"))) if role else ""}
    for name in ("accounts", "parcels"):
        given = ids(attributes.get(f"custom:{name}")) if name in LISTS_OF_ROLE.get(role, ()) else []
        claims[name] = " ".join(given)
    return claims
