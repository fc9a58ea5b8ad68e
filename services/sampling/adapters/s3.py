"""Uploaded lab files and rejection reports in S3 (injected client)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from common.errors import TransientError
from common.reports import Report, write_report
from sampling.domain.intake import ObjectMissing


class S3Objects:
    """Reads uploads and writes JSON reports (claim check) to one bucket."""

    def __init__(self, client: Any, reports_bucket: str) -> None:
        self._client = client
        self._bucket = reports_bucket

    def read(self, bucket: str, key: str) -> bytes:
        try:
            resp = self._client.get_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"NoSuchKey", "404", "NoSuchBucket"}:
                raise ObjectMissing(f"s3://{bucket}/{key} no longer exists") from exc
            raise TransientError(f"reading s3://{bucket}/{key}: {code}") from exc
        data: bytes = resp["Body"].read()
        return data

    def write_rejections(self, file_id: str, rows: Iterable[Mapping[str, Any]]) -> Report:
        """The rejected lines of a lab file, whole, at ``reports/sampling/lab/<file_id>/rejections.jsonl``."""
        try:
            return write_report(
                self._client,
                bucket=self._bucket,
                service="sampling",
                parts=("lab", file_id, "rejections"),
                rows=rows,
                count_by="column",
            )
        except ClientError as exc:
            raise TransientError(f"writing the rejection report of {file_id}: {exc}") from exc
