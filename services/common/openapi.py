"""The portal's OpenAPI document, generated from the route code (CONTRACTS.md "HTTP API").

``python -m common.openapi [PATH]`` writes it (default ``docs/openapi.json``); a test keeps
the committed file equal to what the code generates, and the local gateway serves it at
``/openapi.json``.
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

from common.http import SUCCESS_DESCRIPTION

TITLE = "sewerbill portal API"
VERSION = "0.1.0"

# Handler modules that serve portal routes; each exposes ``app``. A template test checks
# that every function with HttpApi events is listed here.
PORTAL_API_MODULES = (
    "billing.handlers.api",
    "metering.handlers.api",
    "notices.handlers.api",
    "sampling.handlers.api",
    "stormwater.handlers.api",
)


def portal_resolvers() -> list[APIGatewayHttpResolver]:
    return [importlib.import_module(name).app for name in PORTAL_API_MODULES]


def build_document(resolvers: Iterable[APIGatewayHttpResolver]) -> dict[str, Any]:
    """Merge the OpenAPI documents of ``resolvers`` into one (paths and components)."""
    document: dict[str, Any] = {}
    for resolver in resolvers:
        part = json.loads(
            resolver.get_openapi_json_schema(
                title=TITLE,
                version=VERSION,
                security_schemes={"PortalJwt": HTTPBearer(scheme="bearer", bearerFormat="JWT")},
                security=[{"PortalJwt": []}],
            )
        )
        if not document:
            document = part
            continue
        for path, operations in part.get("paths", {}).items():
            served = document["paths"].setdefault(path, {})
            for method, operation in operations.items():
                if method in served:
                    raise ValueError(f"two resolvers serve {method.upper()} {path}")
                served[method] = operation
        for section, entries in part.get("components", {}).items():
            document.setdefault("components", {}).setdefault(section, {}).update(entries)
    return _normalise(document)


PUBLIC_EXTENSION = "x-sewerbill-public"
_POWERTOOLS_VALIDATION_SCHEMAS = ("HTTPValidationError", "ResponseValidationError", "ValidationError")


# API Gateway's JWT authorizer answers 401 itself, before any function runs, with this body;
# it cannot be changed to the ErrorBody shape (CONTRACTS.md), so the document says so.
GATEWAY_UNAUTHORIZED = "GatewayUnauthorized"
_GATEWAY_UNAUTHORIZED_SCHEMA: dict[str, Any] = {
    "title": GATEWAY_UNAUTHORIZED,
    "description": (
        "API Gateway's own body for a missing, expired or invalid token (the JWT authorizer "
        "answers before the function runs); every other error uses ErrorBody."
    ),
    "type": "object",
    "properties": {"message": {"type": "string", "const": "Unauthorized"}},
    "required": ["message"],
}
_GATEWAY_UNAUTHORIZED_RESPONSE: dict[str, Any] = {
    "description": "Missing or invalid token (API Gateway's JWT authorizer)",
    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{GATEWAY_UNAUTHORIZED}"}}},
}


def _normalise(document: dict[str, Any]) -> dict[str, Any]:
    """Say what the API really does: bad input is 400 (``ErrorBody``), never powertools'
    422; a route marked ``x-sewerbill-public`` needs no token (``security: []``); every
    other route may answer API Gateway's own 401 body (:data:`GATEWAY_UNAUTHORIZED`)."""
    secured = False
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            if "tags" in operation:  # powertools may give them in set order (the hash seed's)
                operation["tags"] = sorted(operation["tags"])
            # error_responses() documents the return type as 200; a route that creates says 201.
            if "201" in responses and responses.get("200", {}).get("description") == SUCCESS_DESCRIPTION:
                responses.pop("200")
            if operation.pop(PUBLIC_EXTENSION, False):
                operation["security"] = []
            if operation.get("security") == []:
                responses.pop("401", None)
            else:
                responses["401"] = copy.deepcopy(_GATEWAY_UNAUTHORIZED_RESPONSE)
                secured = True
    if secured:
        document.setdefault("components", {}).setdefault("schemas", {})[GATEWAY_UNAUTHORIZED] = (
            _GATEWAY_UNAUTHORIZED_SCHEMA
        )
    schemas = document.get("components", {}).get("schemas", {})
    for name in _POWERTOOLS_VALIDATION_SCHEMAS:  # in dependency order
        others = {k: v for k, v in schemas.items() if k != name}
        if f"#/components/schemas/{name}" not in json.dumps([document.get("paths", {}), others]):
            schemas.pop(name, None)
    return document


def public_paths(document: dict[str, Any]) -> set[tuple[str, str]]:
    """(METHOD, path) of the operations that need no token."""
    return {
        (method.upper(), path)
        for path, operations in document.get("paths", {}).items()
        for method, operation in operations.items()
        if operation.get("security") == []
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0] if args else "docs/openapi.json")
    target.write_text(render(build_document(portal_resolvers())), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
