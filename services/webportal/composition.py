"""The portal functions' composition root: the S3 client and the CloudFormation reply."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import boto3
from botocore.exceptions import ClientError

from common.config import cold_start, load
from webportal.config import PortalConfig

__all__ = ["ClientError", "config", "reply_to_cloudformation", "s3"]


@cold_start
def config() -> PortalConfig:
    return load(PortalConfig)


@cold_start
def s3() -> Any:
    return boto3.client("s3")


def reply_to_cloudformation(
    event: dict[str, Any], *, succeeded: bool, physical_id: str, reason: str = ""
) -> None:
    """PUT the custom resource's outcome to its pre-signed ResponseURL (the stack waits on it)."""
    body = json.dumps(
        {
            "Status": "SUCCESS" if succeeded else "FAILED",
            "Reason": reason[:1000] or "see the function's log",
            "PhysicalResourceId": physical_id,
            "StackId": event.get("StackId", ""),
            "RequestId": event.get("RequestId", ""),
            "LogicalResourceId": event.get("LogicalResourceId", ""),
        }
    ).encode()
    url = str(event.get("ResponseURL", ""))
    if not url.startswith("https://"):
        raise ValueError("ResponseURL: not an https URL")
    request = urllib.request.Request(url, data=body, method="PUT", headers={"content-type": ""})
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (https checked above)
        response.read()
