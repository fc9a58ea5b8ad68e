"""The rating domain: every charge rule of RULES.md, in Decimal, with its derivation.

Pure Python: no I/O, no clock, no AWS. ``RatingEngine(book).rate(RatingInput(...))`` gives a
``RatedBill``; ``scenario.parse_scenario`` turns a CONTRACTS.md preview document into a
``RatingInput``; ``output.bill_to_contract`` renders a bill as the preview output.
"""

from billing.domain.rating.engine import RatingEngine
from billing.domain.rating.errors import InvalidScenario, RateNotPublished, RatingError, UnknownTenant
from billing.domain.rating.grafton import rate_septage
from billing.domain.rating.model import (
    Account,
    BillLine,
    Note,
    ParcelCharge,
    ParcelPart,
    RatedBill,
    RatingInput,
)
from billing.domain.rating.pp_stormwater import project_evaluation_fee

__all__ = [
    "Account",
    "BillLine",
    "InvalidScenario",
    "Note",
    "ParcelCharge",
    "ParcelPart",
    "RateNotPublished",
    "RatedBill",
    "RatingEngine",
    "RatingError",
    "RatingInput",
    "UnknownTenant",
    "project_evaluation_fee",
    "rate_septage",
]
