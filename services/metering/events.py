"""Events published by metering (the contract other services import; additive changes only)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field, model_validator

from common.events import Event

SOURCE = "sewerbill.metering"


class ConsumptionDetermined(Event):
    """An account's metered water use for the half-open period [period_start, period_end)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "period_start", "period_end")

    tenant: str
    account_id: str
    period_start: date
    period_end: date
    volume_gal: int = Field(ge=0)
    source_file: str

    @model_validator(mode="after")
    def _period_in_order(self) -> ConsumptionDetermined:
        if self.period_end <= self.period_start:
            raise ValueError("period_end must be after period_start")
        return self


class LineRejection(BaseModel):
    """One line of a read file that was not accepted; ``line`` 1 is the header."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=0)
    column: str
    reason: str


class ReadsRejected(Event):
    """Lines of an uploaded read file that were not accepted, and why."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("file_key", "file_id")

    file_key: str
    etag: str
    file_id: str
    rejections: tuple[LineRejection, ...]

    @property
    def line_numbers(self) -> list[int]:
        return sorted({r.line for r in self.rejections})
