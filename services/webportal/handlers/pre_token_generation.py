"""Cognito pre-token-generation trigger (V1): adds ``role``, ``tenants``, ``accounts`` and
``parcels`` to the ID token the hosted UI issues (see ``webportal.claims``)."""

from __future__ import annotations

from typing import Any

from common.observability import observed
from webportal.claims import contract_claims


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = event.get("request") or {}
    groups = (request.get("groupConfiguration") or {}).get("groupsToOverride") or []
    claims = contract_claims(groups, request.get("userAttributes") or {})
    event.setdefault("response", {})["claimsOverrideDetails"] = {"claimsToAddOrOverride": claims}
    return event
