"""Use case: a new stormwater tariff version comes into force (PP-CWU-ERU, X-EFFECTIVE).

Run daily. For each stormwater tenant, when the version in force today is not the one last
applied, every parcel determined under another version is determined again under it,
effective from the version's first day, with cause ``tariff_change`` (the version id as
its reference). As everywhere, an ``ERUDetermined`` goes out only for parcels whose ERU
changed; the others keep their ERU with the new breakdown. Restartable: parcels already on
the version are skipped, and the version is recorded as applied only at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from common.clock import Clock
from stormwater.domain.parcels import ParcelState, TariffView, redetermine
from stormwater.events import ERUDetermined


class TariffChangeRepository(Protocol):
    def applied_version(self, tenant: str, expected: str | None = None) -> str | None:
        """The version last applied; may answer ``expected`` without a read when it knows
        that version applied (a version once applied stays applied)."""
        ...

    def set_applied_version(self, tenant: str, version_id: str, changed: int) -> None: ...

    def pages(self, tenant: str) -> Iterable[list[ParcelState]]: ...

    def record(self, determined: Sequence[ERUDetermined], states: Sequence[ParcelState]) -> None: ...


@dataclass(frozen=True)
class TariffChangeResult:
    tenant: str
    version_id: str
    applied_already: bool
    redetermined: int = 0
    published: int = 0


def apply_tariff_versions(
    *,
    tenants: Collection[str],
    tariff_for: Callable[[str, date], TariffView],
    repo: TariffChangeRepository,
    clock: Clock,
) -> list[TariffChangeResult]:
    now = clock.now()
    results: list[TariffChangeResult] = []
    for tenant in sorted(tenants):
        tariff = tariff_for(tenant, now.date())
        if repo.applied_version(tenant, expected=tariff.version_id) == tariff.version_id:
            results.append(TariffChangeResult(tenant, tariff.version_id, applied_already=True))
            continue
        redetermined = published = 0
        for page in repo.pages(tenant):
            events: list[ERUDetermined] = []
            states: list[ParcelState] = []
            for state in page:
                if state.current is not None and state.current.tariff_version == tariff.version_id:
                    continue
                done = redetermine(
                    state,
                    tariff=tariff,
                    effective_from=tariff.effective_from,
                    cause="tariff_change",
                    cause_ref=tariff.version_id,
                    now=now,
                )
                states.append(done.state)
                if done.event is not None:
                    events.append(done.event)
            repo.record(events, states)
            redetermined += len(states)
            published += len(events)
        repo.set_applied_version(tenant, tariff.version_id, published)
        results.append(TariffChangeResult(tenant, tariff.version_id, False, redetermined, published))
    return results
