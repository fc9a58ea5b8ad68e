"""Identifiers. Event ids are random; business keys are derived, never random (STYLE 10)."""

from __future__ import annotations

import hashlib
import uuid


def new_event_id() -> str:
    return str(uuid.uuid4())


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
