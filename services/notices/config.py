"""Configuration models of notices' functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class NoticesConfig(FunctionConfig):
    table_name: str
    mail_bucket: str
    sender_email: str
    tariffs_dir: str


class PublishOutboxConfig(FunctionConfig):
    pass


class ApiConfig(FunctionConfig):
    table_name: str
    mail_bucket: str
