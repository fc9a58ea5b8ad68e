"""Configuration models of metering's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class MeteringConfig(FunctionConfig):
    table_name: str
    uploads_bucket: str
    tariffs_dir: str


class PublishOutboxConfig(FunctionConfig):
    pass
