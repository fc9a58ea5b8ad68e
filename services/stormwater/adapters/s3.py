"""S3 for stormwater: extracts are streamed from the uploads bucket, reports written to it."""

from __future__ import annotations

import json
from typing import IO, Any

from botocore.exceptions import ClientError

from common.errors import TransientError
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
    """JSON reports under ``reports/`` (claim check: events carry the key, not the report)."""

    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def put_report(self, key: str, document: dict[str, object]) -> tuple[str, str]:
        if not key.startswith("reports/"):
            raise ValueError(f"reports live under reports/, not {key!r}")
        body = json.dumps(document, indent=1, default=str).encode()
        try:
            self._client.put_object(Bucket=self._bucket, Key=key, Body=body, ContentType="application/json")
        except ClientError as exc:
            raise TransientError(f"writing s3://{self._bucket}/{key}: {exc}") from exc
        return self._bucket, key
