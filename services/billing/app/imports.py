"""Import exception review (issue 33): a log of every file billing took in, with its counts,
a payments file's batch totals, its rejection report line by line, and the bank deposit a
clerk entered against a lockbox file (reconciled or not).

One ``IMPORTS#<tenant>`` item per file and tenant of its lines, keyed by the file id: a
digest of the upload's delivery (``run``: its event id and etag), so a redelivery of the
same upload rewrites the same item with the same counts, and a file sent again is another
upload, logged with its lines ``repeated``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from billing.adapters.repository import BillingRepo
from billing.app.common import FileResult
from common.errors import PermanentError

MAX_REPORT_LINES = 1000  # the rejection report lines one answer shows; a page after that


class NoSuchImport(PermanentError):
    """No file of that id at that tenant."""


class NotALockboxFile(PermanentError):
    """A deposit figure only reconciles a payments file."""


class ReportSource(Protocol):
    def get_object(self, **kwargs: Any) -> Any: ...


def file_id_of(run: str) -> str:
    return "F" + hashlib.sha256(run.encode()).hexdigest()[:20]


def kind_of(key: str) -> str:
    return key.split("/", 1)[0]


def record_import(
    result: FileResult,
    *,
    key: str,
    run: str,
    report_key: str | None,
    repo: BillingRepo,
    now: datetime,
) -> str:
    """Log the file under each tenant of its lines; returns its file id. Written after the
    file is taken in (its counts are final); rewritten the same by a redelivery."""
    file_id = file_id_of(run)
    counts = result.counts.as_dict()
    totals = {k: str(v) for k, v in sorted(result.totals.items())}
    items = []
    for tenant in sorted(result.tenants):
        stored = repo.get(f"IMPORTS#{tenant}", file_id) or {}
        item: dict[str, Any] = {
            "pk": f"IMPORTS#{tenant}",
            "sk": file_id,
            "file_id": file_id,
            "tenant": tenant,
            "kind": kind_of(key),
            "key": key[:800],
            "received_at": stored.get("received_at") or now.isoformat(),
            "counts": json.dumps(counts),
            "report_key": report_key or "",
        }
        if result.payments:
            item["totals"] = json.dumps(totals)
            item["file_total"] = str(sum(result.totals.values(), Decimal("0.00")))
            item["unread_amounts"] = result.unread_amounts
        if "deposit" in stored:  # a deposit already entered stays
            item["deposit"] = stored["deposit"]
        items.append(item)
    repo.write(items)
    return file_id


def _view(item: dict[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {
        "file_id": str(item["file_id"]),
        "kind": str(item["kind"]),
        "key": str(item["key"]),
        "received_at": str(item["received_at"]),
        "counts": json.loads(str(item["counts"])),
        "has_report": bool(item.get("report_key")),
        "totals": None,
        "deposit": None,
    }
    if "totals" in item:
        total = Decimal(str(item["file_total"]))
        view["totals"] = {
            **json.loads(str(item["totals"])),
            "file": str(total),
            "unread_amounts": int(item.get("unread_amounts", 0)),
        }
        deposit = json.loads(str(item["deposit"])) if item.get("deposit") else None
        if deposit is not None:
            difference = Decimal(deposit["amount"]) - total
            deposit["difference"] = str(difference)
            deposit["reconciled"] = difference == 0 and int(item.get("unread_amounts", 0)) == 0
        view["deposit"] = deposit
    return view


def imports_of(
    repo: BillingRepo, tenant: str, *, limit: int | None = None, cursor: int = 0
) -> tuple[list[dict[str, Any]], int | None]:
    """The tenant's files, newest first: a page of ``limit`` from ``cursor`` and the next
    page's cursor (None at the end)."""
    items = sorted(
        (_view(i) for i in repo.query(f"IMPORTS#{tenant}")),
        key=lambda v: (v["received_at"], v["file_id"]),
        reverse=True,
    )
    end = len(items) if limit is None else cursor + limit
    return items[cursor:end], (end if end < len(items) else None)


def import_of(
    repo: BillingRepo,
    tenant: str,
    file_id: str,
    *,
    s3: ReportSource,
    bucket: str,
    limit: int = MAX_REPORT_LINES,
    cursor: int = 0,
) -> dict[str, Any]:
    """One file with its rejection report's lines (from ``cursor``, at most ``limit``)."""
    item = repo.get(f"IMPORTS#{tenant}", file_id)
    if item is None:
        raise NoSuchImport(f"file_id: no file {file_id!r} at {tenant}")
    view = _view(item)
    lines: list[dict[str, Any]] = []
    following = None
    if item.get("report_key"):
        for n, row in enumerate(_report_rows(s3, bucket, str(item["report_key"]))):
            if n < cursor:
                continue
            if len(lines) >= limit:
                following = str(n)
                break
            lines.append(
                {
                    "line": int(row.get("line", 0)),
                    "column": str(row.get("column", "")),
                    "reason": str(row.get("reason", "")),
                    "outcome": str(row.get("outcome", "rejected")),
                }
            )
    return {**view, "lines": lines, "next_cursor": following}


def _report_rows(s3: ReportSource, bucket: str, key: str) -> Iterator[dict[str, Any]]:
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    for raw in body.iter_lines():
        if raw.strip():
            yield json.loads(raw)


def record_deposit(
    repo: BillingRepo, tenant: str, file_id: str, amount: Decimal, *, clerk: str, now: datetime
) -> dict[str, Any]:
    """The bank's deposit figure for a lockbox file, as the clerk entered it (who and when,
    X-AUDIT); a later figure replaces it. Returns the file's view, reconciled or not."""
    item = repo.get(f"IMPORTS#{tenant}", file_id)
    if item is None:
        raise NoSuchImport(f"file_id: no file {file_id!r} at {tenant}")
    if "totals" not in item:
        raise NotALockboxFile(f"file_id: {file_id!r} is a {item['kind']} file, not a payments file")
    item["deposit"] = json.dumps({"amount": str(amount), "entered_by": clerk, "entered_at": now.isoformat()})
    repo.write([item])
    return _view(item)
