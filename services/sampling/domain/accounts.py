"""The accounts billing bills, as sampling keeps them (issue 26), and the lab lines that
wait in suspense for an account sampling does not know yet.

Billing publishes every recorded version of an account (``AccountsChanged``); sampling
keeps the latest of each (by its version time: a version delivered twice, or after a
later one, changes nothing). A lab result for any account billing bills is taken in: the
account's sampling point is its service address until staff register one
(``PUT /staff/{tenant}/sampling-points/{account_id}``, whose registration then wins).

A lab line that names an account sampling does not know yet (a lab file uploaded before
its accounts file) is neither lost nor taken in: it waits in suspense with that reason and
is taken in, as its file would have taken it, when the account arrives; one whose account
never arrives stays listed (``GET /staff/{tenant}/lab-suspense``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from sampling.domain.samples import AccountInfo


@dataclass(frozen=True)
class BilledAccount:
    """The version of an account billing recorded last (what sampling keeps of it)."""

    tenant: str
    account_id: str
    version: datetime
    opened_on: date
    nonresidential: bool
    service_address: str
    closed_on: date | None = None
    satellite: bool = False

    @property
    def version_key(self) -> str:
        """The version as a fixed-width UTC text: later versions sort later as text too (a
        store compares them in a condition)."""
        return self.version.astimezone(UTC).isoformat(timespec="microseconds")

    def info(self) -> AccountInfo:
        """The account as sampling samples it before staff register its sampling point:
        the service address is the sampling point (issue 26)."""
        return AccountInfo(
            tenant=self.tenant,
            account_id=self.account_id,
            sampling_point=self.service_address,
            satellite=self.satellite,
            nonresidential=self.nonresidential,
        )


def waiting_reason(tenant: str, account_id: str) -> str:
    """Why a lab line waits: the account it names is not known to sampling yet."""
    return (
        f"account {account_id} of {tenant} is not known to sampling yet: the result waits in "
        "suspense until billing publishes the account (an accounts file or the staff account route)"
    )
