"""Tariffs as data: validation at load (X-EFFECTIVE, X-MONEY) and version lookup."""

from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import (
    PPSewerTariff,
    TariffError,
    TariffNotInForce,
    UnknownTenant,
)

SHIPPED = default_tariffs_dir()


@pytest.fixture
def tariffs_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "tariffs"
    shutil.copytree(SHIPPED, dest)
    return dest


def _edit(path: Path, mutate) -> None:
    doc = yaml.safe_load(path.read_text())
    mutate(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_shipped_tariffs_load_for_all_four_tenants() -> None:
    book = load_tariff_book(SHIPPED)
    assert set(book.tenants) == {
        "pleasant-prairie-sewer",
        "pleasant-prairie-stormwater",
        "grafton-sewer",
        "sullivan-sewer",
    }
    assert [t.version_id for t in book.versions("pleasant-prairie-sewer")] == [
        "pleasant-prairie-sewer@2015-06-01",
        "pleasant-prairie-sewer@2019-10-01",
    ]


def test_published_pleasant_prairie_2019_rates_are_exact_decimals() -> None:
    t = load_tariff_book(SHIPPED).in_force("pleasant-prairie-sewer", date(2026, 7, 1))
    assert isinstance(t, PPSewerTariff)
    assert t.service_charge.value["PP"]["6"] == Decimal("288.50")
    assert t.service_charge.value["LM"] == {"5/8": Decimal("17.63")}  # other LM sizes unpublished
    assert t.volume_rate_per_kgal.value == {"PP": Decimal("4.49"), "LM": Decimal("5.61")}
    assert t.service_charge.example is False


def test_values_marked_example_in_tariffs_md_are_flagged_example() -> None:
    book = load_tariff_book(SHIPPED)
    grafton = book.in_force("grafton-sewer", date(2025, 1, 1))
    assert grafton.service_charge.example is True  # all Grafton amounts are examples
    assert grafton.late_charge.example is False  # 3% / 0.50 / 20 days is the ordinance's own
    storm = book.in_force("pleasant-prairie-stormwater", date(2026, 1, 1))
    assert storm.eru_rate.example is False and storm.eru_rate.value == Decimal("6.00")
    assert storm.base_charge.example is True and storm.pervious_cn.example is True
    sullivan = book.in_force("sullivan-sewer", date(2025, 6, 1))
    assert sullivan.use_rate_per_kgal.example is True
    assert sullivan.bod900_penalty_per_day.example is False
    pp = book.in_force("pleasant-prairie-sewer", date(2020, 1, 1))
    assert pp.sample_cost_per_sample.example is True and pp.winter_months.example is True


def test_in_force_picks_the_version_by_date() -> None:
    book = load_tariff_book(SHIPPED)
    assert book.in_force("pleasant-prairie-sewer", date(2019, 9, 30)).version_id.endswith("2015-06-01")
    assert book.in_force("pleasant-prairie-sewer", date(2019, 10, 1)).version_id.endswith("2019-10-01")
    with pytest.raises(TariffNotInForce) as exc:
        book.in_force("pleasant-prairie-sewer", date(2015, 5, 31))
    assert exc.value.field == "period.start"
    with pytest.raises(UnknownTenant):
        book.in_force("kenosha-sewer", date(2020, 1, 1))


def test_split_divides_a_period_that_spans_two_versions_by_days() -> None:
    book = load_tariff_book(SHIPPED)
    spans = book.split("pleasant-prairie-sewer", date(2019, 9, 15), date(2019, 10, 15))
    assert [(s.tariff.version_id, s.start, s.end, s.days) for s in spans] == [
        ("pleasant-prairie-sewer@2015-06-01", date(2019, 9, 15), date(2019, 10, 1), 16),
        ("pleasant-prairie-sewer@2019-10-01", date(2019, 10, 1), date(2019, 10, 15), 14),
    ]
    assert sum(s.days for s in spans) == 30
    single = book.split("grafton-sewer", date(2026, 7, 1), date(2026, 10, 1))
    assert len(single) == 1 and single[0].fraction == 1


def test_split_refuses_an_end_before_the_start() -> None:
    with pytest.raises(TariffError) as exc:
        load_tariff_book(SHIPPED).split("grafton-sewer", date(2026, 10, 1), date(2026, 7, 1))
    assert exc.value.field == "period.end"


def test_a_gap_between_versions_fails_naming_file_and_field(tariffs_copy: Path) -> None:
    old = tariffs_copy / "pleasant-prairie-sewer" / "2015-06-01.yaml"
    _edit(old, lambda d: d.update(effective_until="2019-09-01"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.file == str(old)
    assert exc.value.field == "effective_until"
    assert "contiguous" in str(exc.value) and "2019-10-01" in str(exc.value)


def test_an_open_ended_old_version_is_a_gap_too(tariffs_copy: Path) -> None:
    old = tariffs_copy / "pleasant-prairie-sewer" / "2015-06-01.yaml"
    _edit(old, lambda d: d.pop("effective_until"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "effective_until"


def test_a_float_amount_fails_naming_file_and_field(tariffs_copy: Path) -> None:
    path = tariffs_copy / "grafton-sewer" / "2025-01-01.yaml"
    text = path.read_text().replace('"1-1/2": "120.00"', '"1-1/2": 120.00')
    path.write_text(text)
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.file == str(path)
    assert exc.value.field == "service_charge.value.1-1/2"
    assert "decimal strings" in str(exc.value) and "float" in str(exc.value)


def test_a_missing_field_fails_naming_file_and_field(tariffs_copy: Path) -> None:
    path = tariffs_copy / "sullivan-sewer" / "2025-01-01.yaml"
    _edit(path, lambda d: d.pop("use_rate_per_kgal"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.file == str(path)
    assert exc.value.field == "use_rate_per_kgal"
    assert "missing" in str(exc.value)


def test_a_setting_without_its_example_flag_fails(tariffs_copy: Path) -> None:
    path = tariffs_copy / "pleasant-prairie-stormwater" / "2023-01-01.yaml"
    _edit(path, lambda d: d["base_charge"].pop("example"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "base_charge.example"


def test_an_unknown_field_is_refused_not_ignored(tariffs_copy: Path) -> None:
    path = tariffs_copy / "grafton-sewer" / "2025-01-01.yaml"
    _edit(path, lambda d: d.update(volume_rate="6.50"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "volume_rate"


def test_file_name_must_be_its_effective_date(tariffs_copy: Path) -> None:
    src = tariffs_copy / "grafton-sewer" / "2025-01-01.yaml"
    src.rename(src.with_name("2025-02-01.yaml"))
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "effective_from"


def test_folder_must_match_tenant(tariffs_copy: Path) -> None:
    (tariffs_copy / "grafton-sewer").rename(tariffs_copy / "grafton")
    with pytest.raises(TariffError) as exc:
        load_tariff_book(tariffs_copy)
    assert exc.value.field == "tenant"
