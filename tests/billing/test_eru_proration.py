"""X-PERIOD: an ERU determination or a credit that takes effect inside a billing period is
prorated by days; each part of the period is its own line at the values then in force
(pure: billing's projection of the stormwater events, then the cycle's rating input).

Pleasant Prairie Clean Water Utility, 2023-01-01 tariff: base 2.00 per parcel-month, 6.00
per ERU-month, credit capped at 30%. September 2026 has 30 days: [2026-09-01, 2026-10-01).
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP
from decimal import Decimal as D
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.domain.accounts import AccountRecord
from billing.domain.issuing import ChunkInputs, rating_input
from billing.domain.projections import eru_over
from billing.domain.rating import RatedBill, RatingEngine
from common.tariffs import TariffBook

SW = "pleasant-prairie-stormwater"
SEP, OCT = date(2026, 9, 1), date(2026, 10, 1)

PARCEL = AccountRecord(
    tenant=SW,
    account_id="PPS-1",
    name="Lakeview Commerce LLC",
    service_address="9 Lake Rd",
    mailing_address="9 Lake Rd",
    zip="53158",
    opened_on=date(2025, 1, 1),
    account_class="nonresidential",
    parcel_id="P-1",
)


def det(sequence: int, effective_from: str, eru: str, use: str = "nonresidential") -> dict[str, Any]:
    return {
        "sequence": sequence,
        "effective_from": effective_from,
        "eru": eru,
        "exempt": use in ("agricultural", "right_of_way"),
        "use": use,
        "breakdown": {"use": use},
        "source_event_id": f"ev-eru-{sequence}",
    }


def credit(status: str, effective_from: str, percent: str) -> dict[str, Any]:
    return {
        "credit_id": "CR-1",
        "status": status,
        "effective_from": effective_from,
        "credit_percent": percent,
        "source_event_id": f"ev-credit-{status}",
    }


def bill(engine: RatingEngine, dets: list[dict[str, Any]], credits: list[dict[str, Any]] = ()) -> RatedBill:  # type: ignore[assignment]
    eru = eru_over(dets, credits, SEP, OCT)
    assert eru is not None
    inputs = ChunkInputs(
        tenant=SW,
        period_start=SEP,
        period_end=OCT,
        bill_date=OCT,
        accounts=(PARCEL,),
        billed=frozenset(),
        usage={},
        erus={"P-1": eru},
        strength={},
        history={},
        last_bill_dates={},
    )
    built = rating_input(inputs, PARCEL)
    assert not isinstance(built, str)
    return engine.rate(built)


def lines(rated: RatedBill) -> list[tuple[str, D]]:
    return [(ln.rule_id, ln.amount) for ln in rated.lines]


def test_an_eru_redetermined_mid_period_bills_each_part_at_its_own_eru(engine: RatingEngine) -> None:
    # 1.00 ERU Sep 1-12 (12 days), 2.00 ERU from Sep 13 (18 days):
    #   1.00 x 12/30 x 6.00 = 2.40; 2.00 x 18/30 x 6.00 = 7.20; base 2.00 once -> 11.60
    # (the value at period end alone would have been 2.00 + 12.00 = 14.00).
    rated = bill(engine, [det(1, "2025-01-01", "1.00"), det(2, "2026-09-13", "2.00")])
    assert lines(rated) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("2.40")), ("PP-CWU-ERU", D("7.20"))]
    assert rated.total == D("11.60")
    first, second = rated.lines[1], rated.lines[2]
    assert first.details["derivation"] == "1.00 ERU x 12/30 days x $6.00"
    assert second.details["derivation"] == "2.00 ERU x 18/30 days x $6.00"
    assert "prorated, 12 of 30 days" in first.description
    assert (first.details["factor"], second.details["factor"]) == ("12/30", "18/30")
    assert second.details["effective_from"] == "2026-09-13"
    assert second.details["source_event_id"] == "ev-eru-2"
    # A clerk's multiplication gives each amount.
    for ln in (first, second):
        assert (ln.quantity * ln.rate * ln.details["days"] / 30).quantize(D("0.01")) == ln.amount


def test_a_credit_approved_mid_period_applies_only_from_its_approval(engine: RatingEngine) -> None:
    # PP-CWU-CREDIT is never retroactive: 20% approved Sep 21 covers Sep 21-30 (10 days).
    # ERU 10 x 6.00 = 60.00 for the whole month (unchanged: one line);
    # credit 10 ERU x -(6.00 x 20%) = -1.20 per ERU x 10/30 = -4.00. Total 2 + 60 - 4 = 58.00.
    rated = bill(engine, [det(1, "2025-01-01", "10.00")], [credit("approved", "2026-09-21", "20")])
    assert lines(rated) == [
        ("PP-CWU-BASE", D("2.00")),
        ("PP-CWU-ERU", D("60.00")),
        ("PP-CWU-CREDIT", D("-4.00")),
    ]
    assert rated.lines[2].details["derivation"] == "10.00 ERU x 10/30 days x -$1.20"
    assert rated.total == D("58.00")


def test_a_credit_revoked_mid_period_applies_until_the_revocation(engine: RatingEngine) -> None:
    # 20% approved in 2025, revoked from Sep 11 (PP-CWU-CREDIT-REVOKE): Sep 1-10, 10 days:
    # 10 x -1.20 x 10/30 = -4.00.
    rated = bill(
        engine,
        [det(1, "2025-01-01", "10.00")],
        [credit("approved", "2025-06-01", "20"), credit("revoked", "2026-09-11", "0")],
    )
    assert lines(rated)[-1] == ("PP-CWU-CREDIT", D("-4.00"))
    assert rated.total == D("58.00")


def test_an_eru_and_a_credit_changing_in_one_period_cut_it_in_three(engine: RatingEngine) -> None:
    # Sep 1-10: 10 ERU, no credit; Sep 11-15: 10 ERU, 20%; Sep 16-30: 5 ERU, 20%.
    # ERU: 10 x 15/30 x 6.00 = 30.00 (the first two parts merge: same ERU); 5 x 15/30 x 6.00 = 15.00.
    # Credit: 10 x 5/30 x -1.20 = -2.00; 5 x 15/30 x -1.20 = -3.00. Total 2 + 30 + 15 - 2 - 3 = 42.00.
    rated = bill(
        engine,
        [det(1, "2025-01-01", "10.00"), det(2, "2026-09-16", "5.00")],
        [credit("approved", "2026-09-11", "20")],
    )
    assert lines(rated) == [
        ("PP-CWU-BASE", D("2.00")),
        ("PP-CWU-ERU", D("30.00")),
        ("PP-CWU-ERU", D("15.00")),
        ("PP-CWU-CREDIT", D("-2.00")),
        ("PP-CWU-CREDIT", D("-3.00")),
    ]
    assert rated.total == D("42.00")


def test_a_parcel_becoming_exempt_mid_period_pays_the_base_charge_for_its_days_only(
    engine: RatingEngine,
) -> None:
    # Residential 1.00 ERU until Sep 20, public right-of-way (PP-CWU-EXEMPT) from Sep 21:
    # base 2.00 x 20/30 = 1.333 -> 1.33; ERU 1.00 x 20/30 x 6.00 = 4.00. Total 5.33.
    rated = bill(
        engine, [det(1, "2025-01-01", "1.00", "residential"), det(2, "2026-09-21", "0", "right_of_way")]
    )
    assert lines(rated) == [("PP-CWU-BASE", D("1.33")), ("PP-CWU-ERU", D("4.00"))]
    assert rated.lines[0].details["derivation"] == "1 month x 20/30 days x $2.00"


def test_a_change_on_the_first_day_of_the_period_is_no_proration(engine: RatingEngine) -> None:
    # Effective Sep 1: the whole period at 2.00 ERU (half-open periods): base 2.00 + 12.00.
    rated = bill(engine, [det(1, "2025-01-01", "1.00"), det(2, "2026-09-01", "2.00")])
    assert lines(rated) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("12.00"))]
    # ... and one effective Oct 1 belongs to the next period: 1.00 ERU for all of September.
    rated = bill(engine, [det(1, "2025-01-01", "1.00"), det(2, "2026-10-01", "2.00")])
    assert lines(rated) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("6.00"))]


def test_the_first_determination_of_a_parcel_stands_for_its_whole_first_period(engine: RatingEngine) -> None:
    # (interpretation) The extract that first determined the parcel on Sep 10 is when it
    # entered the system: the month is billed on it, not prorated: 2.00 + 3.00 x 6.00 = 20.00.
    rated = bill(engine, [det(1, "2026-09-10", "3.00")])
    assert lines(rated) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("18.00"))]


def test_a_later_sequence_back_to_the_same_value_is_one_line(engine: RatingEngine) -> None:
    # A reversal (sequence 3, effective Sep 13) puts back the 1.00 of sequence 2 from the
    # same day the 2.00 would have started: nothing changed inside the period.
    rated = bill(
        engine,
        [det(1, "2025-01-01", "1.00"), det(2, "2026-09-13", "2.00"), det(3, "2026-09-13", "1.00")],
    )
    assert lines(rated) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("6.00"))]


def test_a_tariff_version_and_an_eru_change_in_one_period_are_cut_at_both(book: TariffBook) -> None:
    # A (made-up) version at 7.00 per ERU from Sep 21 beside the ERU change of Sep 13:
    # Sep 1-12 1.00 ERU at 6.00: 1.00 x 12/30 x 6.00 = 2.40;
    # Sep 13-20 2.00 ERU at 6.00: 2.00 x 8/30 x 6.00 = 3.20;
    # Sep 21-30 2.00 ERU at 7.00: 2.00 x 10/30 x 7.00 = 4.666.. -> 4.67;
    # base 2.00 under both versions: one line (X-EFFECTIVE merges equal shares). Total 12.27.
    [v1] = book.versions(SW)
    v2 = v1.model_copy(
        update={
            "effective_from": date(2026, 9, 21),
            "eru_rate": v1.eru_rate.model_copy(update={"value": D("7.00")}),
        }
    )
    versions = {t: book.versions(t) for t in book.tenants}
    versions[SW] = [v1.model_copy(update={"effective_until": date(2026, 9, 21)}), v2]
    rated = bill(
        RatingEngine(TariffBook(versions)), [det(1, "2025-01-01", "1.00"), det(2, "2026-09-13", "2.00")]
    )
    assert lines(rated) == [
        ("PP-CWU-BASE", D("2.00")),
        ("PP-CWU-ERU", D("2.40")),
        ("PP-CWU-ERU", D("3.20")),
        ("PP-CWU-ERU", D("4.67")),
    ]
    assert rated.lines[3].details["derivation"] == "2.00 ERU x 10/30 days x $7.00"
    assert rated.lines[3].details["tariff_versions"] == (v2.version_id,)
    assert rated.total == D("12.27")


@settings(max_examples=60, deadline=None)
@given(
    cuts=st.lists(st.integers(min_value=2, max_value=30), min_size=1, max_size=3, unique=True),
    erus=st.lists(st.decimals(min_value=0, max_value=50, places=2), min_size=4, max_size=4),
)
def test_prorated_eru_lines_round_each_part_on_its_own_and_stay_within_a_half_cent_a_part(
    engine: RatingEngine, cuts: list[int], erus: list[D]
) -> None:
    # Determinations taking effect on random days of September: each ERU line is its ERU x
    # its days / 30 x 6.00 rounded half-up once (a share rounding to 0.00 is no line), the
    # lines never cover more than the 30 days, and their total is within half a cent per
    # part of the exact day-weighted charge.
    days = sorted(cuts)
    dets = [det(1, "2025-01-01", str(erus[0]))] + [
        det(n + 2, date(2026, 9, day).isoformat(), str(erus[n + 1])) for n, day in enumerate(days)
    ]
    eru_lines = [ln for ln in bill(engine, dets).lines if ln.rule_id == "PP-CWU-ERU"]
    for ln in eru_lines:
        share = ln.quantity * ln.rate * ln.details.get("days", 30) / 30
        assert ln.amount == share.quantize(D("0.01"), rounding=ROUND_HALF_UP) != 0
    assert sum(ln.details.get("days", 30) for ln in eru_lines) <= 30
    bounds = [1, *days, 31]
    parts = len(bounds) - 1
    exact = sum((erus[n] * 6 * D(bounds[n + 1] - bounds[n]) / 30 for n in range(parts)), D(0))
    assert abs(sum((ln.amount for ln in eru_lines), D(0)) - exact) <= D("0.005") * parts
