"""The web portal on the local gateway (issue 14): ``/`` and ``/portal/...`` serve the static
pages under ``portal/`` without auth, and ``/_local/portal/...`` is the demo token chooser.

In AWS the same files sit in an S3 bucket behind CloudFront and sign-in is Cognito's hosted
UI (template.yaml); locally the gateway signs tokens for a few demo identities with the
runtime's local issuer, so the pages can be tried without an identity provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sewerbill.local.runtime import LocalRuntime

SITE = Path(__file__).resolve().parents[3] / "portal"
PREFIX = "/portal/"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
MAX_FILE = 2 * 1024 * 1024

# Who the demo chooser can sign in as: two customers, an owner and staff on two tenants. The
# ids are the generated demo utility's (sewerbill.demo.generator, ``expected["identities"]``;
# tests/demo/test_demo_year.py checks they agree): Ada Demo is PP-0001 and stormwater PPW-0001
# on parcel PP-P-0001, which Olive Owner owns and rents to her; Ben Demo is PP-0002.
DEMO_IDENTITIES: dict[str, dict[str, Any]] = {
    "ada": {
        "label": "Ada Demo, customer (sewer PP-0001, stormwater PPW-0001, parcel PP-P-0001)",
        "claims": {
            "role": "customer",
            "name": "Ada Demo",
            "tenants": ["pleasant-prairie-sewer", "pleasant-prairie-stormwater"],
            "accounts": ["PP-0001", "PPW-0001"],
            "parcels": ["PP-P-0001"],
        },
    },
    "ben": {
        "label": "Ben Demo, customer (sewer PP-0002)",
        "claims": {
            "role": "customer",
            "name": "Ben Demo",
            "tenants": ["pleasant-prairie-sewer"],
            "accounts": ["PP-0002"],
        },
    },
    "olive": {
        "label": "Olive Owner, owner of rental parcel PP-P-0001",
        "claims": {
            "role": "owner",
            "name": "Olive Owner",
            "tenants": ["pleasant-prairie-stormwater"],
            "parcels": ["PP-P-0001"],
        },
    },
    "sam": {
        "label": "Sam Staff, staff of Pleasant Prairie sewer",
        "claims": {"role": "staff", "name": "Sam Staff", "tenants": ["pleasant-prairie-sewer"]},
    },
    "wes": {
        "label": "Wes Staff, staff of the Pleasant Prairie Clean Water Utility",
        "claims": {"role": "staff", "name": "Wes Staff", "tenants": ["pleasant-prairie-stormwater"]},
    },
}


def serves(path: str) -> bool:
    return path in ("/", "/portal") or path.startswith(PREFIX)


def headers(content_type: str) -> dict[str, str]:
    return {
        "content-type": content_type,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "content-security-policy": (
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
            "connect-src 'self' https:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        ),
    }


def redirect(path: str) -> str | None:
    """``/`` and ``/portal`` move to ``/portal/`` so the pages' relative links resolve."""
    return PREFIX if path in ("/", "/portal") else None


def page(path: str) -> tuple[int, bytes, str]:
    """The file for ``path`` (already URL-decoded), never one outside ``portal/``."""
    if path == PREFIX:
        path = PREFIX + "index.html"
    relative = path[len(PREFIX) :]
    parts = relative.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") or "\\" in p or "\x00" in p for p in parts):
        return _missing(path)
    target = (SITE / relative).resolve()
    if not target.is_relative_to(SITE.resolve()) or not target.is_file():
        return _missing(path)
    ctype = CONTENT_TYPES.get(target.suffix.lower())
    if ctype is None or target.stat().st_size > MAX_FILE:
        return _missing(path)
    return 200, target.read_bytes(), ctype


def _missing(path: str) -> tuple[int, bytes, str]:
    body = {"error": {"code": "not_found", "message": f"no portal page {path[:200]}"}}
    return 404, json.dumps(body).encode(), "application/json"


def mint(runtime: LocalRuntime, identity: str, ttl: float = 8 * 3600) -> str:
    who = DEMO_IDENTITIES[identity]
    return runtime.mint_token(sub=f"demo-{identity}", ttl=ttl, claims=dict(who["claims"]))


def control(runtime: LocalRuntime, method: str, path: str, body: bytes) -> tuple[int, Any]:
    if path == "/_local/portal/identities" and method == "GET":
        return 200, {"identities": [{"id": k, "label": v["label"]} for k, v in DEMO_IDENTITIES.items()]}
    if path == "/_local/portal/token" and method == "POST":
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = None
        identity = request.get("identity") if isinstance(request, dict) else None
        if not isinstance(identity, str) or identity not in DEMO_IDENTITIES:
            known = ", ".join(DEMO_IDENTITIES)
            return 400, {"error": {"code": "invalid_request", "message": f"identity: one of {known}"}}
        return 200, {"token": mint(runtime, identity), "identity": identity}
    return 404, {"error": {"code": "not_found", "message": f"no control endpoint {method} {path[:200]}"}}
