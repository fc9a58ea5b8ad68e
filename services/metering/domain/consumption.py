"""Consumption per account and period, as read from an uploaded read file.

A read file is CSV with the header ``tenant,account_id,period_start,period_end,volume_gal``;
``period_start``/``period_end`` are ISO dates of the half-open period and ``volume_gal`` a
whole number of gallons. Every bad line is rejected with its line number (the header is
line 1) and the column at fault; good lines are accepted whatever the bad ones are.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date

from metering.events import LineRejection

COLUMNS = ("tenant", "account_id", "period_start", "period_end", "volume_gal")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_ACCOUNT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_WHOLE = re.compile(r"^[0-9]+$")

ConsumptionKey = tuple[str, str, date, date]


@dataclass(frozen=True)
class Consumption:
    tenant: str
    account_id: str
    period_start: date
    period_end: date
    volume_gal: int
    line: int

    @property
    def key(self) -> ConsumptionKey:
        return (self.tenant, self.account_id, self.period_start, self.period_end)


@dataclass(frozen=True)
class ParsedReads:
    accepted: list[Consumption] = field(default_factory=list)
    rejected: list[LineRejection] = field(default_factory=list)


def parse_reads(data: bytes, *, tenants: Collection[str] | None = None) -> ParsedReads:
    """Split a read file into accepted consumptions and rejected lines.

    A line repeating an earlier line's account and period with the same volume is a
    harmless repeat and is dropped; with a different volume it is rejected (which one is
    right is for a person to decide, not for the parser).
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return ParsedReads(
            rejected=[LineRejection(line=0, column="(file)", reason=f"not UTF-8 text: {exc.reason}")]
        )
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return ParsedReads(rejected=[LineRejection(line=1, column="(header)", reason="the file is empty")])
    if tuple(h.strip() for h in header) != COLUMNS:
        return ParsedReads(
            rejected=[
                LineRejection(
                    line=1,
                    column="(header)",
                    reason=f"expected columns {','.join(COLUMNS)}, got {','.join(header)}",
                )
            ]
        )
    accepted: list[Consumption] = []
    rejected: list[LineRejection] = []
    first_seen: dict[ConsumptionKey, Consumption] = {}
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        result = _parse_row(row, line, tenants)
        if isinstance(result, LineRejection):
            rejected.append(result)
            continue
        earlier = first_seen.get(result.key)
        if earlier is None:
            first_seen[result.key] = result
            accepted.append(result)
        elif earlier.volume_gal != result.volume_gal:
            rejected.append(
                LineRejection(
                    line=line,
                    column="volume_gal",
                    reason=f"conflicts with line {earlier.line} ({earlier.volume_gal} gal) for the same account and period",
                )
            )
    return ParsedReads(accepted=accepted, rejected=rejected)


def _parse_row(row: list[str], line: int, tenants: Collection[str] | None) -> Consumption | LineRejection:
    if len(row) != len(COLUMNS):
        return LineRejection(
            line=line, column="(row)", reason=f"expected {len(COLUMNS)} fields, got {len(row)}"
        )
    tenant, account_id, start_text, end_text, volume_text = (cell.strip() for cell in row)
    if not _SLUG.match(tenant):
        return LineRejection(line=line, column="tenant", reason=f"not a tenant id: {tenant!r}")
    if tenants is not None and tenant not in tenants:
        return LineRejection(line=line, column="tenant", reason=f"unknown tenant {tenant!r}")
    if not _ACCOUNT.match(account_id):
        return LineRejection(line=line, column="account_id", reason=f"not an account id: {account_id!r}")
    dates: list[date] = []
    for column, value in (("period_start", start_text), ("period_end", end_text)):
        try:
            dates.append(date.fromisoformat(value))
        except ValueError:
            return LineRejection(line=line, column=column, reason=f"not a date (YYYY-MM-DD): {value!r}")
    start, end = dates
    if end <= start:
        return LineRejection(line=line, column="period_end", reason="must be after period_start")
    if not _WHOLE.match(volume_text):
        return LineRejection(
            line=line,
            column="volume_gal",
            reason=f"not a non-negative whole number of gallons: {volume_text!r}",
        )
    return Consumption(tenant, account_id, start, end, int(volume_text), line)
