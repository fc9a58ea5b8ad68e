"""Configuration models of billing's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class TableConfig(FunctionConfig):
    """on_consumption_determined and run_daily_assessment."""

    table_name: str


class BillingCycleConfig(TableConfig):
    """The cycle's functions, and on_consumption_determined (it re-rates a billed period)."""

    tariffs_dir: str


class PublishOutboxConfig(FunctionConfig):
    pass


class ApiConfig(FunctionConfig):
    tariffs_dir: str


class FileUploadedConfig(TableConfig):
    """on_file_uploaded (accounts/ and payments/ under the uploads bucket)."""

    uploads_bucket: str


class CycleFanOutConfig(BillingCycleConfig):
    """run_billing_cycle: the queue its chunks of accounts go to."""

    issue_bills_queue_url: str


class StaffApiConfig(TableConfig):
    tariffs_dir: str
