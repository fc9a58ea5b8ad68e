"""Configuration models of metering's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class ReadFileUploadedConfig(FunctionConfig):
    table_name: str
    uploads_bucket: str


class PublishOutboxConfig(FunctionConfig):
    pass
