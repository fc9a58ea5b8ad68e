"""`sewerbill local ...`: the embedded local stack (moto server + in-process handlers).

`up` starts the stack from template.yaml and keeps it running; `clock advance`, `upload`,
`token`, `dlq` and `status` talk to that running stack through the gateway's loopback-only
control endpoints (`/_local/...`), found through a state file written by `up` (or
`--gateway` / `SEWERBILL_LOCAL_GATEWAY`). `demo` runs a year of the generated demo utility
(`sewerbill.cli.demo_year`) and exits.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

local_app = typer.Typer(no_args_is_help=True, help="Run the whole stack locally (no AWS account, no Docker).")
clock_app = typer.Typer(no_args_is_help=True, help="The simulated clock that fires the template's schedules.")
local_app.add_typer(clock_app, name="clock")

STATE_FILE = Path(
    os.environ.get("SEWERBILL_LOCAL_STATE")
    or Path(tempfile.gettempdir())
    / f"sewerbill-local-{os.getuid() if hasattr(os, 'getuid') else 'user'}.json"
)

TemplateOpt = Annotated[
    Path, typer.Option("--template", "-t", help="The SAM template (single source of truth).")
]
ParamOpt = Annotated[
    list[str] | None, typer.Option("--param", "-p", help="Parameter override KEY=VALUE (repeatable).")
]
StartOpt = Annotated[
    str | None, typer.Option("--start", help="Simulated clock start, ISO 8601 (default: now, UTC).")
]
GatewayOpt = Annotated[
    str | None,
    typer.Option(
        "--gateway", envvar="SEWERBILL_LOCAL_GATEWAY", help="Gateway URL of a running `sewerbill local up`."
    ),
]


def register(app: typer.Typer) -> None:
    app.add_typer(local_app, name="local")


# --- helpers --------------------------------------------------------------------------------
def _say(text: str) -> None:
    typer.echo(text)


def _parse_time(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([wdhms])")
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def parse_duration(text: str) -> timedelta:
    """`90s`, `15m`, `6h`, `1d`, `2w` or combinations such as `1d6h`."""
    parts = _DURATION.findall(text.strip().lower())
    if not parts or "".join(f"{n}{u}" for n, u in parts) != re.sub(r"\s+", "", text.strip().lower()):
        raise typer.BadParameter(f"not a duration: {text!r} (use e.g. 90s, 15m, 6h, 1d, 2w, 1d6h)")
    return sum((timedelta(**{_UNITS[u]: float(n)}) for n, u in parts), timedelta())


def _parameters(template: Path, pairs: list[str] | None) -> dict[str, Any]:
    """Overrides from --param, plus local defaults for parameters that point into a Lambda
    package (TariffsDir: /var/task/tariffs in AWS, the repository's infra/tariffs here)."""
    params: dict[str, Any] = {}
    text = template.read_text(encoding="utf-8") if template.exists() else ""
    tariffs = template.resolve().parent / "infra" / "tariffs"
    if re.search(r"^\s{2}TariffsDir:", text, re.MULTILINE) and tariffs.is_dir():
        params["TariffsDir"] = str(tariffs)
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"--param needs KEY=VALUE, got {pair!r}")
        params[key] = value
    return params


def _gateway(explicit: str | None) -> str:
    if explicit:
        return explicit.rstrip("/")
    if STATE_FILE.exists():
        return str(json.loads(STATE_FILE.read_text())["gateway_url"])
    _say("no running local stack found: start one with `sewerbill local up` (or pass --gateway)")
    raise typer.Exit(1)


def _call(gateway: str, method: str, path: str, body: bytes | None = None, timeout: float = 600) -> Any:
    req = urllib.request.Request(gateway + path, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback gateway
            return json.loads(resp.read())
    except urllib.error.URLError as exc:
        _say(f"cannot reach the local stack at {gateway}: {exc}")
        raise typer.Exit(1) from exc


def _start(  # noqa: ANN202
    template: Path,
    start: str | None,
    params: list[str] | None,
    port: int = 0,
    state: Path | None = None,
    say: Callable[[str], None] | None = None,
    concurrency: str | None = None,
):
    from sewerbill.local import LocalRuntime

    tell = say or _say

    tell(f"starting the local stack from {template} ...")
    rt = LocalRuntime.start(
        template,
        start_time=_parse_time(start) if start else None,
        parameters=_parameters(template, params),
        gateway_port=port,
        state_dir=state,
        concurrency=concurrency,
    )
    tell(f"local stack {rt.stack.name} up in {rt.startup_seconds:.2f} s")
    tell(f"  emulator  {rt.endpoint_url}   (AWS_ENDPOINT_URL for boto3 / aws --endpoint-url)")
    tell(f"  gateway   {rt.gateway_url}   (OpenAPI: {rt.gateway_url}/openapi.json)")
    tell(f"  portal    {rt.gateway_url}/portal/   (demo sign-in: choose an identity)")
    tell(f"  clock     {rt.clock.now.isoformat()}")
    if state is not None:
        _say_restored(rt, state, start, tell)
    tell(
        f"  functions {len(rt.stack.functions)}, queues/streams polled {len(rt.stack.queue_sources) + len(rt.stack.stream_sources)}, "
        f"routes {len(rt.stack.routes)}, schedules {len(rt.stack.schedules)}"
    )
    return rt


# --- commands ---------------------------------------------------------------------------------
@local_app.command("up")
def up(
    template: TemplateOpt = Path("template.yaml"),
    start: StartOpt = None,
    param: ParamOpt = None,
    port: Annotated[int, typer.Option(help="Gateway port (0: any free port).")] = 0,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Run a year of the demo utility from the clock's day (--start, default today) once the "
            "stack is up, leaving demo-out/ (index.html), then keep running on the demo year.",
        ),
    ] = False,
    demo_size: Annotated[int, typer.Option("--demo-size", help="With --demo: accounts in all.")] = 300,
    demo_months: Annotated[int, typer.Option("--demo-months", help="With --demo: simulated months.")] = 12,
    demo_out: Annotated[
        Path, typer.Option("--demo-out", help="With --demo: the output folder (as `local demo --out`).")
    ] = Path("demo-out"),
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            file_okay=False,
            help="Keep the stack's state in this directory: restored at start, saved at a clean "
            "stop (Ctrl-C or SIGTERM). Without it nothing is kept.",
        ),
    ] = None,
) -> None:
    """Start the emulator and the runtime, print the endpoints and a dev token, poll until Ctrl-C."""
    import contextlib

    with contextlib.ExitStack() as logs:
        say: Callable[[str], None] = _say
        if demo:
            # the services' logs (the functions' processes too, started with the stack) go to
            # the demo's folder for the whole session; these lines stay on the screen
            from sewerbill.cli import demo_year
            from sewerbill.demo import output

            try:
                output.prepare(demo_out)
            except FileExistsError as exc:
                _say(str(exc))
                raise typer.Exit(2) from None
            say = logs.enter_context(demo_year.services_log(demo_out / "services.log", verbose=False))
        _up(template, start, param, port, state, say, (demo_size, demo_months, demo_out) if demo else None)


def _up(
    template: Path,
    start: str | None,
    param: list[str] | None,
    port: int,
    state: Path | None,
    say: Callable[[str], None],
    demo: tuple[int, int, Path] | None,
) -> None:
    from sewerbill.local.state import StateError

    try:
        # sources at once, as on AWS (SEWERBILL_LOCAL_CONCURRENCY=sequential: one at a time)
        rt = _start(
            template,
            start,
            param,
            port,
            state,
            say=say,
            concurrency=os.environ.get("SEWERBILL_LOCAL_CONCURRENCY") or "concurrent",
        )
    except StateError as exc:
        say(f"cannot use --state {state}: {exc}")
        raise typer.Exit(1) from None
    clean = False
    try:
        token = rt.mint_token(sub="dev", ttl=12 * 3600)
        say(f"  dev token (12 h): {token}")
        STATE_FILE.write_text(
            json.dumps({"gateway_url": rt.gateway_url, "endpoint_url": rt.endpoint_url, "pid": os.getpid()})
        )
        if demo is not None:
            _demo_in_up(rt, *demo, say)
        if state is not None:
            _stop_cleanly_on_signals(rt)
        say("polling queues and streams; Ctrl-C to stop")
        rt.run_forever(
            on_pass=lambda n: say(f"  handled {n} message(s); {len(rt.invocations)} invocations so far")
        )
        clean = True
    except KeyboardInterrupt:
        say("stopping")
        clean = state is None
    finally:
        if STATE_FILE.exists() and json.loads(STATE_FILE.read_text()).get("pid") == os.getpid():
            STATE_FILE.unlink()
        if state is not None and clean:
            say(f"stopping: saving the state to {state} ...")
        elif state is not None:
            say(f"interrupted: state not saved ({state} keeps the state it had)")
        rt.stop(save=clean)
        if rt.saved is not None:
            saved = rt.saved
            say(
                f"saved {saved['items']} item(s), {saved['objects']} object(s), {saved['messages']} "
                f"message(s), {saved['dead_letters']} dead letter(s), clock {saved['clock']} "
                f"in {saved['seconds']:.2f} s"
            )


def _demo_in_up(rt: Any, size: int, months: int, out: Path, say: Callable[[str], None]) -> None:
    """`up --demo`: the year from the clock's day in the utilities' zone (any day: the
    generator dates everything from it; the runner moves the clock only forward), the output
    folder written, the stack kept up on the demo year."""
    from zoneinfo import ZoneInfo

    from sewerbill.cli import demo_year

    first = rt.clock.now.astimezone(ZoneInfo("America/Chicago")).date()
    say(f"running the demo year from {first.isoformat()} (the services' logs: {out / 'services.log'}) ...")
    summary = demo_year.run_year(
        rt, say, out, size=size, seed=1, start=first, months=months, save_state=False
    )
    say((out / "summary.txt").read_text(encoding="utf-8").rstrip())
    say(f"demo year {'done' if summary['ok'] else 'done, SOME FIGURES DIFFER'} in {summary['seconds']} s")
    say(
        f"open {summary['index']} in a browser; the portal shows the demo year (clock {rt.clock.now.isoformat()})"
    )


def _stop_cleanly_on_signals(rt: Any) -> None:
    """With --state: Ctrl-C or SIGTERM lets the pass in progress finish, then `up` saves and
    stops; a second Ctrl-C interrupts at once (and nothing is saved)."""
    import signal

    def clean_stop(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rt.request_stop()

    signal.signal(signal.SIGINT, clean_stop)
    signal.signal(signal.SIGTERM, clean_stop)


def _say_restored(rt: Any, state: Path, start: str | None, tell: Callable[[str], None] = _say) -> None:
    got = rt.restored
    if got is None:
        tell(f"  state     none yet in {state}; saved there at a clean stop")
        return
    tell(
        f"  state     restored from {state}: {got['items']} item(s), {got['objects']} object(s), "
        f"{got['messages']} message(s), {got['dead_letters']} dead letter(s) in {got['seconds']:.2f} s"
    )
    if start:
        tell(f"            --start ignored: the clock continues from the saved {got['clock']}")


@local_app.command("demo")
def demo(
    template: TemplateOpt = Path("template.yaml"),
    param: ParamOpt = None,
    out: Annotated[
        Path, typer.Option("--out", help="The output folder (replaced if it holds a demo).")
    ] = Path("demo-out"),
    size: Annotated[int, typer.Option("--size", help="Accounts in all, four tenants.")] = 300,
    seed: Annotated[int, typer.Option("--seed", help="The generator's seed.")] = 1,
    start: Annotated[
        str, typer.Option("--start", help="First simulated day, YYYY-MM-DD (fixed: the same year every run).")
    ] = "2025-01-01",
    months: Annotated[int, typer.Option("--months", help="Simulated months.")] = 12,
    verbose: Annotated[bool, typer.Option("--verbose", help="The services' logs on the screen too.")] = False,
) -> None:
    """Run a year of the generated demo utility on a fresh local stack, say what happened,
    and leave it in --out: index.html (every bill, letter, batch and report) and the state."""
    from sewerbill.cli import demo_year
    from sewerbill.demo import output

    first = _demo_start(start)
    try:
        output.prepare(out)
    except FileExistsError as exc:
        _say(str(exc))
        raise typer.Exit(2) from None
    log = out / "services.log"
    _say(f"services' logs: {log}" + (" (and the screen)" if verbose else ""))
    with demo_year.services_log(log, verbose) as say:
        rt = _start(template, demo_year.start_time(first).isoformat(), param, say=say)
        try:
            summary = demo_year.run_year(
                rt, say, out, size=size, seed=seed, start=first, months=months, save_state=True
            )
        finally:
            rt.stop()
    _say("")
    _say((out / "summary.txt").read_text(encoding="utf-8").rstrip())
    _say("")
    _say(f"demo {'passed' if summary['ok'] else 'FAILED'} in {summary['seconds']} s")
    _say(f"open {summary['index']} in a browser: every bill, letter, print batch and report of the year")
    _say(f"the portal on this year: sewerbill local up --state {out / 'state'}")
    raise typer.Exit(0 if summary["ok"] else 1)


def _demo_start(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"--start: not a date (YYYY-MM-DD): {text!r}") from None


@clock_app.command("advance")
def clock_advance(
    to: Annotated[
        str | None, typer.Option("--to", help="Advance to this ISO 8601 time (UTC if no offset).")
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="Advance by a duration: 90s, 15m, 6h, 1d, 2w, 1d6h.")
    ] = None,
    gateway: GatewayOpt = None,
) -> None:
    """Advance the running stack's clock, firing every schedule in between (and draining)."""
    if (to is None) == (by is None):
        raise typer.BadParameter("give exactly one of --to or --by")
    body = (
        {"to": _parse_time(to).isoformat()}
        if to
        else {"by_seconds": parse_duration(by or "").total_seconds()}
    )
    url = _gateway(gateway)
    _say(f"advancing the clock {'to ' + to if to else 'by ' + str(by)} (each schedule firing is drained) ...")
    result = _call(url, "POST", "/_local/clock", json.dumps(body).encode())
    for fired in result["fired"]:
        _say(f"  fired {fired['schedule']} at {fired['at']}")
    _say(
        f"clock now {result['now']}; {len(result['fired'])} firing(s), {result['invocations']} invocation(s)"
    )


@local_app.command("upload")
def upload(
    bucket: Annotated[str, typer.Argument(help="Bucket logical id (e.g. UploadsBucket) or name.")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The file to upload.")],
    key: Annotated[str | None, typer.Option(help="Object key (default: reads/<file name>).")] = None,
    gateway: GatewayOpt = None,
) -> None:
    """Upload a file to a bucket of the running stack and wait until its effects are drained."""
    key = key or f"reads/{file.name}"
    query = urllib.parse.urlencode({"bucket": bucket, "key": key})
    _say(f"uploading {file} ({file.stat().st_size} bytes) to {bucket}/{key} ...")
    result = _call(_gateway(gateway), "POST", f"/_local/upload?{query}", file.read_bytes())
    for inv in result["invocations"]:
        _say(
            f"  {inv['function']:<45} {inv['trigger']:<9} {inv['records']} record(s), "
            f"{inv['failures']} message(s) failed" + (f" ERROR {inv['error']}" if inv["error"] else "")
        )
    _say(upload_summary(bucket, result))


def upload_summary(bucket: str, result: dict[str, Any]) -> str:
    """The upload's last line: invocations, and how many lines were rejected and where the
    report is (issue 26: a file whose lines were all rejected is never "0 failed")."""
    reports = result.get("reports", [])
    rejected = sum(r["rejected"] for r in reports)
    name = result.get("bucket_name") or bucket
    where = "; ".join(f"s3://{name}/{r['key']}" for r in reports)
    lines = (
        f"{rejected} line(s) rejected, report: {where}" if reports else "no line rejected (no report written)"
    )
    return f"done: {len(result['invocations'])} invocation(s); {lines}"


@local_app.command("token")
def token(
    sub: Annotated[str, typer.Option(help="Subject claim.")] = "dev",
    scope: Annotated[list[str] | None, typer.Option("--scope", help="Scope (repeatable).")] = None,
    ttl: Annotated[str, typer.Option(help="Lifetime: 1h, 12h, 7d ...")] = "1h",
    gateway: GatewayOpt = None,
    role: Annotated[str | None, typer.Option(help="customer, owner or staff (CONTRACTS.md claims).")] = None,
    tenant: Annotated[list[str] | None, typer.Option("--tenant", help="Tenant (repeatable).")] = None,
    account: Annotated[list[str] | None, typer.Option("--account", help="Account id (repeatable).")] = None,
    parcel: Annotated[list[str] | None, typer.Option("--parcel", help="Parcel id (repeatable).")] = None,
) -> None:
    """Mint a JWT the running stack's authorizer accepts (signed by its local key)."""
    body: dict[str, Any] = {"sub": sub, "scopes": scope or [], "ttl": parse_duration(ttl).total_seconds()}
    if role is not None:
        body["claims"] = {
            "role": role,
            "tenants": tenant or [],
            "accounts": account or [],
            "parcels": parcel or [],
        }
    typer.echo(_call(_gateway(gateway), "POST", "/_local/token", json.dumps(body).encode())["token"])


dlq_app = typer.Typer(
    invoke_without_command=True,
    help="The dead letters of the running stack: listed (no command), or redriven.",
)
local_app.add_typer(dlq_app, name="dlq")


@dlq_app.callback()
def dlq(ctx: typer.Context, gateway: GatewayOpt = None) -> None:
    """List the dead letters of the running stack (messages that exhausted their retries)."""
    if ctx.invoked_subcommand is not None:
        return
    letters = _call(_gateway(gateway), "GET", "/_local/dlq")
    if not letters:
        _say("no dead letters")
    for letter in letters:
        _say(f"{letter['queue']}  {letter['message_id']}  {letter['body'][:200]}")


@local_app.command("status")
def status(gateway: GatewayOpt = None) -> None:
    """Show the running stack: endpoints, clock, functions, routes, schedules, and each of
    the template's alarms whose condition holds now (a DLQ with messages, a function that
    raised since start, the API's 5xx)."""
    typer.echo(json.dumps(_call(_gateway(gateway), "GET", "/_local/status"), indent=2))


@dlq_app.command("redrive")
def dlq_redrive(
    queue: Annotated[
        str, typer.Argument(help="The dead-letter queue (logical id or name), or its source queue.")
    ],
    gateway: GatewayOpt = None,
) -> None:
    """Move a dead-letter queue's messages back to their source queue and handle them
    (StartMessageMoveTask on AWS). Use it once the cause of the failures is fixed."""
    url = _gateway(gateway)
    req = urllib.request.Request(
        url + "/_local/dlq/redrive", data=json.dumps({"queue": queue}).encode(), method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 - loopback gateway
            result = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        _say(f"cannot redrive {queue}: {json.loads(exc.read() or b'{}').get('message', exc.reason)}")
        raise typer.Exit(1) from None
    except urllib.error.URLError as exc:
        _say(f"cannot reach the local stack at {url}: {exc}")
        raise typer.Exit(1) from exc
    _say(f"moved {result['moved']} message(s) from {result['dead_letter_queue']} to {result['source_queue']}")
    for inv in result["invocations"]:
        _say(
            f"  {inv['function']:<45} {inv['trigger']:<9} {inv['records']} record(s), {inv['failures']} failed"
            + (f" ERROR {inv['error']}" if inv["error"] else "")
        )
    left = result["dead_letters"]
    _say(
        "no dead letters left there"
        if not left
        else f"{left} dead letter(s) in {result['dead_letter_queue']} again"
    )


@local_app.command("replay")
def replay(
    day: Annotated[
        str, typer.Option("--day", help="The day (UTC) whose archived events to send: YYYY-MM-DD.")
    ],
    to_queue: Annotated[
        str, typer.Option("--to-queue", help="The queue to send them to (logical id, name or URL).")
    ],
    archive: Annotated[
        str | None, typer.Option(help="The archive (logical id or name); default: the one.")
    ] = None,
    gateway: GatewayOpt = None,
) -> None:
    """Send one day's events from the bus's archive to a queue, each as the bus delivered it
    (`aws events start-replay` on AWS; docs/DEPLOY.md "Replaying the bus")."""
    try:
        date.fromisoformat(day)
    except ValueError:
        raise typer.BadParameter(f"--day needs YYYY-MM-DD, got {day!r}") from None
    url = _gateway(gateway)
    body = json.dumps({"day": day, "queue": to_queue, **({"archive": archive} if archive else {})}).encode()
    req = urllib.request.Request(url + "/_local/replay", data=body, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 - loopback gateway
            result = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        _say(f"cannot replay {day}: {json.loads(exc.read() or b'{}').get('message', exc.reason)}")
        raise typer.Exit(1) from None
    except urllib.error.URLError as exc:
        _say(f"cannot reach the local stack at {url}: {exc}")
        raise typer.Exit(1) from exc
    _say(
        f"replayed {result['sent']} event(s) of {result['day']} from {result['archive']} to {result['queue']}"
    )
