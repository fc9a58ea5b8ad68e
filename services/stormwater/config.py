"""Configuration models of stormwater's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class TableConfig(FunctionConfig):
    table_name: str
    tariffs_dir: str


class ExtractUploadedConfig(TableConfig):
    uploads_bucket: str


class PublishOutboxConfig(FunctionConfig):
    pass
