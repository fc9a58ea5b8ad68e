"""S3 for stormwater: extracts are streamed from the uploads bucket, reports written to it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from botocore.exceptions import ClientError

from common.errors import TransientError
from common.reports import Report, write_report
from stormwater.domain.extracts import ObjectMissing


class S3Extracts:
    def __init__(self, client: Any) -> None:
        self._client = client

    def open(self, bucket: str, key: str) -> IO[bytes]:
        """The object's body as a stream (never read whole into memory here)."""
        try:
            resp = self._client.get_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"NoSuchKey", "404", "NoSuchBucket"}:
                raise ObjectMissing(f"s3://{bucket}/{key} no longer exists") from exc
            raise TransientError(f"reading s3://{bucket}/{key}: {code}") from exc
        body: IO[bytes] = resp["Body"]
        return body


class S3Reports:
    """Rejection reports under ``reports/stormwater/...`` (claim check, ``common.reports``)."""

    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def write(self, parts: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Report:
        try:
            return write_report(
                self._client,
                bucket=self._bucket,
                service="stormwater",
                parts=parts,
                rows=rows,
                count_by="field",
            )
        except ClientError as exc:
            raise TransientError(f"writing the report {'/'.join(parts)}: {exc}") from exc
