"""The notices part of ``sewerbill local demo`` (issue 13): the demo's bills went out as emails
(read back from the emulator's SES) and as letters in the daily print batch (in the mail
bucket); this prints what was sent and where the batch PDF lies."""

from __future__ import annotations

import email
import json
import urllib.request
from collections.abc import Callable
from typing import Any


def run(rt: Any, say: Callable[[str], None]) -> bool:
    if "NoticesOnNoticeEventFunction" not in rt.stack.functions:
        return True
    with urllib.request.urlopen(rt.emulator.endpoint_url + "/moto-api/data.json", timeout=30) as resp:  # noqa: S310
        data = json.loads(resp.read())
    sent = data.get("ses", {}).get("RawMessage", [])
    for raw in sent:
        message = email.message_from_string(raw["raw_data"])
        parts = [p.get_content_type() for p in message.walk() if not p.is_multipart()]
        say(f"      email to {message['To']}: {message['Subject']} ({', '.join(parts)})")
    s3 = rt.client("s3")
    bucket = rt.resource("MailBucket")
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="batches/").get("Contents", [])
    batches = [o["Key"] for o in listed if o["Key"].endswith("batch.pdf")]
    for key in batches:
        manifest = s3.get_object(Bucket=bucket, Key=key.replace("batch.pdf", "manifest.csv"))["Body"].read()
        letters = len(manifest.decode().splitlines()) - 1
        say(f"      print batch s3://{bucket}/{key}: {letters} letter(s), manifest sorted by ZIP")
    return bool(sent) and bool(batches)
