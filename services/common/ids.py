"""Identifiers. Event ids are random; business keys are derived, never random (STYLE 10)."""

from __future__ import annotations

import hashlib
import uuid


def new_event_id() -> str:
    return str(uuid.uuid4())


def name_based_id(namespace: uuid.UUID, name: str) -> str:
    """``str(uuid.uuid5(namespace, name))``, the same text, made from the same SHA-1 digest
    with the version and variant bits set as `uuid.UUID` sets them, without building the
    `UUID` object (its constructor's checks and its text were most of the cost: metering
    derives an event id for every row of a read file, issue 7). tests/common/test_ids.py
    compares the two."""
    digest = bytearray(hashlib.sha1(namespace.bytes + name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def content_digest(data: bytes) -> str:
    """A stable id for a file's content: the same bytes uploaded twice get the same id."""
    return hashlib.sha256(data).hexdigest()


class KeyPartError(ValueError):
    """A key part holding the separator: no record can have that id (the HTTP APIs answer 404)."""


def key(*parts: object) -> str:
    """Join business-key parts into one DynamoDB key component: ``key("A", 1) == "A#1"``."""
    text = [str(p) for p in parts]
    if any("#" in p for p in text[1:]):
        raise KeyPartError(f"key parts must not contain '#': {text!r}")
    return "#".join(text)
