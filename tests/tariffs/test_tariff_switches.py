"""Rules that are interpretations are tariff switches (RULES.md PP-SEW-WINTER, SU-SURCHARGE;
issue 8), and SU-REC has no nonresidential default. Both positions of each switch, from the
tariff file through the rating engine."""

from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from billing.domain.rating import Account, RatingEngine, RatingInput
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import PPSewerTariff, SullivanTariff, TariffError

SHIPPED = default_tariffs_dir()
PP_FILES = ("2015-06-01.yaml", "2019-10-01.yaml")


@pytest.fixture
def tariffs_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "tariffs"
    shutil.copytree(SHIPPED, dest)
    return dest


def _edit(path: Path, mutate) -> None:
    doc = yaml.safe_load(path.read_text())
    mutate(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _switch(doc: dict, name: str, value: object) -> None:
    doc[name]["value"] = value


def test_shipped_tariffs_have_both_switches_on() -> None:
    book = load_tariff_book(SHIPPED)
    for pp in book.versions("pleasant-prairie-sewer"):
        assert isinstance(pp, PPSewerTariff)
        assert pp.winter_average_applies.value is True
        assert pp.winter_average_applies.rule == "PP-SEW-WINTER"
    (sullivan,) = book.versions("sullivan-sewer")
    assert isinstance(sullivan, SullivanTariff)
    assert sullivan.surcharge_applies.value is True
    assert sullivan.surcharge_applies.rule == "SU-SURCHARGE"


@pytest.mark.parametrize("applies", [True, False])
def test_winter_average_switch_from_the_file(tariffs_copy: Path, applies: bool) -> None:
    # Residential 5/8" PP, 6,000 gal metered, winter average 4,000 gal:
    # on:  min(6,000, 4,000) = 4 kgal x 4.49 = 17.96;  off: 6 kgal x 4.49 = 26.94.
    for name in PP_FILES:
        _edit(
            tariffs_copy / "pleasant-prairie-sewer" / name,
            lambda d: _switch(d, "winter_average_applies", applies),
        )
    engine = RatingEngine(load_tariff_book(tariffs_copy))
    bill = engine.rate(
        RatingInput(
            "pleasant-prairie-sewer",
            date(2026, 7, 1),
            date(2026, 8, 1),
            Account("residential", "PP", "5/8"),
            water_gallons=Decimal(6000),
            winter_average_gallons=Decimal(4000),
        )
    )
    assert bill.lines[1].amount == (Decimal("17.96") if applies else Decimal("26.94"))
    assert [n.rule_id for n in bill.notes] == ([] if applies else ["PP-SEW-WINTER"])


@pytest.mark.parametrize("applies", [True, False])
def test_sullivan_surcharge_switch_from_the_file(tariffs_copy: Path, applies: bool) -> None:
    # 100,000 gal at BOD 950: (950 - 400) x 0.1 x 8.34 = 458.7 lb x 0.30 = 137.61 when on.
    _edit(
        tariffs_copy / "sullivan-sewer" / "2025-01-01.yaml",
        lambda d: _switch(d, "surcharge_applies", applies),
    )
    engine = RatingEngine(load_tariff_book(tariffs_copy))
    bill = engine.rate(
        RatingInput(
            "sullivan-sewer",
            date(2026, 7, 1),
            date(2026, 10, 1),
            Account("nonresidential", None, "2", 0, Decimal("1.0")),
            water_gallons=Decimal(100000),
            strength={"bod": Decimal(950)},
            total_recs=Decimal(1200),
        )
    )
    surcharges = [line.amount for line in bill.lines if line.rule_id == "SU-SURCHARGE"]
    assert surcharges == ([Decimal("137.61")] if applies else [])
    assert [n.rule_id for n in bill.notes] == ([] if applies else ["SU-SURCHARGE"])


@pytest.mark.parametrize(
    ("tenant", "name", "switch"),
    [
        ("pleasant-prairie-sewer", "2019-10-01.yaml", "winter_average_applies"),
        ("sullivan-sewer", "2025-01-01.yaml", "surcharge_applies"),
    ],
)
def test_a_switch_is_required_and_must_be_a_yaml_boolean(tariffs_copy: Path, tenant, name, switch) -> None:
    path = tariffs_copy / tenant / name
    original = path.read_text()
    _edit(path, lambda d: _switch(d, switch, "no"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == f"{switch}.value"
    path.write_text(original)
    _edit(path, lambda d: d.pop(switch))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == switch


def test_sullivan_has_no_nonresidential_rec_default(tariffs_copy: Path) -> None:
    # SU-REC: nonresidential REC units are set per account; a default in the file is refused.
    path = tariffs_copy / "sullivan-sewer" / "2025-01-01.yaml"
    _edit(
        path,
        lambda d: d.update(
            rec_units_nonresidential_default={"rule": "SU-REC", "example": True, "value": "1.0"}
        ),
    )
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "rec_units_nonresidential_default"
