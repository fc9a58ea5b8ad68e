"""A meters file (``meters/``): meters are records (CONTRACTS.md "Import files").

A line names a meter. New: ``accepted`` and registered on its account. Identical to the
meter held: ``repeated``. Different in what a meter may change (size, kind, its removal):
``changed``, kept as a new version with the old one as history (``METER#...``/``V#...``).
Different in what it cannot (account, units, digits, install date and reading, or a removal
already recorded): ``rejected`` naming both values. A meter whose install date is still in
the future is refused for now (the cause can change: the file is read again when sent again).

Fields (issue 27, ``common.fields``): ids of a safe charset and length; ``installed_on`` at
most :data:`common.fields.SCHEDULED_AHEAD_DAYS` ahead; ``removed_on`` after ``installed_on``
and within the same horizon; ``size`` one the tenant's tariff in force lists (or aliases).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal

from metering.app.core import (
    MAX_DIGITS,
    AccountDirectory,
    AccountKey,
    BatchOutput,
    FieldRules,
    MeteringRepository,
    Run,
    Settings,
    consumption_event,
    rejection,
)
from metering.domain import csvinput as cin
from metering.domain.accounts import WaitingMeter
from metering.domain.determination import TenantSettings, redetermine
from metering.domain.model import AccountMetering, Meter, MeterSeries, Point
from metering.domain.readings import Accepted, Reading, Refused, apply_reading

FIXED = ("account_id", "units", "digits", "installed_on", "initial_reading")


def parse_meter(cells: dict[str, str], tenants: Sequence[str], rules: FieldRules) -> Meter:
    digits_text = cells.get("digits", "")
    if not digits_text.isascii() or not digits_text.isdigit() or not 1 <= int(digits_text) <= MAX_DIGITS:
        raise cin.BadField(
            "digits", f"must be a whole number from 1 to {MAX_DIGITS}, got {digits_text[:20]!r}"
        )
    digits = int(digits_text)
    tenant = cin.tenant(cells, tenants)
    size = cells.get("size") or None
    if size is not None:
        sizes = rules.sizes(tenant)
        if size not in sizes:
            raise cin.BadField(
                "size", f"{size[:20]!r} is not a meter size of {tenant}'s tariff ({', '.join(sorted(sizes))})"
            )
    window = rules.window(tenant)
    installed_on = cin.a_date(cells, "installed_on")
    assert installed_on is not None
    cin.in_window("installed_on", lambda: window.started("installed_on", installed_on))
    meter = Meter(
        tenant=tenant,
        meter_id=cin.safe_id(cells, "meter_id"),
        account_id=cin.safe_id(cells, "account_id"),
        kind=cin.choice(cells, "kind", ("water", "waste", "flow-monitor")),  # type: ignore[arg-type]
        units=cin.choice(cells, "units", ("gal", "cf", "ccf")),  # type: ignore[arg-type]
        digits=digits,
        installed_on=installed_on,
        initial_reading=cin.a_number(cells, "initial_reading"),  # type: ignore[arg-type]
        size=size,
        removed_on=cin.a_date(cells, "removed_on", required=False),
        final_reading=cin.a_number(cells, "final_reading", required=False),
    )
    if meter.initial_reading >= meter.capacity:
        raise cin.BadField("initial_reading", f"more digits than the {digits}-digit register")
    if (meter.removed_on is None) != (meter.final_reading is None):
        raise cin.BadField("final_reading", "removed_on and final_reading go together")
    if meter.removed_on is not None:
        removed = meter.removed_on
        if removed <= meter.installed_on:
            raise cin.BadField("removed_on", f"{removed} must be after installed_on {meter.installed_on}")
        cin.in_window(
            "removed_on",
            lambda: window.ended("removed_on", removed, start=installed_on, start_field="installed_on"),
        )
    if meter.final_reading is not None and meter.final_reading >= meter.capacity:
        raise cin.BadField("final_reading", f"more digits than the {digits}-digit register")
    return meter


def meters_batch(
    rows: list[cin.Row],
    run: Run,
    repo: MeteringRepository,
    settings: Settings,
    tenants: Sequence[str],
    rules: FieldRules,
    now: datetime,
    today: date,
    directory: AccountDirectory | None = None,
) -> BatchOutput:
    """A batch of a meters file. With ``directory`` (billing's accounts, issue 26): a new
    meter on an account billing has not published, of a tenant it has published accounts
    of, waits in suspense (``waiting``) for the account, never registered on a guess."""
    parsed: list[tuple[int, Meter]] = []
    cells: dict[int, dict[str, str]] = {}
    for row in rows:
        try:
            parsed.append((row.line, parse_meter(row.cells, tenants, rules)))
            cells[row.line] = row.cells
        except cin.BadField as exc:
            run.reject(rejection(row.line, exc.column, exc.reason))
    known = repo.meters({(m.tenant, m.meter_id) for _, m in parsed})
    if directory is not None and parsed:
        parsed = _wait_for_accounts(parsed, known, cells, run, directory, now)
    accounts = repo.accounts({(m.tenant, m.account_id) for _, m in parsed})
    same = {(m.tenant, m.meter_id) for _, m in parsed if known.get((m.tenant, m.meter_id)) == m}
    taken = repo.meters_taken_in(same, run.file.file_id) if same else {}
    out = BatchOutput()
    touched: dict[AccountKey, AccountMetering] = {}
    replaced: dict[AccountKey, list[tuple[str, date, date]]] = {}
    counts = run.counts
    for line, meter in parsed:
        key = (meter.tenant, meter.meter_id)
        before = known.get(key)
        mine = taken.get(key)
        if before == meter and mine is not None and mine.line == line and mine.pass_ == run.pass_:
            # taken in by an earlier delivery of this pass (a redelivery after a crash): its
            # items are stored; its account holds it unless the crash came before the states
            if mine.outcome == "changed":
                counts.changed += 1
            else:
                counts.accepted += 1
            out.redelivered = True
            account_key = (meter.tenant, meter.account_id)
            account = accounts.get(account_key) or AccountMetering(meter.tenant, meter.account_id)
            series = account.series.get(meter.meter_id)
            if series is None or series.meter != meter:
                accounts[account_key] = account
                refused = register(
                    account, meter, today, settings(meter.tenant), replaced.setdefault(account_key, [])
                )
                if refused is None:
                    touched[account_key] = account
            continue
        if before == meter:
            counts.repeated += 1
            continue
        if before is not None:
            fixed = [f for f in FIXED if getattr(before, f) != getattr(meter, f)]
            if fixed:
                run.reject(
                    rejection(
                        line,
                        fixed[0],
                        f"meter {meter.meter_id} already has {fixed[0]} {getattr(before, fixed[0])}; got "
                        f"{getattr(meter, fixed[0])}: it cannot change (remove the meter and install a new one)",
                    )
                )
                continue
            if before.removed_on is not None and (before.removed_on, before.final_reading) != (
                meter.removed_on,
                meter.final_reading,
            ):
                run.reject(
                    rejection(
                        line,
                        "removed_on",
                        f"meter {meter.meter_id} was removed on {before.removed_on} with final reading "
                        f"{before.final_reading}; got {meter.removed_on} {meter.final_reading}",
                    )
                )
                continue
        account_key = (meter.tenant, meter.account_id)
        account = accounts.get(account_key) or AccountMetering(meter.tenant, meter.account_id)
        accounts[account_key] = account
        refused = register(
            account, meter, today, settings(meter.tenant), replaced.setdefault(account_key, [])
        )
        if refused is not None:
            run.reject(
                rejection(line, refused.column, refused.reason),
                may_change=refused.column == "installed_on",
            )
            continue
        known[key] = meter
        outcome = "accepted" if before is None else "changed"
        out.meters.append((meter, line, run.pass_, outcome))
        touched[account_key] = account
        if before is None:
            counts.accepted += 1
        else:
            counts.changed += 1
    # The registry alone determines nothing: periods wait for reads (or the daily run), so a
    # removal registered before the reads that precede it does not close a period early. A
    # final reading that replaced estimates corrects the periods they bounded, though.
    for key, account in touched.items():
        for found in redetermine(account, settings(account.tenant), replaced.get(key, ())):
            out.consumptions.append(consumption_event(found, run.file.key, run.source_id, now))
    out.accounts.extend(touched.values())
    return out


def _wait_for_accounts(
    parsed: list[tuple[int, Meter]],
    known: dict[tuple[str, str], Meter],
    cells: dict[int, dict[str, str]],
    run: Run,
    directory: AccountDirectory,
    now: datetime,
) -> list[tuple[int, Meter]]:
    """The lines to take in now; the others (a new meter on an account not known yet) are
    kept in suspense and counted ``waiting``. A meter already registered is judged as
    before (a line repeating it stays ``repeated``)."""
    checked = directory.tenants_known({m.tenant for _, m in parsed})
    new = [(line, m) for line, m in parsed if m.tenant in checked and (m.tenant, m.meter_id) not in known]
    if not new:
        return parsed
    accounts = directory.known_accounts({(m.tenant, m.account_id) for _, m in new})
    waiting = {line for line, m in new if (m.tenant, m.account_id) not in accounts}
    if not waiting:
        return parsed
    lines = [
        WaitingMeter(
            tenant=m.tenant,
            account_id=m.account_id,
            meter_id=m.meter_id,
            file_id=run.file.file_id,
            file_key=run.file.key[:1024],
            line=line,
            cells=tuple(sorted(cells[line].items())),
        )
        for line, m in parsed
        if line in waiting
    ]
    directory.suspend_meters(lines, now=now)
    run.counts.waiting += len(lines)
    return [(line, m) for line, m in parsed if line not in waiting]


def register(
    account: AccountMetering,
    meter: Meter,
    today: date,
    settings: TenantSettings,
    replaced: list[tuple[str, date, date]],
) -> Refused | None:
    series = account.series.get(meter.meter_id)
    if series is None:
        if meter.installed_on > today:
            return Refused("installed_on", f"{meter.installed_on} is in the future (today is {today})")
        series = MeterSeries(
            replace(meter, removed_on=None, final_reading=None),
            [Point(meter.installed_on, meter.initial_reading, "initial", Decimal(0))],
        )
        account.series[meter.meter_id] = series
    else:
        series.meter = replace(meter, removed_on=None, final_reading=None)
    if meter.removed_on is not None and series.meter.removed_on is None:
        assert meter.final_reading is not None
        later = series.after(meter.removed_on)
        if later is not None:
            return Refused(
                "removed_on", f"meter {meter.meter_id} has a reading on {later.on}, after {meter.removed_on}"
            )
        outcome = apply_reading(
            account,
            series,
            Reading(meter.tenant, meter.meter_id, meter.removed_on, meter.final_reading, "final"),
            today=today,
            factor=settings.high_low_factor,
        )
        if isinstance(outcome, Refused):
            return Refused("final_reading", outcome.reason)
        if isinstance(outcome, Accepted) and outcome.replaced_after is not None:
            replaced.append((meter.meter_id, outcome.replaced_after, meter.removed_on))
    series.meter = meter
    return None
