"""Configuration models of billing's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class TableConfig(FunctionConfig):
    """on_consumption_determined and run_daily_assessment."""

    table_name: str


class BillingCycleConfig(TableConfig):
    tariffs_dir: str


class PublishOutboxConfig(FunctionConfig):
    pass


class ApiConfig(FunctionConfig):
    tariffs_dir: str
