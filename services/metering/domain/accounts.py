"""The accounts billing bills, as metering keeps them (issue 26), and the meters-file lines
that wait in suspense for an account metering does not know yet.

Billing publishes every recorded version of an account (``AccountsChanged``). Once it has
published an account of a tenant, a meters-file line registering a new meter on an account
of that tenant billing has not published (a meters file uploaded a minute before its
accounts file) waits in suspense with that reason, and is taken in, as its file would have
taken it, when the account arrives; one whose account never arrives stays listed
(``GET /staff/{tenant}/meter-suspense``). A tenant billing has published no account of
yet takes meters in as before: metering then has nothing to check them against.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class BilledAccount:
    """The version of an account billing recorded (``version``: its time as fixed-width UTC
    text, so later versions sort later)."""

    tenant: str
    account_id: str
    version: str
    opened_on: date
    closed_on: date | None = None


@dataclass(frozen=True)
class WaitingMeter:
    """A meters-file line waiting in suspense: its cells, the file and line it came from."""

    tenant: str
    account_id: str
    meter_id: str
    file_id: str
    file_key: str
    line: int
    cells: tuple[tuple[str, str], ...]


def waiting_reason(tenant: str, account_id: str) -> str:
    """Why a meter waits: the account it names is not known to metering yet."""
    return (
        f"account {account_id} of {tenant} is not known yet: the meter waits in suspense until "
        "billing publishes the account (an accounts file or the staff account route)"
    )
