"""The OpenAPI document tells the truth about error bodies (CONTRACTS.md "HTTP API")."""

from __future__ import annotations

from common.openapi import GATEWAY_UNAUTHORIZED, build_document, portal_resolvers


def test_every_secured_route_documents_api_gateways_own_401_body_and_public_routes_none() -> None:
    doc = build_document(portal_resolvers())
    schema = doc["components"]["schemas"][GATEWAY_UNAUTHORIZED]
    # The body API Gateway's JWT authorizer sends, which no function can change.
    assert schema["properties"] == {"message": {"type": "string", "const": "Unauthorized"}}
    assert schema["required"] == ["message"]
    operations = [(path, method, op) for path, ops in doc["paths"].items() for method, op in ops.items()]
    secured = [(p, m, op) for p, m, op in operations if op.get("security") != []]
    public = [(p, m, op) for p, m, op in operations if op.get("security") == []]
    assert secured and public
    for path, method, op in secured:
        ref = op["responses"]["401"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{GATEWAY_UNAUTHORIZED}", (method, path)
    for path, method, op in public:
        assert "401" not in op["responses"], (method, path)


def test_every_other_documented_error_uses_the_error_body() -> None:
    doc = build_document(portal_resolvers())
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for status, response in op["responses"].items():
                if status.startswith("4") and status != "401":
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref == "#/components/schemas/ErrorBody", (method, path, status)
