"""Claim check for reports too large for an item or an event (STYLE 18).

A report that grows with its input (the rejected lines of a read file, the accounts a
cycle skipped) is written whole to S3 under ``reports/<service>/...`` and the event that
announces it carries only a bounded :class:`Report`: where it is, how many rows, and
counts by one field. A consumer that needs the rows reads the object.

Usage (in an adapter or a use case given an injected boto3 S3 client)::

    report = write_report(
        s3, bucket=bucket, service="metering", parts=(tenant, file_sha, "rejections"),
        rows=({"line": r.line, "field": r.field, "reason": r.reason} for r in rejected),
        count_by="field",
    )
    publish(ReadsRejected(..., rejected=report.rows, report=report))

The key depends only on ``service`` and ``parts``, so writing the same report twice (a
redelivered message) overwrites the same object with the same bytes: idempotent by
business key. S3 errors propagate unchanged, so a consumer retries them (transient).

This module imports only the standard library and pydantic, so an event model in a
domain may embed :class:`Report`; only :func:`write_report` does I/O, through the client
it is given.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from common import csvsafe

PREFIX = "reports"
MAX_KEY_BYTES = 1024  # S3's limit on an object key (UTF-8)
MAX_COUNTED_VALUES = 50  # distinct values kept in Report.counts; the rest sum under OTHER
MAX_COUNTED_VALUE_CHARS = 100
OTHER = "(other)"

Format = Literal["jsonl", "csv"]
_CONTENT_TYPES: dict[str, str] = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}


class S3Writer(Protocol):
    def put_object(self, **kwargs: Any) -> Any: ...


class Report(BaseModel):
    """Where a report is and what it holds; small and bounded whatever the report's size.

    ``counts`` holds at most ``MAX_COUNTED_VALUES + 1`` entries of at most
    ``MAX_COUNTED_VALUE_CHARS`` characters each, so an event carrying it stays far below
    EventBridge's 256 KB.
    """

    model_config = ConfigDict(frozen=True)

    bucket: str
    key: str
    format: Format
    rows: int
    bytes: int
    counts: dict[str, int] = {}

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def report_key(service: str, parts: Sequence[str], fmt: Format = "jsonl") -> str:
    """``reports/<service>/<part>/.../<last part>.<fmt>``; refuses a key S3 would refuse.

    Parts are business keys (tenant, file checksum, cycle id); a part may not be empty,
    ``.`` or ``..``, nor hold a control character. Slashes inside a part are kept (an
    uploaded object's key may have them).
    """
    if not parts:
        raise ValueError("a report key needs at least one part after the service")
    for part in (service, *parts):
        if part in {"", ".", ".."} or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in part):
            raise ValueError(f"report key part {part!r} is empty, a dot path or has a control character")
    if "/" in service:
        raise ValueError(f"service {service!r} may not contain '/'")
    key = "/".join((PREFIX, service, *parts)) + f".{fmt}"
    if len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise ValueError(f"report key is over S3's {MAX_KEY_BYTES} bytes; use a checksum as a part")
    return key


def write_report(
    s3: S3Writer,
    *,
    bucket: str,
    service: str,
    parts: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    fmt: Format = "jsonl",
    fieldnames: Sequence[str] | None = None,
    count_by: str | None = None,
) -> Report:
    """Write ``rows`` to ``s3://bucket/reports/<service>/<parts...>.<fmt>`` and describe it.

    ``jsonl``: one JSON object per line (Decimals and dates as strings, never floats).
    ``csv``: a header of ``fieldnames`` (default: the first row's keys) then one line per row,
    each cell made safe to open in a spreadsheet (:mod:`common.csvsafe`).
    ``count_by`` names a field whose values are counted into ``Report.counts``.
    """
    key = report_key(service, parts, fmt)
    buffer = io.StringIO()
    counter: Counter[str] = Counter()
    n = 0
    writer: csv.DictWriter[str] | None = None
    for row in rows:
        n += 1
        if count_by is not None:
            counter[str(row.get(count_by, ""))[:MAX_COUNTED_VALUE_CHARS]] += 1
        if fmt == "jsonl":
            buffer.write(json.dumps(row, default=str, ensure_ascii=False, separators=(",", ":")))
            buffer.write("\n")
        else:
            if writer is None:
                writer = csv.DictWriter(
                    buffer,
                    fieldnames=list(fieldnames or row.keys()),
                    extrasaction="raise",
                    lineterminator="\n",
                )
                writer.writeheader()
            writer.writerow(csvsafe.record(row))
    if fmt == "csv" and writer is None and fieldnames:
        csv.writer(buffer, lineterminator="\n").writerow(csvsafe.row(fieldnames))
    body = buffer.getvalue().encode("utf-8")
    s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=_CONTENT_TYPES[fmt])
    return Report(bucket=bucket, key=key, format=fmt, rows=n, bytes=len(body), counts=_bounded(counter))


def _bounded(counter: Counter[str]) -> dict[str, int]:
    if len(counter) <= MAX_COUNTED_VALUES:
        return dict(sorted(counter.items()))
    kept = dict(counter.most_common(MAX_COUNTED_VALUES))
    other = sum(counter.values()) - sum(kept.values())
    kept[OTHER] = kept.get(OTHER, 0) + other
    return dict(sorted(kept.items()))


SPOOL_BYTES = 1 << 20  # a streamed report past this goes to a temporary file, not memory


class ReportStream:
    """:func:`write_report` for rows that come one at a time while a file is read (an
    import's rejected lines): each row is written as it is added, to a spooled temporary
    file (memory up to :data:`SPOOL_BYTES`, then the Lambda's ``/tmp``), and the object is
    put once, at :meth:`close`. So a report of 900,000 rejected lines costs the same memory
    as one of ten (issue 27). Same key, format and :class:`Report` as :func:`write_report`:
    a redelivered file rewrites the same object. JSON lines only.

    Usage::

        stream = ReportStream(s3, bucket=b, service="billing", parts=(key, "rejections"), count_by="column")
        stream.add({"line": 7, "column": "paid_on", "reason": "..."})
        report = stream.close()  # None when no row was added (nothing is written)
    """

    def __init__(
        self,
        s3: S3Writer,
        *,
        bucket: str,
        service: str,
        parts: Sequence[str],
        count_by: str | None = None,
    ) -> None:
        import tempfile

        self.s3 = s3
        self.bucket = bucket
        self.key = report_key(service, parts, "jsonl")
        self.count_by = count_by
        self.rows = 0
        self._counter: Counter[str] = Counter()
        self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed in close()

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows += 1
        if self.count_by is not None:
            self._counter[str(row.get(self.count_by, ""))[:MAX_COUNTED_VALUE_CHARS]] += 1
        line = json.dumps(row, default=str, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._file.write(line.encode("utf-8"))

    def close(self) -> Report | None:
        """Put the object (when any row was added) and describe it."""
        try:
            if not self.rows:
                return None
            size = self._file.tell()
            self._file.seek(0)
            self.s3.put_object(
                Bucket=self.bucket,
                Key=self.key,
                Body=self._file,
                ContentLength=size,
                ContentType=_CONTENT_TYPES["jsonl"],
            )
            return Report(
                bucket=self.bucket,
                key=self.key,
                format="jsonl",
                rows=self.rows,
                bytes=size,
                counts=_bounded(self._counter),
            )
        finally:
            self._file.close()
