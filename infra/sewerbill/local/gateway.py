"""The local HTTP gateway: API Gateway HTTP API (payload 2.0) in front of in-process handlers.

Routes and JWT authorizers come from the template. `/openapi.json` merges the OpenAPI
documents of the functions' Powertools resolvers. `/_local/...` are control endpoints for
the `sewerbill local` commands (loopback clients only).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from common.openapi import build_document
from sewerbill.local.auth import Forbidden, Unauthorized, gateway_claims, token_scopes
from sewerbill.local.stack import Route

if TYPE_CHECKING:
    from sewerbill.local.runtime import LocalRuntime

log = logging.getLogger("sewerbill.local")

_TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/x-www-form-urlencoded",
    "application/javascript",
    "application/problem+json",
    "+json",
    "+xml",
)


def match_route(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    for route in sorted(routes, key=lambda r: r.specificity(), reverse=True):
        if route.method not in (method, "ANY"):
            continue
        found = route.pattern().match(path)
        if found:
            params = {}
            names = [p[1:-1].rstrip("+") for p in _placeholders(route.path)]
            for name, value in zip(names, found.groups(), strict=False):
                params[name] = value
            return route, params
    return None


def _placeholders(path: str) -> list[str]:
    import re

    return re.findall(r"\{[^}]+\}", path)


class Gateway:
    def __init__(self, runtime: LocalRuntime, port: int = 0) -> None:
        self.runtime = runtime
        handler = type("Handler", (_Handler,), {"gateway": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="sewerbill-gateway", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- API Gateway ------------------------------------------------------------------
    def build_event(
        self,
        route: Route,
        params: dict[str, str],
        method: str,
        raw_path: str,
        raw_query: str,
        headers: dict[str, str],
        cookies: list[str],
        body: bytes,
        claims: dict[str, Any] | None,
        source_ip: str,
    ) -> dict[str, Any]:
        content_type = headers.get("content-type", "")
        is_text = not body or any(t in content_type for t in _TEXT_TYPES)
        query: dict[str, str] = {}
        for key, value in parse_qsl(raw_query, keep_blank_values=True):
            query[key] = f"{query[key]},{value}" if key in query else value
        now = datetime.now(UTC)
        stack = self.runtime.stack
        event: dict[str, Any] = {
            "version": "2.0",
            "routeKey": route.route_key,
            "rawPath": raw_path,
            "rawQueryString": raw_query,
            "headers": headers,
            "requestContext": {
                "accountId": stack.account,
                "apiId": "local",
                "domainName": headers.get("host", "127.0.0.1"),
                "domainPrefix": "local",
                "http": {
                    "method": method,
                    "path": raw_path,
                    "protocol": "HTTP/1.1",
                    "sourceIp": source_ip,
                    "userAgent": headers.get("user-agent", ""),
                },
                "requestId": uuid.uuid4().hex,
                "routeKey": route.route_key,
                "stage": "$default",
                "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
                "timeEpoch": int(now.timestamp() * 1000),
            },
            "isBase64Encoded": not is_text,
        }
        if cookies:
            event["cookies"] = cookies
        if query:
            event["queryStringParameters"] = query
        if params:
            event["pathParameters"] = params
        if body:
            event["body"] = body.decode("utf-8") if is_text else base64.b64encode(body).decode()
        if claims is not None:
            event["requestContext"]["authorizer"] = {
                "jwt": {"claims": gateway_claims(claims), "scopes": token_scopes(claims) or None}
            }
        return event

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document of the HTTP functions' Powertools resolvers.

        Built by ``common.openapi.build_document``, the same code that writes the committed
        ``docs/openapi.json``, so the gateway serves what the repository documents. A
        function without a resolver is still listed by its template routes.
        """
        resolvers: list[Any] = []
        bare: list[str] = []
        for function in sorted({r.function for r in self.runtime.stack.routes}):
            app = getattr(self.runtime.invoker.module(function), "app", None)
            if app is not None and hasattr(app, "get_openapi_json_schema"):
                resolvers.append(app)
            else:
                bare.append(function)
        doc: dict[str, Any] = build_document(resolvers) if resolvers else {"openapi": "3.1.0", "paths": {}}
        doc.setdefault("info", {"title": self.runtime.stack.name, "version": "local"})
        for route in self.runtime.stack.routes:
            if route.function in bare and route.path != "$default":
                method = "get" if route.method == "ANY" else route.method.lower()
                doc["paths"].setdefault(route.path, {})[method] = {"operationId": route.function}
        return doc


class _Handler(BaseHTTPRequestHandler):
    gateway: Gateway
    protocol_version = "HTTP/1.1"
    server_version = "sewerbill-local"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("gateway: " + format, *args)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    def do_OPTIONS(self) -> None:  # noqa: N802
        self._dispatch("OPTIONS")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("HEAD")

    # --- plumbing -----------------------------------------------------------------------
    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        cookies: list[str] | None = None,
    ) -> None:
        self.send_response(status)
        headers = dict(headers or {})
        headers.setdefault("content-type", "application/json")
        for key, value in headers.items():
            if key.lower() != "content-length":
                self.send_header(key, value)
        for cookie in cookies or []:
            self.send_header("set-cookie", cookie)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, default=str).encode())

    def _dispatch(self, method: str) -> None:
        try:
            self._dispatch_inner(method)
        except Exception as exc:  # noqa: BLE001 - a gateway never dies on one request
            log.exception("gateway error")
            self._json(500, {"message": "Internal Server Error", "detail": str(exc)})

    def _dispatch_inner(self, method: str) -> None:
        parts = urlsplit(self.path)
        raw_path, raw_query = parts.path or "/", parts.query
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if raw_path == "/openapi.json" and method == "GET":
            return self._json(200, self.gateway.openapi())
        if raw_path == "/.well-known/jwks.json" and method == "GET":
            return self._json(200, self.gateway.runtime.issuer.jwks())
        if raw_path.startswith("/_local/"):
            if self.client_address[0] not in ("127.0.0.1", "::1"):
                return self._json(403, {"message": "Forbidden"})
            status, payload = self.gateway.runtime.control(method, raw_path, dict(parse_qsl(raw_query)), body)
            return self._json(status, payload)
        found = match_route(self.gateway.runtime.stack.routes, method, raw_path)
        if found is None:
            return self._json(404, {"message": "Not Found"})
        route, params = found
        headers: dict[str, str] = {}
        for key, value in self.headers.items():
            key = key.lower()
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        cookies = [c.strip() for c in headers.pop("cookie", "").split(";") if c.strip()]
        claims = None
        if route.authorizer is not None:
            source = route.authorizer.identity_source
            header_name = (
                source.rsplit(".", 1)[-1].lower()
                if source.startswith("$request.header.")
                else "authorization"
            )
            try:
                claims = self.gateway.runtime.issuer.verify(
                    headers.get(header_name), route.authorizer, route.scopes
                )
            except Unauthorized:
                return self._send(401, b'{"message":"Unauthorized"}', {"www-authenticate": "Bearer"})
            except Forbidden:
                return self._json(403, {"message": "Forbidden"})
        event = self.gateway.build_event(
            route, params, method, raw_path, raw_query, headers, cookies, body, claims, self.client_address[0]
        )
        started = time.perf_counter()
        inv = self.gateway.runtime.invoker.invoke(route.function, event, "http")
        log.info(
            "%s %s -> %s (%.0f ms)", method, raw_path, route.function, (time.perf_counter() - started) * 1000
        )
        if inv.error:
            return self._json(500, {"message": "Internal Server Error"})
        self._respond(inv.result)

    def _respond(self, result: Any) -> None:
        if isinstance(result, dict) and "statusCode" in result:
            body = result.get("body") or ""
            raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode()
            headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
            for key, values in (result.get("multiValueHeaders") or {}).items():
                headers[key] = ",".join(str(v) for v in values)
            return self._send(int(result["statusCode"]), raw, headers, result.get("cookies"))
        # Payload 2.0: a response without statusCode is taken as a 200 JSON body.
        raw = result.encode() if isinstance(result, str) else json.dumps(result).encode()
        return self._send(200, raw)
