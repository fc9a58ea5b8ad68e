"""Invariants of the rating engine (hypothesis).

- the total is the sum of the (rounded) lines;
- no negative amount except PP-CWU-CREDIT;
- a credit never exceeds 30% of the ERU charge on the bill (the cap is a hard limit: a
  credit that rounds past it is held to the cap, rounded down to the cent);
- prorating over two tariff versions that are equal gives exactly the single-version bill.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_DOWN, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.domain.rating import Account, ParcelCharge, RatingEngine, RatingInput
from billing.domain.rating.periods import add_months
from common.tariffs import TariffBook

CENT = Decimal("0.01")
GALLONS = st.integers(min_value=0, max_value=5_000_000).map(Decimal)
CONC = st.one_of(st.none(), st.decimals(min_value=0, max_value=2000, places=1))
STARTS = st.dates(min_value=date(2015, 6, 1), max_value=date(2030, 12, 31))
STARTS_2025 = st.dates(min_value=date(2025, 1, 1), max_value=date(2030, 12, 31))


def strength_st():
    return st.fixed_dictionaries(
        {"bod": CONC, "tss": CONC, "phosphorus": CONC, "tkn": CONC, "fog": CONC}
    ).map(lambda d: {k: v for k, v in d.items() if v is not None})


GRAFTON_NORMAL = {"bod": 200, "tss": 250, "phosphorus": 6, "tkn": 20}


def normal_strength_st():
    """Grafton concentrations at or below GR-NORMAL (an unmetered account may not exceed it)."""
    return st.fixed_dictionaries(
        {
            p: st.one_of(st.none(), st.decimals(min_value=0, max_value=limit, places=1))
            for p, limit in GRAFTON_NORMAL.items()
        }
    ).map(lambda d: {k: v for k, v in d.items() if v is not None})


@st.composite
def pp_sewer(draw):
    start = draw(STARTS)
    residential = draw(st.booleans())
    zone = draw(st.sampled_from(["PP", "LM"]))
    meter = "5/8" if zone == "LM" else draw(st.sampled_from(["5/8", "3/4", "1", "1-1/2", "2", "3", "4", "6"]))
    return RatingInput(
        "pleasant-prairie-sewer",
        start,
        add_months(start, 1),
        Account("residential" if residential else "nonresidential", zone, meter, 1 if residential else 0),
        water_gallons=draw(GALLONS),
        winter_average_gallons=draw(st.one_of(st.none(), GALLONS)) if residential else None,
        strength={} if residential else draw(strength_st()),
        samples_collected=0 if residential else draw(st.integers(0, 5)),
    )


@st.composite
def stormwater(draw):
    start = draw(st.dates(min_value=date(2023, 1, 1), max_value=date(2030, 12, 31)))
    use = draw(st.sampled_from(["residential", "nonresidential", "agricultural", "right_of_way"]))
    eru = draw(st.decimals(min_value=0, max_value=500, places=2))
    credit = draw(st.decimals(min_value=0, max_value=30, places=2)) if use == "nonresidential" else Decimal(0)
    return RatingInput(
        "pleasant-prairie-stormwater", start, add_months(start, 1), parcel=ParcelCharge(use, eru, credit)
    )


@st.composite
def grafton(draw):
    start = draw(STARTS_2025)
    metered = draw(st.booleans())
    residential = draw(st.booleans())
    meter = draw(st.sampled_from(["5/8", "3/4", "1", "1-1/2", "2", "3", "4", "6"])) if metered else None
    return RatingInput(
        "grafton-sewer",
        start,
        add_months(start, 3),
        Account("residential" if residential else "nonresidential", None, meter, 1 if residential else 0),
        water_gallons=draw(GALLONS) if metered else None,
        estimated_gallons=Decimal(0) if metered else draw(GALLONS),
        strength=draw(strength_st()) if metered else draw(normal_strength_st()),
    )


@st.composite
def sullivan(draw):
    start = draw(STARTS_2025)
    residential = draw(st.booleans())
    # SU-REC: a nonresidential account's REC units are required (no default).
    units = st.decimals(min_value=0, max_value=50, places=1)
    rec_units = draw(st.one_of(st.none(), units) if residential else units)
    end = add_months(start, 3)
    return RatingInput(
        "sullivan-sewer",
        start,
        end,
        Account(
            "residential" if residential else "nonresidential",
            None,
            "5/8",
            draw(st.integers(1, 4)),
            rec_units,
        ),
        water_gallons=draw(GALLONS),
        strength=draw(strength_st()),
        # SU-BOD900: at most one violation a day of the period (89 to 92 days a quarter);
        # the engine refuses more.
        bod900_violation_days=draw(st.integers(0, (end - start).days)),
        total_recs=draw(st.decimals(min_value=1, max_value=100000, places=1)),
    )


ANY_INPUT = st.one_of(pp_sewer(), stormwater(), grafton(), sullivan())


@settings(max_examples=300, deadline=None)
@given(ANY_INPUT)
def test_total_is_the_sum_of_the_rounded_lines(engine, inp):
    bill = engine.rate(inp)
    assert bill.total == sum((line.amount for line in bill.lines), Decimal("0.00"))
    for line in bill.lines:
        assert line.amount == line.amount.quantize(Decimal("0.01"))
        assert line.amount != 0  # a zero amount produces no line


@settings(max_examples=300, deadline=None)
@given(ANY_INPUT)
def test_no_negative_amount_except_credits(engine, inp):
    for line in engine.rate(inp).lines:
        if line.rule_id == "PP-CWU-CREDIT":
            assert line.amount < 0
        else:
            assert line.amount > 0


@settings(max_examples=300, deadline=None)
@given(ANY_INPUT)
def test_a_clerk_s_multiplication_gives_each_amount(engine, inp):
    # Issue 8: quantity x rate is the amount, to the cent (half-up), unless the line says
    # otherwise and carries the factor: a prorated share ("prorated, 16 of 30 days",
    # factor "16/30") is quantity x rate x 16/30; a credit held to the cap is the ERU charge
    # x cap percent / 100, rounded down (all credit lines of the bill together).
    bill = engine.rate(inp)
    for line in bill.lines:
        details = line.details
        if "held_to_cap" in details:
            cap = (details["eru_charge"] * details["cap_percent"] / 100).quantize(CENT, rounding=ROUND_DOWN)
            assert details["held_to_cap"] == cap
            assert sum(ln.amount for ln in bill.lines if ln.rule_id == "PP-CWU-CREDIT") == -cap
            assert "held to the cap" in line.description
            continue
        product = line.quantity * line.rate
        if "factor" in details:
            days, period_days = (int(n) for n in details["factor"].split("/"))
            assert (days, period_days) == (details["days"], details["period_days"])
            assert f"prorated, {days} of {period_days} days" in line.description
            product = product * days / period_days
        # half a cent, plus the last digit of an unrounded per-REC rate (SU-REC)
        assert abs(product - line.amount) <= Decimal("0.005") + Decimal("1e-20")


@settings(max_examples=300, deadline=None)
@given(stormwater())
def test_a_credit_never_exceeds_thirty_percent_of_the_eru_charge(engine, inp):
    bill = engine.rate(inp)
    eru_charge = sum(line.amount for line in bill.lines if line.rule_id == "PP-CWU-ERU")
    credits = [line for line in bill.lines if line.rule_id == "PP-CWU-CREDIT"]
    for credit in credits:
        assert -credit.amount <= eru_charge * Decimal("0.30")
    if inp.parcel.use != "nonresidential":
        assert not credits


def _book_with_a_copy(book: TariffBook, tenant: str, switch: date) -> TariffBook:
    """The tenant's newest version, and an identical copy effective from ``switch``."""
    original = book.versions(tenant)[-1]
    first = original.model_copy(update={"effective_until": switch})
    second = original.model_copy(update={"effective_from": switch})
    return TariffBook({tenant: [first, second]})


def _same_bill_without_versions(a, b):
    strip = [(line.rule_id, line.quantity, line.rate, line.amount) for line in a.lines]
    return (
        strip == [(line.rule_id, line.quantity, line.rate, line.amount) for line in b.lines]
        and a.total == b.total
        and a.notes == b.notes
    )


@settings(max_examples=200, deadline=None)
@given(st.one_of(grafton(), sullivan(), stormwater(), pp_sewer()), st.integers(min_value=1, max_value=88))
def test_prorating_over_two_equal_versions_equals_the_single_version_bill(book, inp, offset):
    # Only inputs whose period is inside the newest version's range can be compared.
    newest = book.versions(inp.tenant)[-1]
    if inp.period_start < newest.effective_from:
        inp = RatingInput(
            inp.tenant,
            newest.effective_from,
            add_months(newest.effective_from, newest.billing_period_months),
            inp.account,
            inp.water_gallons,
            inp.winter_average_gallons,
            inp.estimated_gallons,
            inp.strength,
            inp.bod900_violation_days,
            inp.samples_collected,
            inp.total_recs,
            inp.parcel,
        )
    days = (inp.period_end - inp.period_start).days
    switch = inp.period_start + timedelta(days=1 + offset % (days - 1))
    assert inp.period_start < switch < inp.period_end
    single = RatingEngine(book).rate(inp)
    split_book = _book_with_a_copy(book, inp.tenant, switch)
    split_engine = RatingEngine(split_book)
    assert len(split_engine.plan(inp.tenant, inp.period_start, inp.period_end).segments) == 2
    prorated = split_engine.rate(inp)
    assert _same_bill_without_versions(single, prorated)
