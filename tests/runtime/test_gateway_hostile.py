"""The local gateway answers a client's fault as API Gateway does: 4xx, never 5xx or a hang.

Every 4xx body is the documented ``{"error": {"code", "message"}}`` shape, except the JWT
authorizer's 401, which is API Gateway's own ``{"message": "Unauthorized"}`` (CONTRACTS.md).
No answer carries exception text. Requests are sent on raw sockets where a client library
would refuse to send them (a bad Content-Length).
"""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
from datetime import timedelta
from typing import Any

import jwt
import pytest

from sewerbill.local import LocalRuntime
from sewerbill.local.gateway import MAX_API_BODY
from sewerbill.local.stack import Route

pytestmark = pytest.mark.integration


def raw_request(
    rt: LocalRuntime, head: str, body: bytes = b"", *, half_close: bool = False
) -> tuple[int, dict]:
    """Send ``head`` (request line + headers, no blank line) and ``body`` as bytes; the
    status and JSON body of the answer. A hang fails after 10 s instead of blocking."""
    host, port = urllib.parse.urlsplit(rt.gateway_url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n\r\n" + body)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        header_bytes, _, rest = data.partition(b"\r\n\r\n")
        lines = header_bytes.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(
            int(v) for k, _, v in (line.partition(":") for line in lines[1:]) if k.lower() == "content-length"
        )
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return status, json.loads(rest[:length])


def is_error_shape(body: Any, code: str) -> bool:
    return (
        isinstance(body, dict)
        and set(body) == {"error"}
        and set(body["error"]) == {"code", "message"}
        and body["error"]["code"] == code
        and "Traceback" not in body["error"]["message"]
        and "Error(" not in body["error"]["message"]
    )


def post(path: str, *headers: str) -> str:
    return "\n".join([f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *headers])


# --- Content-Length and body -------------------------------------------------------------------


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", " 12x", "0x10", "\uff11"])
def test_a_content_length_that_is_not_a_whole_number_is_400_at_once(rt: LocalRuntime, length: str) -> None:
    started = time.monotonic()
    status, body = raw_request(rt, post("/things/x", f"Content-Length: {length}".encode().decode("latin-1")))
    assert (status, is_error_shape(body, "invalid_request")) == (400, True), body
    assert time.monotonic() - started < 5  # -1 once hung the connection


def test_two_different_content_lengths_are_400(rt: LocalRuntime) -> None:
    status, body = raw_request(rt, post("/things/x", "Content-Length: 2", "Content-Length: 3"), b"{}")
    assert status == 400 and is_error_shape(body, "invalid_request")


def test_a_body_over_api_gateways_10_mb_is_413_without_reading_it(rt: LocalRuntime) -> None:
    status, body = raw_request(rt, post("/things/x", f"Content-Length: {MAX_API_BODY + 1}"))
    assert status == 413 and is_error_shape(body, "payload_too_large")
    status, body = raw_request(rt, post("/things/x", "Content-Length: " + "9" * 40))
    assert status == 413 and is_error_shape(body, "payload_too_large")


def test_a_body_shorter_than_its_content_length_is_400_once_the_client_stops(rt: LocalRuntime) -> None:
    status, body = raw_request(rt, post("/things/x", "Content-Length: 100"), b'{"name":', half_close=True)
    assert status == 400 and is_error_shape(body, "invalid_request")


def test_a_body_that_stops_coming_is_400_while_the_client_still_waits(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client keeps its side open (as a stalled or hostile one does); the gateway stops
    # waiting after its body timeout and answers, where it once held the connection 30 s.
    monkeypatch.setattr(rt.gateway.server.RequestHandlerClass, "body_timeout", 0.5)
    status, body = raw_request(rt, post("/things/x", "Content-Length: 100"), b'{"name":')
    assert status == 400 and is_error_shape(body, "invalid_request")
    assert "8 of 100 bytes" in body["error"]["message"]


def test_a_body_larger_than_one_read_is_read_whole(rt: LocalRuntime) -> None:
    # The body comes in many reads of the socket; all of them make the one body.
    token = rt.mint_token(scopes=["bills:read"])
    payload = json.dumps({"name": "x" * 200_000, "size": 1}).encode()
    head = post(
        "/things/x",
        f"Authorization: Bearer {token}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
    )
    status, body = raw_request(rt, head, payload)
    assert (status, body) == (200, {"tenant": "x", "name": "x" * 200_000, "size": 1})


def test_a_chunked_body_is_411(rt: LocalRuntime) -> None:
    status, body = raw_request(rt, post("/things/x", "Transfer-Encoding: chunked"), b"2\r\n{}\r\n0\r\n\r\n")
    assert status == 411 and is_error_shape(body, "length_required")


def test_a_json_body_that_is_not_utf8_is_400_and_reaches_no_function(rt: LocalRuntime) -> None:
    token = rt.mint_token(scopes=["bills:read"])
    before = len(rt.invocations_of("ApiFunction"))
    body = b'{"name": "\xff\xfe", "size": 1}'
    status, answer = raw_request(
        rt,
        post(
            "/things/x",
            f"Authorization: Bearer {token}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ),
        body,
    )
    assert status == 400 and is_error_shape(answer, "invalid_request")
    assert "UTF-8" in answer["error"]["message"]
    assert len(rt.invocations_of("ApiFunction")) == before


# --- control routes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("/_local/clock", b"{not json", "not a JSON object"),
        ("/_local/clock", b"[1, 2]", "not a JSON object"),
        ("/_local/clock", b"\xff\xfe", "not a JSON object"),
        ("/_local/clock", b'{"by_seconds": "soon"}', "by_seconds"),
        ("/_local/clock", b'{"by_seconds": -5}', "by_seconds"),
        ("/_local/clock", b'{"by_seconds": 1e400}', "by_seconds"),
        ("/_local/clock", b'{"to": "yesterday"}', "to"),
        ("/_local/clock", b'{"to": "2025-01-06T09:00:00"}', "to"),  # no time zone
        ("/_local/clock", b'{"to": "2000-01-01T00:00:00Z"}', "only moves forward"),
        ("/_local/clock", b"{}", "exactly one of"),
        ("/_local/clock", b'{"by_seconds": 1, "at": 2}', "at"),
        ("/_local/token", b'{"scopes": "bills:read"}', "scopes"),
        ("/_local/token", b'{"ttl": "forever"}', "ttl"),
        ("/_local/token", b'{"claims": [1]}', "claims"),
        ("/_local/upload?bucket=UploadsBucket", b"a,b\n", "bucket and key"),
    ],
)
def test_a_malformed_control_request_is_400_naming_what_is_wrong(
    rt: LocalRuntime, path: str, body: bytes, words: str
) -> None:
    clock_before = rt.clock.now
    status, answer = raw_request(rt, post(path, f"Content-Length: {len(body)}"), body)
    assert status == 400 and is_error_shape(answer, "invalid_request"), answer
    assert words in answer["error"]["message"]
    assert rt.clock.now == clock_before


def test_an_unknown_control_route_is_404_in_the_error_shape(rt: LocalRuntime) -> None:
    status, body = raw_request(rt, post("/_local/reboot", "Content-Length: 0"))
    assert status == 404 and is_error_shape(body, "not_found")


def test_a_good_clock_request_still_moves_the_clock(rt: LocalRuntime) -> None:
    before = rt.clock.now
    body = b'{"by_seconds": 60}'
    status, answer = raw_request(rt, post("/_local/clock", f"Content-Length: {len(body)}"), body)
    assert status == 200
    assert rt.clock.now == before + timedelta(seconds=60)
    assert answer["now"] == rt.clock.now.isoformat()


# --- routes, path parameters, event times ----------------------------------------------------


def get(rt: LocalRuntime, path: str, token: str | None = None) -> tuple[int, Any]:
    headers = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1"]
    if token:
        headers.append(f"Authorization: Bearer {token}")
    return raw_request(rt, "\n".join(headers))


def test_an_unknown_route_is_404_in_the_error_shape(rt: LocalRuntime) -> None:
    status, body = get(rt, "/nowhere")
    assert status == 404 and is_error_shape(body, "not_found")


def test_a_token_without_the_routes_scope_is_403_in_the_error_shape(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    authorizer = next(iter(rt.stack.authorizers.values()))
    scoped = Route("GET", "/scoped/{tenant}", "ApiFunction", authorizer, ["bills:admin"])
    monkeypatch.setattr(rt.stack, "routes", [*rt.stack.routes, scoped])
    status, body = get(rt, "/scoped/acme", rt.mint_token(scopes=["bills:read"]))
    assert status == 403 and is_error_shape(body, "forbidden")


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [("pleasant%20prairie", "pleasant prairie"), ("caf%C3%A9", "café"), ("a%2Bb", "a+b")],
)
def test_path_parameters_reach_the_function_url_decoded(rt: LocalRuntime, encoded: str, decoded: str) -> None:
    status, body = get(rt, f"/things/{encoded}", rt.mint_token(scopes=["bills:read"]))
    assert status == 200 and body["tenant"] == decoded


def test_a_path_that_is_not_utf8_once_decoded_is_400(rt: LocalRuntime) -> None:
    status, body = get(rt, "/things/%FF%FE", rt.mint_token(scopes=["bills:read"]))
    assert status == 400 and is_error_shape(body, "invalid_request")


def test_request_times_follow_the_simulated_clock(rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    invoke = rt.invoker.invoke

    def recording(function: str, event: Any, trigger: str) -> Any:
        seen.append(event)
        return invoke(function, event, trigger)

    monkeypatch.setattr(rt.invoker, "invoke", recording)
    assert get(rt, "/health")[0] == 200
    context = seen[-1]["requestContext"]
    assert context["timeEpoch"] == int(rt.clock.now.timestamp() * 1000)
    assert context["time"] == rt.clock.now.strftime("%d/%b/%Y:%H:%M:%S +0000")
    assert rt.clock.now.year == 2025  # the fixture stack's simulated start, not the wall clock


# --- tokens: each is API Gateway's own 401 --------------------------------------------------------


def _claims(rt: LocalRuntime, **changes: Any) -> dict[str, Any]:
    auth = next(iter(rt.stack.authorizers.values()))
    now = int(time.time())
    claims = {
        "iss": auth.issuer,
        "aud": auth.audience[0],
        "sub": "x",
        "iat": now,
        "exp": now + 600,
        "scope": "bills:read",
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _forged(rt: LocalRuntime, case: str) -> str:
    issuer = rt.issuer
    if case == "no-kid":
        return issuer.sign(_claims(rt), headers={})
    if case == "unknown-kid":
        return issuer.sign(_claims(rt), headers={"kid": "not-a-published-key"})
    if case == "string-exp":
        return issuer.sign(_claims(rt, exp=str(int(time.time()) + 600)))
    if case == "bool-exp":
        return issuer.sign(_claims(rt, exp=True))
    if case == "no-exp":
        return issuer.sign(_claims(rt, exp=None))
    if case == "alg-none":
        return jwt.encode(_claims(rt), None, algorithm="none", headers={"kid": issuer.kid})
    if case == "hs256-with-public-key":
        # The classic confusion: the public key used as an HMAC secret.
        header = {"alg": "HS256", "typ": "JWT", "kid": issuer.kid}
        body = json.dumps(_claims(rt)).encode()
        import base64
        import hashlib
        import hmac

        from cryptography.hazmat.primitives import serialization

        def b64(raw: bytes) -> str:
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        signing_input = f"{b64(json.dumps(header).encode())}.{b64(body)}"
        secret = issuer.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return f"{signing_input}.{b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())}"
    if case == "wrong-issuer":
        return issuer.sign(_claims(rt, iss="https://evil.example/"))
    if case == "wrong-audience":
        return issuer.sign(_claims(rt, aud="someone-else"))
    if case == "not-yet-valid":
        return issuer.sign(_claims(rt, nbf=int(time.time()) + 600))
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "no-kid",
        "unknown-kid",
        "string-exp",
        "bool-exp",
        "no-exp",
        "alg-none",
        "hs256-with-public-key",
        "wrong-issuer",
        "wrong-audience",
        "not-yet-valid",
    ],
)
def test_a_forged_or_malformed_token_is_api_gateways_own_401(rt: LocalRuntime, case: str) -> None:
    before = len(rt.invocations_of("ApiFunction"))
    assert get(rt, "/things/acme", _forged(rt, case)) == (401, {"message": "Unauthorized"})
    assert len(rt.invocations_of("ApiFunction")) == before


def test_the_same_claims_signed_properly_are_accepted(rt: LocalRuntime) -> None:
    # The control case of the forgeries above: only the forged part made them fail.
    status, body = get(rt, "/things/acme", rt.issuer.sign(_claims(rt)))
    assert status == 200 and body["tenant"] == "acme"


def test_a_gateway_bug_is_a_500_without_the_exception_text(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("secret detail /home/app/key.pem")

    monkeypatch.setattr(rt.gateway, "openapi", broken)
    status, body = get(rt, "/openapi.json")
    assert (status, body) == (500, {"message": "Internal Server Error"})
