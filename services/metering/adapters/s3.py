"""Reading uploaded objects from S3 (injected client)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from common.errors import TransientError
from metering.domain.read_files import ObjectMissing


class S3ObjectStore:
    def __init__(self, client: Any) -> None:
        self._client = client

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
