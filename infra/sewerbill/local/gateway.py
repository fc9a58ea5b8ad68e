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
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from sewerbill.local import portal_site
from sewerbill.local.auth import Forbidden, Unauthorized, gateway_claims, token_scopes
from sewerbill.local.invoker import TimedOut
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


# API Gateway HTTP APIs take payloads up to 10 MB; uploads through the control route (a
# local stand-in for an S3 PUT) may be larger but are still bounded.
MAX_API_BODY = 10 * 1024 * 1024
MAX_UPLOAD_BODY = 256 * 1024 * 1024


class ClientFault(Exception):
    """The caller's fault: answered with a 4xx and the error shape (CONTRACTS.md), never 5xx.

    ``close`` when the request body was not read (its length could not be trusted), so the
    connection cannot be reused.
    """

    def __init__(self, status: int, code: str, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.close = close


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def match_route(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The most specific route for ``path`` (already URL-decoded) and its path parameters."""
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


class _ClockRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: AwareDatetime | None = None
    by_seconds: float | None = Field(default=None, ge=0, le=200 * 366 * 86400, allow_inf_nan=False)


class _TokenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sub: str = Field(default="dev", min_length=1, max_length=256)
    scopes: list[str] = Field(default_factory=list, max_length=50)
    ttl: float = Field(default=3600, gt=0, le=366 * 86400, allow_inf_nan=False)
    claims: dict[str, Any] | None = None


class _RedriveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    queue: str = Field(min_length=1, max_length=1024)  # a DLQ (or its source): logical id, name, URL


class _ReplayRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    day: date
    queue: str = Field(min_length=1, max_length=1024)  # logical id, name or URL
    archive: str | None = Field(default=None, min_length=1, max_length=256)


_CONTROL_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("POST", "/_local/clock"): _ClockRequest,
    ("POST", "/_local/token"): _TokenRequest,
    ("POST", "/_local/dlq/redrive"): _RedriveRequest,
    ("POST", "/_local/replay"): _ReplayRequest,
}
_CONTROL_ROUTES = {("GET", "/_local/status"), ("GET", "/_local/dlq"), ("POST", "/_local/drain")}


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
        if is_text and body:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError:
                raise ClientFault(400, "invalid_request", f"the body is not UTF-8 ({content_type})") from None
        query: dict[str, str] = {}
        for key, value in parse_qsl(raw_query, keep_blank_values=True):
            query[key] = f"{query[key]},{value}" if key in query else value
        now = self.now()
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

    def now(self) -> datetime:
        """The runtime's simulated time: request times follow it as every handler's clock does."""
        return self.runtime.clock.now.astimezone(UTC)

    def control(self, method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        """A control route, its request checked here so the runtime only sees valid ones."""
        if path == "/_local/upload" and method == "POST":
            if not query.get("bucket") or not query.get("key"):
                raise ClientFault(400, "invalid_request", "bucket and key query parameters are required")
            return self.runtime.control(method, path, query, body)
        model = _CONTROL_BODIES.get((method, path))
        if model is None:
            if (method, path) not in _CONTROL_ROUTES:
                raise ClientFault(404, "not_found", f"no control endpoint {method} {path}")
            return self.runtime.control(method, path, query, b"")
        try:
            request = model.model_validate_json(body or b"{}")
        except ValidationError as exc:
            raise ClientFault(400, "invalid_request", _validation_message(exc)) from None
        if isinstance(request, _ClockRequest):
            if (request.to is None) == (request.by_seconds is None):
                raise ClientFault(400, "invalid_request", "give exactly one of to and by_seconds")
            if request.to is not None and request.to < self.runtime.clock.now:
                raise ClientFault(
                    400, "invalid_request", f"to: the clock only moves forward (now {self.now().isoformat()})"
                )
        return self.runtime.control(method, path, query, request.model_dump_json(exclude_none=True).encode())

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document of the HTTP functions' Powertools resolvers.

        Built by ``common.openapi.build_document``, the same code that writes the committed
        ``docs/openapi.json``, so the gateway serves what the repository documents. A
        function without a resolver is still listed by its template routes.
        """
        resolvers: list[Any] = []
        bare: list[str] = []
        functions = sorted({r.function for r in self.runtime.stack.routes})
        # Asked of each function in its own environment (cold starts, if not yet, side by side).
        with ThreadPoolExecutor(max_workers=max(1, len(functions))) as pool:
            served = list(pool.map(lambda f: self.runtime.invoker.has_entry(f, _OPENAPI), functions))
        for function, has_resolver in zip(functions, served, strict=True):
            if has_resolver:
                resolvers.append(_FunctionResolver(self.runtime.invoker, function))
            else:
                bare.append(function)
        from common.openapi import build_document  # Powertools' OpenAPI models: 0.3 s, asked rarely

        doc: dict[str, Any] = build_document(resolvers) if resolvers else {"openapi": "3.1.0", "paths": {}}
        doc.setdefault("info", {"title": self.runtime.stack.name, "version": "local"})
        for route in self.runtime.stack.routes:
            if route.function in bare and route.path != "$default":
                method = "get" if route.method == "ANY" else route.method.lower()
                doc["paths"].setdefault(route.path, {})[method] = {"operationId": route.function}
        return doc


_OPENAPI = "app.get_openapi_json_schema"


class _FunctionResolver:
    """A function's Powertools resolver, as `build_document` uses one: its OpenAPI document
    is built where the resolver lives (the function's process, or its modules here)."""

    def __init__(self, invoker: Any, function: str) -> None:
        self.invoker = invoker
        self.function = function

    def get_openapi_json_schema(self, **options: Any) -> str:
        return str(self.invoker.call_entry(self.function, _OPENAPI, **options))


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        if not where or err.get("type") in {"json_invalid", "json_type"}:
            parts.append("the body is not a JSON object")
        else:
            parts.append(f"{where}: {err.get('msg', 'is invalid')}")
    return "; ".join(parts)


class _Handler(BaseHTTPRequestHandler):
    gateway: Gateway
    protocol_version = "HTTP/1.1"
    server_version = "sewerbill-local"
    timeout = 30  # an idle connection (no request line or headers coming) is dropped
    body_timeout = 5.0  # a body that stops coming for this long is a 400 (_read_exactly)

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
        except ClientFault as fault:
            if fault.close:
                self.close_connection = True
            self._json(fault.status, error_body(fault.code, fault.message))
        except TimeoutError:
            self.close_connection = True  # the client stopped sending; nobody to answer
        except Exception:  # noqa: BLE001 - a gateway never dies on one request
            log.exception("gateway error on %s %s", method, self.path[:200])
            # API Gateway's own body; the exception stays in the log, never in the answer.
            self._json(500, {"message": "Internal Server Error"})

    def _read_body(self, limit: int) -> bytes:
        """The request body, read only when its length is a whole number within ``limit``."""
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            raise ClientFault(411, "length_required", "send the body with a Content-Length", close=True)
        values = self.headers.get_all("content-length") or []
        if not values:
            return b""
        raw = values[0].strip()
        if len(set(values)) > 1 or not (raw.isascii() and raw.isdigit()):
            raise ClientFault(
                400, "invalid_request", "Content-Length must be one non-negative whole number", close=True
            )
        if len(raw) > 15 or int(raw) > limit:
            raise ClientFault(413, "payload_too_large", f"the body is over {limit} bytes", close=True)
        return self._read_exactly(int(raw))

    def _read_exactly(self, length: int) -> bytes:
        """``length`` bytes of body, or a 400 once the client has sent nothing for
        ``body_timeout`` seconds (or closed its side) before they all came: a client that
        promises more than it sends is answered, not held. A large upload that keeps coming
        is read however long it takes."""
        chunks: list[bytes] = []
        missing = length
        self.connection.settimeout(self.body_timeout)
        try:
            while missing:
                try:
                    chunk = self.rfile.read1(min(missing, 1 << 20))
                except TimeoutError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
                missing -= len(chunk)
        finally:
            self.connection.settimeout(self.timeout)
        if missing:
            raise ClientFault(
                400,
                "invalid_request",
                f"the body is shorter than its Content-Length: {length - missing} of {length} bytes,"
                f" then nothing for {self.body_timeout:g} s",
                close=True,
            )
        return b"".join(chunks)

    def _dispatch_inner(self, method: str) -> None:
        parts = urlsplit(self.path)
        # HTTP APIs hand the function a URL-decoded rawPath and path parameters (unlike REST
        # APIs); the query is decoded by parse_qsl into queryStringParameters.
        try:
            raw_path, raw_query = unquote(parts.path or "/", errors="strict"), parts.query
        except UnicodeDecodeError:
            raise ClientFault(
                400, "invalid_request", "the path is not UTF-8 once URL-decoded", close=True
            ) from None
        body = self._read_body(MAX_UPLOAD_BODY if raw_path == "/_local/upload" else MAX_API_BODY)
        if method in ("GET", "HEAD") and portal_site.serves(raw_path):
            moved = portal_site.redirect(raw_path)
            if moved is not None:
                return self._send(302, b"", {"location": moved, "content-type": "text/plain"})
            status, payload, ctype = portal_site.page(raw_path)
            return self._send(status, payload, portal_site.headers(ctype))
        if raw_path.startswith("/_local/portal/"):
            if self.client_address[0] not in ("127.0.0.1", "::1"):
                raise ClientFault(403, "forbidden", "control endpoints answer loopback clients only")
            return self._json(*portal_site.control(self.gateway.runtime, method, raw_path, body))
        if raw_path == "/openapi.json" and method == "GET":
            return self._json(200, self.gateway.openapi())
        if raw_path == "/.well-known/jwks.json" and method == "GET":
            return self._json(200, self.gateway.runtime.issuer.jwks())
        if raw_path.startswith("/_local/"):
            if self.client_address[0] not in ("127.0.0.1", "::1"):
                raise ClientFault(403, "forbidden", "control endpoints answer loopback clients only")
            status, payload = self.gateway.control(method, raw_path, dict(parse_qsl(raw_query)), body)
            return self._json(status, payload)
        found = match_route(self.gateway.runtime.stack.routes, method, raw_path)
        if found is None:
            raise ClientFault(404, "not_found", f"no route {method} {raw_path[:200]}")
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
                raise ClientFault(
                    403, "forbidden", "the token has none of the scopes this route requires"
                ) from None
        event = self.gateway.build_event(
            route, params, method, raw_path, raw_query, headers, cookies, body, claims, self.client_address[0]
        )
        started = time.perf_counter()
        inv = self.gateway.runtime.invoker.invoke(route.function, event, "http")
        log.info(
            "%s %s -> %s (%.0f ms)", method, raw_path, route.function, (time.perf_counter() - started) * 1000
        )
        if inv.error and inv.error.startswith(TimedOut.error_type):
            # the function ran past its Timeout (every route's is within the HTTP API's 30 s
            # integration limit): answered as a gateway timeout, not as the function's error
            return self._json(504, {"message": "Gateway Timeout"})
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
