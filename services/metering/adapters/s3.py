"""Uploaded objects from S3, streamed; rejection reports written back (claim check).

The report is spooled to /tmp as it grows and put once at the end, so memory stays bounded
however many lines a file has wrong (``common.reports.write_report`` holds a report in
memory, fine for its callers' bounded reports); the key follows ``common.reports``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from common import reports
from common.errors import TransientError
from metering.app.ingest import ObjectMissing
from metering.events import LineRejection

CHUNK_BYTES = 1024 * 1024


class S3ObjectStore:
    def __init__(self, client: Any) -> None:
        self._client = client

    def stream(self, bucket: str, key: str) -> Iterator[bytes]:
        """The object's bytes in chunks of 1 MiB: never the whole file in memory."""
        try:
            resp = self._client.get_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"NoSuchKey", "404", "NoSuchBucket"}:
                raise ObjectMissing(f"s3://{bucket}/{key} no longer exists") from exc
            raise TransientError(f"reading s3://{bucket}/{key}: {code}") from exc
        yield from resp["Body"].iter_chunks(chunk_size=CHUNK_BYTES)


class S3RejectionReport:
    """JSON lines, one rejection each, spooled to /tmp and put at ``reports/...`` at the end."""

    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self._client = client
        self._bucket = bucket
        self._key = key
        self._file = tempfile.SpooledTemporaryFile(max_size=4 * 1024 * 1024)  # noqa: SIM115
        self._count = 0

    def add(self, rejection: LineRejection) -> None:
        self._file.write(rejection.model_dump_json().encode() + b"\n")
        self._count += 1

    def finish(self) -> str | None:
        if not self._count:
            return None
        self._file.seek(0)
        try:
            self._client.put_object(
                Bucket=self._bucket, Key=self._key, Body=self._file, ContentType="application/x-ndjson"
            )
        except ClientError as exc:
            raise TransientError(f"writing the rejection report s3://{self._bucket}/{self._key}") from exc
        finally:
            self._file.close()
        return self._key


def report_key(file_key: str, file_id: str) -> str:
    """``reports/metering/<file key>/<file id>-rejections.jsonl`` (``common.reports``' naming)."""
    return reports.report_key("metering", (file_key[:800], f"{file_id[-16:]}-rejections"))


def read_json(client: Any, bucket: str, key: str) -> Any:
    return json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
