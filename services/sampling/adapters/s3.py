"""Uploaded lab files and rejection reports in S3 (injected client)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from common.errors import TransientError
from sampling.domain.intake import ObjectMissing

MAX_REPORT_BYTES = 5 * 1024 * 1024


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

    def write_report(self, key: str, body: Mapping[str, object]) -> str:
        data = json.dumps(body, indent=1, default=str).encode()
        if len(data) > MAX_REPORT_BYTES:
            raise ValueError(f"report {key} is {len(data)} bytes")
        try:
            self._client.put_object(Bucket=self._bucket, Key=key, Body=data, ContentType="application/json")
        except ClientError as exc:
            raise TransientError(f"writing s3://{self._bucket}/{key}: {exc}") from exc
        return key
