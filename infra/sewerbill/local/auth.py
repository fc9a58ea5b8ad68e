"""A local JWT issuer and the checks an HTTP API JWT authorizer makes.

The runtime generates an RSA key at start; `mint()` signs RS256 tokens with it and
`verify()` checks the key id, signature, exp/nbf/iat (JSON numbers only), iss and aud
against the authorizer's JwtConfiguration from the template, as API Gateway does.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from sewerbill.local.stack import JwtAuthorizer


class Unauthorized(Exception):
    """The request carries no acceptable token (the gateway answers 401)."""


class Forbidden(Exception):
    """The token lacks every scope the route requires (the gateway answers 403)."""


class LocalIssuer:
    def __init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_key = self._key.public_key()
        self.kid = uuid.uuid4().hex[:16]

    def mint(
        self,
        issuer: str,
        audience: str | list[str],
        sub: str = "dev",
        scopes: Iterable[str] = (),
        ttl_s: float = 3600,
        claims: dict[str, Any] | None = None,
    ) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": issuer,
            "aud": audience,
            "sub": sub,
            "iat": now,
            "exp": now + int(ttl_s),
            "jti": uuid.uuid4().hex,
        }
        scopes = list(scopes)
        if scopes:
            payload["scope"] = " ".join(scopes)
        payload.update(claims or {})
        return self.sign(payload)

    def sign(self, payload: dict[str, Any], headers: dict[str, Any] | None = None) -> str:
        """``payload`` signed RS256 with the local key; ``headers`` replace the default
        ``{"kid": <this key>}`` (tests forge tokens with other kids through it)."""
        return jwt.encode(
            payload, self._key, algorithm="RS256", headers={"kid": self.kid} if headers is None else headers
        )

    def jwks(self) -> dict[str, Any]:
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self.public_key, as_dict=True)
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return {"keys": [jwk]}

    def verify(
        self, header_value: str | None, authorizer: JwtAuthorizer, scopes: list[str]
    ) -> dict[str, Any]:
        if not header_value:
            raise Unauthorized("no token")
        token = header_value.strip()
        if token.lower().startswith("bearer "):
            token = token[7:].strip()
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise Unauthorized(str(exc)) from exc
        # API Gateway picks the key by kid from the issuer's JWKS: no kid, or one the issuer
        # does not publish, finds no key; and only the JWKS key's algorithm is accepted.
        if header.get("kid") != self.kid:
            raise Unauthorized("no key with this kid")
        if header.get("alg") != "RS256":
            raise Unauthorized("algorithm not accepted")
        try:
            claims = jwt.decode(
                token,
                self.public_key,
                algorithms=["RS256"],
                audience=authorizer.audience or None,
                issuer=authorizer.issuer or None,
                options={"require": ["exp", "iss"], "verify_aud": bool(authorizer.audience)},
                leeway=0,
            )
        except jwt.PyJWTError as exc:
            raise Unauthorized(str(exc)) from exc
        for name in ("exp", "nbf", "iat"):
            # PyJWT reads a string "exp" with int(); RFC 7519 NumericDate is a JSON number.
            if name in claims and (
                isinstance(claims[name], bool) or not isinstance(claims[name], int | float)
            ):
                raise Unauthorized(f"{name} is not a NumericDate")
        if scopes and not set(scopes) & set(token_scopes(claims)):
            raise Forbidden("insufficient scope")
        return claims


def token_scopes(claims: dict[str, Any]) -> list[str]:
    raw = claims.get("scope", claims.get("scp", ""))
    if isinstance(raw, list):
        return [str(s) for s in raw]
    return [s for s in str(raw).split() if s]


def gateway_claims(claims: dict[str, Any]) -> dict[str, str]:
    """API Gateway hands claims to the function as strings (lists as "[a b]")."""
    out = {}
    for key, value in claims.items():
        if isinstance(value, list):
            out[key] = "[" + " ".join(str(v) for v in value) + "]"
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        else:
            out[key] = str(value)
    return out
