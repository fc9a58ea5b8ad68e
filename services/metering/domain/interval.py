"""Interval data (AMI meters, satellite flow monitors): 5-minute volumes, local days (X-READS)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

# X-READS: interval data belongs to the tenant's local day; all four tenants are in Wisconsin.
UTILITY_TZ = ZoneInfo("America/Chicago")
