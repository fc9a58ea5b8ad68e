"""One function's execution environment, in its own process (the invoker's default).

What Lambda gives a function, by construction rather than by discipline: its own process,
so its environment variables, its modules (a cold start imports the handler once) and its
module-level state (a composition root) are its own and cannot leak into another
function's. `serve` runs in a child of a forkserver (see `sewerbill.local.invoker`) and
answers the runtime over one pipe:

    ("invoke", event, now, extra_env) -> ("done", (result, error, traceback, duration_ms))
    ("call", "app.get_openapi_json_schema", args, kwargs) -> ("done", ("ok", value) | ("missing", text) | ("error", text))
    ("call", "app.get_openapi_json_schema", None, None)   -> ("done", ("ok", whether it is callable) | ("missing", text))
    None (or the runtime gone: the pipe closes)           -> the process exits

While it works, a worker's AWS calls to the emulator's endpoint go to the runtime on the
same pipe when moto runs in the runtime's process, ("aws", method, url, headers, body) ->
(status, headers, body), or None: "send it over HTTP yourself" (see `_forward_calls_to`).
A call of a JSON-protocol service (DynamoDB, EventBridge, SQS) is sent from the client's
`_make_request`, as botocore serialized it, and its answer parsed by botocore's parser
without botocore's HTTP request path (`answered_by`); any other (S3's) from botocore's
`before-send`, after botocore's whole request path.

`now` is the runtime's simulated time, installed as this process's `common.clock` for the
invocation (None: the system clock, as deployed, where nothing installs one). The module
imports only the standard library, so a worker starts without the runtime's own imports.
"""

from __future__ import annotations

import importlib
import importlib.abc
import io
import logging
import os
import pickle
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

# What a worker keeps of the runtime's own environment (Lambda sets these too); everything
# else comes from the function's configuration.
PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "PYTHONPATH", "PYTHONHASHSEED")


class FakeLambdaContext:
    """The attributes of a Lambda context that handlers and Powertools read."""

    def __init__(self, fn: dict[str, Any]) -> None:
        self.function_name = fn["name"]
        self.function_version = "$LATEST"
        self.invoked_function_arn = fn["arn"]
        self.memory_limit_in_mb = fn["memory_mb"]
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{fn['name']}"
        self.log_stream_name = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]local"
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self._deadline = time.monotonic() + fn["timeout_s"]

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class SentClock:
    """The time the runtime sent with the current invocation (common.clock's Clock)."""

    def __init__(self) -> None:
        self.at: datetime | None = None

    def now(self) -> datetime:
        return self.at or datetime.now(UTC)


def resolve(module: Any, dotted: str) -> Any:
    target = module
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


class _NotInArtifact(importlib.abc.MetaPathFinder):
    """Refuses a guarded module the function's artifact does not hold, as the import in AWS
    would fail (Runtime.ImportModuleError at a cold start, or where a module imports late)."""

    def __init__(self, guarded: frozenset[str], permitted: Callable[[str], bool]) -> None:
        self.guarded = guarded
        self.permitted = permitted

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.guarded and not self.permitted(fullname):
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in this function's artifact (its service's package, "
                "its requirements.txt and its layers: template.yaml)",
                name=fullname,
            )
        return None


def confine_imports(rules: dict[str, list[str]] | None) -> None:
    """Make this process import only what the function's artifact holds (`rules`: from
    `sewerbill.local.template.import_rules`): of the guarded top-level names (first-party
    packages, the functions' libraries), only the allowed modules, their submodules and the
    packages above them. What the forkserver preloaded for every function (other services'
    domains, notices' PDF libraries) and this artifact lacks is dropped first, so that a
    function that imports another service's module or a library its artifact lacks fails
    here as it would in AWS."""
    if not rules:
        return
    guarded = frozenset(rules["guarded"])
    allowed = tuple(rules["allowed"])

    def permitted(name: str) -> bool:
        return any(name == a or name.startswith(a + ".") or a.startswith(name + ".") for a in allowed)

    for name in [n for n in sys.modules if n.partition(".")[0] in guarded and not permitted(n)]:
        del sys.modules[name]
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
            delattr(sys.modules[parent], child)
    sys.meta_path.insert(0, _NotInArtifact(guarded, permitted))


def serve(conn: Any, fn: dict[str, Any], env: dict[str, str]) -> None:
    """The worker's life: its environment, its cold start, then invocations until told to stop."""
    os.environ.clear()
    os.environ.update(env)
    if fn["forward"]:
        _forward_calls_to(conn, fn["forward"] + "/")
    confine_imports(fn.get("imports"))
    if fn["code_dir"]:
        sys.path.insert(0, fn["code_dir"])
    clock = SentClock()
    stamp_logs_with(lambda: clock.at)
    module_name, _, attr = fn["handler"].rpartition(".")
    started = time.perf_counter()
    try:
        module = importlib.import_module(module_name)
        handler = getattr(module, attr)
        clocks = _clock_module()
    except BaseException:  # noqa: BLE001 - reported to the runtime, which raises it
        conn.send(("done", ("init-error", traceback.format_exc())))
        return
    conn.send(("done", ("ready", (time.perf_counter() - started) * 1000)))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the runtime is gone: so is its function
            return
        if message is None:
            return
        if message[0] == "invoke":
            _, event, now, extra_env = message
            clock.at = now
            if clocks is not None:
                clocks.install(clock if now is not None else None)
            answer = _invoke(handler, event, fn, extra_env)
            try:
                send(conn, ("done", answer))
            except Exception as exc:  # noqa: BLE001 - a result pickle cannot carry
                conn.send(("done", (None, f"Runtime.MarshalError: {exc}", None, answer[3])))
        else:
            _, dotted, args, kwargs = message
            try:
                target = resolve(module, dotted)
            except AttributeError as exc:
                conn.send(("done", ("missing", str(exc))))
                continue
            if args is None:  # only asked whether it is there
                conn.send(("done", ("ok", callable(target))))
                continue
            try:
                conn.send(("done", ("ok", target(*args, **kwargs))))
            except Exception as exc:  # noqa: BLE001 - the caller raises it
                conn.send(("done", ("error", f"{type(exc).__name__}: {exc}")))


def send(conn: Any, message: Any) -> None:
    """`conn.send(message)` as one plain pickle: what `Connection.recv` reads back, without
    the `ForkingPickler` multiprocessing builds per message (a copy of copyreg's dispatch
    table each time) for reducers these messages never need (plain data: events, results,
    AWS requests and answers). Raises what pickling raises, before anything is written."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _invoke(
    handler: Any, event: Any, fn: dict[str, Any], extra_env: dict[str, str] | None
) -> tuple[Any, str | None, str | None, float]:
    saved = {k: os.environ.get(k) for k in extra_env or {}}
    os.environ.update(extra_env or {})
    started = time.perf_counter()
    result: Any = None
    error = trace = None
    try:
        result = handler(event, FakeLambdaContext(fn))
    except Exception as exc:  # noqa: BLE001 - a failed invocation, as Lambda reports it
        error = f"{type(exc).__name__}: {exc}"
        trace = traceback.format_exc(limit=5)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return result, error, trace, (time.perf_counter() - started) * 1000


class _Body(io.BytesIO):
    """A response body as botocore reads one (urllib3's `stream`)."""

    def stream(self, **_: Any) -> Any:
        while chunk := self.read(65536):
            yield chunk


def _forward_calls_to(conn: Any, endpoint: str) -> None:
    """Send this process's AWS calls to `endpoint` (moto in the runtime's process) over the
    pipe: the runtime answers them with moto's application directly, without its HTTP
    server's hop (a socket, a thread and HTTP parsing per call). Calls to any other endpoint
    (a per-service override such as DynamoDB Local) go over HTTP as botocore sends them."""
    from botocore.awsrequest import AWSResponse
    from botocore.handlers import BUILTIN_HANDLERS

    def forward(request: Any, **_: Any) -> Any:
        if not request.url.startswith(endpoint):
            return None
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        if isinstance(body, str):
            body = body.encode()
        headers = {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        send(conn, ("aws", request.method, request.url, headers, body or b""))
        answer = conn.recv()
        if answer is None:
            return None
        status, response_headers, data = answer
        return AWSResponse(request.url, status, response_headers, _Body(data))

    def ask(method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
        if not url.startswith(endpoint):
            return None
        send(conn, ("aws", method, url, headers, body))
        return conn.recv()

    BUILTIN_HANDLERS.append(("creating-client-class", answered_by(ask)))
    BUILTIN_HANDLERS.append(("before-send", forward))
    if _served_by(endpoint, "DYNAMODB"):
        BUILTIN_HANDLERS.extend(unsigned_dynamodb(os.environ.get("AWS_ACCESS_KEY_ID", "")))


Ask = Callable[[str, str, dict[str, str], bytes], "tuple[int, dict[str, str], bytes] | None"]
# The protocols whose calls `answered_by` answers itself (one JSON body each way); the others
# (S3's REST, query) keep botocore's whole path, their hooks and checksums.
ANSWERED_PROTOCOLS = frozenset({"json"})


def answered_by(ask: Ask) -> Callable[..., None]:
    """A botocore ``creating-client-class`` handler: the clients made from then on hand each
    call of a JSON-protocol service to ``ask(method, url, headers, body)`` (moto in the
    runtime's process) as the request botocore serialized it, and parse its answer
    ``(status, headers, body)`` with botocore's own parser for the protocol, without
    botocore's HTTP request path (`Endpoint.make_request`: the AWSRequest and its
    preparation, the request-created events and signing, before-send, the retry checks),
    which was about 60% of a function worker's botocore time. ``ask`` answers None for a call
    it does not serve (another endpoint): botocore's own path sends it.

    What the client's `_make_api_call` does around `_make_request` is untouched (parameter
    validation and serialization, endpoint resolution, compression, request checksums,
    before-call and after-call events, raising the modelled error of a status >= 300, and
    whatever wraps `_make_api_call`, as X-Ray's and the benchmarks' counters do); and of what
    `Endpoint.make_request` does after the send, the same steps run here: the response dict,
    the response checksum, before-parse, the parse, the modelled error fields,
    response-received and ``RetryAttempts``. The request carries the client's access key in
    an unsigned ``Authorization`` header of SigV4's form (moto reads the account from it and
    checks no signature unless IAM authorisation is on, when the runtime answers None).
    Retries: moto never throttles; a 5xx answer (moto failing) is sent again by botocore's
    own path, whose retry handler decides. tests/runtime/test_answered_calls.py compares the
    answers with botocore's normal path's."""
    from botocore.awsrequest import AWSResponse
    from botocore.endpoint import convert_to_response_dict
    from botocore.httpchecksum import handle_checksum_body

    class AnsweredHere:
        def _resolve_endpoint_ruleset(
            self,
            operation_model: Any,
            params: Any,
            request_context: Any,
            ignore_signing_region: bool = False,
        ) -> Any:
            client: Any = self  # a botocore client: this class is one of its bases
            return resolved_endpoint(
                client,
                super()._resolve_endpoint_ruleset,  # type: ignore[misc]
                operation_model,
                params,
                request_context,
                ignore_signing_region,
            )

        def _convert_to_request_dict(
            self, api_params: Any, operation_model: Any, *args: Any, **kwargs: Any
        ) -> Any:
            client: Any = self
            if (
                type(client._serializer) is not KeptSerializations
                and operation_model.service_model.resolved_protocol in ANSWERED_PROTOCOLS
            ):
                client._serializer = KeptSerializations(client._serializer)
            return super()._convert_to_request_dict(api_params, operation_model, *args, **kwargs)  # type: ignore[misc]

        def _make_request(
            self, operation_model: Any, request_dict: dict[str, Any], request_context: Any
        ) -> Any:
            client: Any = self  # a botocore client: this class is one of its bases
            try:
                answered = _answer(client, operation_model, request_dict)
            except Exception as exc:
                service_id = client._service_model.service_id.hyphenize()
                client.meta.events.emit(
                    f"after-call-error.{service_id}.{operation_model.name}",
                    exception=exc,
                    context=request_context,
                )
                raise
            if answered is None:
                return super()._make_request(operation_model, request_dict, request_context)  # type: ignore[misc]
            return answered

    def _answer(client: Any, operation_model: Any, request_dict: dict[str, Any]) -> Any:
        service_model = operation_model.service_model
        if service_model.resolved_protocol not in ANSWERED_PROTOCOLS or (
            operation_model.has_streaming_input
            or operation_model.has_streaming_output
            or operation_model.has_event_stream_output
        ):
            return None
        body = request_dict["body"]
        if not isinstance(body, bytes | str):
            return None
        if isinstance(body, str):
            body = body.encode()
        headers = dict(request_dict["headers"])
        if body:
            headers["Content-Length"] = str(len(body))
        signer = client._request_signer
        credentials = signer._credentials
        if credentials is not None and "Authorization" not in headers:
            headers["Authorization"] = (
                f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/19700101/{signer._region_name}/"
                f"{signer._signing_name}/aws4_request, SignedHeaders=host, Signature=unsigned-local"
            )
        url = request_dict["url"]
        answer = ask(request_dict["method"], url, headers, body)
        if answer is None or answer[0] >= 500:
            return None
        status, response_headers, data = answer
        http_response = AWSResponse(url, status, response_headers, _Body(data))
        http_response._content = data
        context = request_dict["context"]
        response_dict = convert_to_response_dict(http_response, operation_model)
        handle_checksum_body(http_response, response_dict, context, operation_model)
        events = client.meta.events
        service_id = service_model.service_id.hyphenize()
        customized: dict[str, Any] = {}
        events.emit(
            f"before-parse.{service_id}.{operation_model.name}",
            operation_model=operation_model,
            response_dict=response_dict,
            customized_response_dict=customized,
        )
        endpoint = client._endpoint
        parser = endpoint._response_parser_factory.create_parser(service_model.resolved_protocol)
        parsed = parser.parse(response_dict, operation_model.output_shape)
        parsed.update(customized)
        if status >= 300:
            endpoint._add_modeled_error_fields(response_dict, parsed, operation_model, parser)
        events.emit(
            f"response-received.{service_id}.{operation_model.name}",
            response_dict=response_dict,
            parsed_response=parsed,
            context=context,
            exception=None,
        )
        if "ResponseMetadata" in parsed:
            parsed["ResponseMetadata"]["RetryAttempts"] = 0
        return http_response, parsed

    def insert(base_classes: list[type], **_: Any) -> None:
        if AnsweredHere not in base_classes:
            base_classes.insert(0, AnsweredHere)

    return insert


# Endpoints a client's ruleset gave, per client: (operation, flag, builtins, call's parameters)
# pickled -> the URL (see `resolved_endpoint`); bounded, as a long-lived client's Queries differ
ENDPOINTS_KEPT = 256
# Parameters kept only up to this size (pickled): a daily run's read of its mark comes again
# with the same few hundred bytes; a batch of 25 items never does, and keeping 256 of them
# (key and request, about 60 KB each) was 17 MiB more in a read file's metering function.
KEPT_PARAMETERS_MAX = 4096
# Operations whose parameters are a batch of items or keys: never kept, and not pickled to find
# that out (a read file's 25-item batches pickled twice a call, for each cache, only to be
# found too large: about 0.1 ms a call, 1,200 calls a 10,000-row file; issue 7).
NEVER_KEPT = frozenset({"BatchWriteItem", "BatchGetItem", "TransactWriteItems", "TransactGetItems"})


def resolved_endpoint(
    client: Any,
    resolve: Callable[..., Any],
    operation_model: Any,
    params: Any,
    request_context: Any,
    ignore_signing_region: bool,
) -> Any:
    """What ``resolve`` (botocore's ``BaseClient._resolve_endpoint_ruleset``) answers, kept per
    client for calls of a JSON-protocol service made again with the same parameters (a daily
    run's read of its mark): the endpoint ruleset is a pure function of the client's builtins
    (region, endpoint URL, FIPS, dual-stack: fixed when the client is made), the operation and
    the call's parameters, so the same inputs give the same URL (a deferred builtin, the
    account id, is read each time and is part of the inputs). Building the ruleset's
    parameters for each call (the operation's context parameters, the builtins, an event)
    was a tenth of a function's GetItem, client and emulator together.

    Kept only when nothing else can change the answer or see the resolution: the service's
    protocol is JSON, no handler is registered for ``before-endpoint-resolution`` (S3's, a
    Stubber's), and the resolution gave no headers and no properties (authSchemes would
    change the request's signing context, which ``resolve`` sets). Parameters that do not
    pickle, or pickle to more than ``KEPT_PARAMETERS_MAX`` bytes, and a batch's
    (``NEVER_KEPT``, not even pickled) are not kept. tests/runtime/test_answered_calls.py compares it with botocore's."""
    resolver = getattr(client, "_ruleset_resolver", None)
    service_model = operation_model.service_model
    if (
        resolver is None
        or operation_model.name in NEVER_KEPT
        or service_model.resolved_protocol not in ANSWERED_PROTOCOLS
        or _handled(client, f"before-endpoint-resolution.{service_model.service_id.hyphenize()}")
    ):
        return resolve(operation_model, params, request_context, ignore_signing_region)
    # a builtin may be deferred (the account id, read from the credentials when asked)
    builtins = [v() if callable(v) else v for v in resolver._builtins.values()]
    try:
        key = pickle.dumps(
            (operation_model.name, ignore_signing_region, builtins, params), protocol=pickle.HIGHEST_PROTOCOL
        )
    except Exception:  # noqa: BLE001 - parameters that do not pickle: resolved each time
        return resolve(operation_model, params, request_context, ignore_signing_region)
    kept: dict[bytes, str] = client.__dict__.setdefault("_endpoints_resolved", {})
    url = kept.get(key)
    if url is not None:
        return url, {}, {}
    url, headers, properties = resolve(operation_model, params, request_context, ignore_signing_region)
    if not headers and not properties and len(key) <= KEPT_PARAMETERS_MAX:
        if len(kept) >= ENDPOINTS_KEPT:
            kept.clear()
        kept[key] = url
    return url, headers, properties


class KeptSerializations:
    """A JSON-protocol client's serializer (botocore's parameter validation and serializer, as
    the client has them) that keeps the request it made for a call's parameters, per client,
    and gives a copy of it when the same parameters come again (a daily run's read of its
    mark): validation and serialization are pure functions of the operation and the
    parameters (the same dict in, the same body, headers and path out), so the request is the
    one they would make again; they were a tenth of a function's GetItem, client and
    emulator together. Parameters that do not pickle, that pickle to more than
    ``KEPT_PARAMETERS_MAX`` bytes, a batch's (``NEVER_KEPT``: not even pickled), or that fail validation (raised as botocore raises them,
    every time), are not kept. The client then adds its user agent,
    endpoint and context to the copy as always (`_convert_to_request_dict`).
    tests/runtime/test_answered_calls.py compares the requests with botocore's."""

    def __init__(self, serializer: Any) -> None:
        self.serializer = serializer
        self.kept: dict[bytes, dict[str, Any]] = {}

    def serialize_to_request(self, parameters: Any, operation_model: Any) -> dict[str, Any]:
        if operation_model.name in NEVER_KEPT:
            return dict(self.serializer.serialize_to_request(parameters, operation_model))
        try:
            key = pickle.dumps((operation_model.name, parameters), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - parameters that do not pickle: serialized each time
            return dict(self.serializer.serialize_to_request(parameters, operation_model))
        request = self.kept.get(key)
        if request is None:
            made = self.serializer.serialize_to_request(parameters, operation_model)
            if len(key) > KEPT_PARAMETERS_MAX:  # a batch: never the same again, not kept
                return dict(made)
            request = _copied(made)
            if len(self.kept) >= ENDPOINTS_KEPT:
                self.kept.clear()
            self.kept[key] = request
        return _copied(request)


def _copied(request: dict[str, Any]) -> dict[str, Any]:
    """A serialized request that the client can change (it updates the headers and adds
    the URL and the context) without changing the one kept: its dicts copied (their values
    are strings, the body bytes or a string)."""
    return {k: dict(v) if type(v) is dict else v for k, v in request.items()}


def _handled(client: Any, event: str) -> bool:
    """Whether any handler is registered for ``event`` on ``client``'s emitter (botocore's
    prefix trie; True, to be safe, when the emitter is not the one botocore makes)."""
    emitter = getattr(client.meta.events, "_emitter", None)
    handlers = getattr(emitter, "_handlers", None)
    if handlers is None or not hasattr(handlers, "prefix_search"):
        return True
    return bool(list(handlers.prefix_search(event)))


def _served_by(endpoint: str, service: str) -> bool:
    """Whether this process's calls to `service` go to `endpoint` (its own endpoint variable,
    else the general one, as botocore chooses)."""
    url = os.environ.get(f"AWS_ENDPOINT_URL_{service}") or os.environ.get("AWS_ENDPOINT_URL") or ""
    return (url.rstrip("/") + "/").startswith(endpoint)


def unsigned_dynamodb(access_key: str) -> list[tuple[str, Callable[..., Any]]]:
    """botocore handlers that leave DynamoDB requests unsigned, carrying only the credential
    in an ``Authorization`` header of SigV4's form: moto reads the access key from it (the
    account it answers for) and checks no signature, and the SigV4 HMACs were a sixth of a
    worker's CPU for a small call. Applied only by a worker whose DynamoDB calls go to moto
    in the runtime's process (`_forward_calls_to`); deployed code signs as always.
    tests/runtime/test_moto_fast_json.py compares the answers with signed calls'."""
    import botocore

    def choose_signer(**_: Any) -> Any:
        return botocore.UNSIGNED

    def credential(request: Any, region_name: str = "", **_: Any) -> None:
        request.headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={access_key}/19700101/{region_name}/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=unsigned-local"
        )

    return [("choose-signer.dynamodb", choose_signer), ("before-sign.dynamodb", credential)]


def _clock_module() -> Any:
    try:
        return importlib.import_module("common.clock")
    except ImportError:  # a function whose code has no common package
        return None


def stamp_logs_with(now: Callable[[], datetime | None]) -> Callable[[], None]:
    """Log records made from here on carry the simulated time `now()` (when it gives one),
    so a log line says when it happened on the simulated calendar: the runtime's own and,
    in a worker, its handler's. Returns what puts the previous record factory back."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        at = now()
        if at is not None:
            record.created = at.timestamp()
            record.msecs = 0.0
        return record

    logging.setLogRecordFactory(factory)
    return lambda: logging.setLogRecordFactory(previous)
